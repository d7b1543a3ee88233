import { REAL_MANAGER_BRAND } from '@zone-api/sandbox';
import { type OpenApiDoc, type Operation, operations } from '@zone-api/spec/model';
import fc from 'fast-check';
import { type Json, objectOf, PORT_SLOTS, ruleList, TARGET_PORT, typesOf, UNKNOWN_PORT, type Valued, v } from './values.js';

// What the differential suite plays: sequences of manager calls and of requests through the ports
// they create, generated from the operation model (every operation the bundle lists, its parameters
// and its request body schema), valid, at the boundaries and broken one field at a time. Each value
// carries the input classes it belongs to (`body.proxy.ssl:string-for-boolean`), which name a
// divergence in a report and in packages/sandbox/parity.yaml.

// The ports and stand-ins a step names (values.ts), for the player.
export { PORT_SLOTS, TARGET_PORT, WWW_PORT } from './values.js';

/** A body as sent: its media type and text (stand-ins still in it). */
export interface StepBody {
  encoding: 'json' | 'form' | 'text' | 'bad-json';
  value: Json;
}

export interface CallStep {
  kind: 'call';
  operationId: string;
  method: string;
  /** The OpenAPI path with its parameters filled in. */
  path: string;
  query: Array<[string, string]>;
  body?: StepBody;
  /** Request headers besides the body's Content-Type. */
  headers?: Record<string, string>;
  /** The input classes of this call, e.g. `path.port:unknown`, `body.proxy.port:zero`, `query:limit+sort`. */
  classes: string[];
}

export interface TrafficStep {
  kind: 'traffic';
  /** The manager port the request goes through. */
  port: number;
  /** The path asked of the loopback target; `/status/N` answers N. */
  path: string;
  /** The request's method (GET when absent), headers and body. */
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  /** `absolute` (default): an absolute-URI request to the port; `connect`: a CONNECT tunnel, then the request through it. */
  via?: 'absolute' | 'connect';
  classes: string[];
}

export type Step = CallStep | TrafficStep;

/**
 * Operations the generator leaves out, and why. Everything else in the bundle is generated.
 * (The operations that end or replace the program are found by their tag and `x-changes-state`.)
 */
export const NOT_GENERATED: Record<string, string> = {};

/**
 * Drawn only beyond the spec (`beyond`): `gen_token`, which the real manager allows 5 times an hour per
 * process (a run spends it in its first sequences, then answers 429).
 */
const BEYOND_ONLY = new Set(['getNewToken']);

/** Whether the generator plays an operation: not one that stops or replaces the program (tag Lifecycle, changes state). */
export function generated(o: Operation): boolean {
  if (o.operationId in NOT_GENERATED) return false;
  return !(o.tags.includes('Lifecycle') && o.facts.changesState);
}

/** A body for an operation's JSON schema: mostly JSON, also form and text bodies, bad JSON and none. */
type Bodied = { body?: StepBody; classes: string[] };
function bodyOf(doc: OpenApiDoc, o: Operation): fc.Arbitrary<Bodied> {
  const schema = o.requestBody?.content['application/json']?.schema;
  const value = objectOf(doc, schema ?? {}, 0, 'body');
  return fc.oneof<fc.WeightedArbitrary<Bodied>[]>(
    { weight: 12, arbitrary: value.map((x) => ({ body: { encoding: 'json' as const, value: x.value }, classes: x.classes })) },
    {
      weight: 1,
      arbitrary: value.map((x) => ({ body: { encoding: 'form' as const, value: x.value }, classes: ['form-body', ...x.classes] })),
    },
    {
      weight: 1,
      arbitrary: value.map((x) => ({ body: { encoding: 'text' as const, value: x.value }, classes: ['text-body', ...x.classes] })),
    },
    { weight: 1, arbitrary: fc.constant({ body: { encoding: 'bad-json' as const, value: '{"proxy": {' }, classes: ['bad-json'] }) },
    { weight: 1, arbitrary: fc.constant({ classes: ['no-body'] }) },
  );
}

/** Query values by the parameter's schema: filters alone and together, patterns, regular expressions, wrong types. */
function queryOf(doc: OpenApiDoc, o: Operation): fc.Arbitrary<{ query: Array<[string, string]>; classes: string[] }> {
  const params = o.parameters.filter((p) => p.in === 'query');
  if (!params.length) return fc.constant({ query: [], classes: [] });
  const one = (p: Operation['parameters'][number]) => {
    const s = p.schema ?? {};
    const type = typesOf(doc, s)[0];
    let values: fc.Arbitrary<Valued>;
    if (type === 'integer' && /port/.test(p.name))
      values = fc.constantFrom(v('24000'), v('24001'), v('24002'), v('1000'), v('abc', 'not-a-number'));
    else if (type === 'integer')
      values = fc.constantFrom(v('0', 'zero'), v('1'), v('2'), v('5'), v('-1', 'negative'), v('abc', 'not-a-number'));
    else if (type === 'boolean') values = fc.constantFrom(v('true'), v('false'), v('1'), v('0'), v('', 'empty'), v('x', 'not-a-boolean'));
    else if (p.name === 'search')
      values = fc.constantFrom(v('t'), v('/status/'), v('GET'), v('[', 'invalid-regex'), v('(a+)+$', 'regex'), v('^http', 'regex'));
    else if (p.name === 'status_code') values = fc.constantFrom(v('200'), v('404'), v('2**'), v('5**'), v('x', 'not-a-status'));
    else if (p.name === 'sort')
      values = fc.constantFrom(v('uuid'), v('status_code'), v('url'), v('timestamp'), v('no_such_field', 'unknown-field'));
    else if (p.name === 'zone') values = fc.constantFrom(v('static_zone'), v('res_zone'), v('no_such_zone', 'unknown-zone'));
    else {
      const ex = [...(s.examples ?? []), ...(Array.isArray(s.enum) ? s.enum : [])].map(String);
      values = fc.constantFrom(...(ex.length ? ex : ['x1']).map((x) => v(x)));
    }
    return values.map((x) => ({ name: p.name, value: String(x.value), classes: x.classes.map((c) => `query.${p.name}:${c}`) }));
  };
  return fc.subarray(params, { maxLength: Math.min(4, params.length) }).chain((chosen) =>
    (chosen.length ? fc.tuple(...chosen.map(one)) : fc.constant([])).map((qs) => ({
      query: qs.map((q) => [q.name, q.value] as [string, string]),
      classes: [`query:${qs.map((q) => q.name).join('+') || 'none'}`, ...qs.flatMap((q) => q.classes)],
    })),
  );
}

function pathPort(): fc.Arbitrary<Valued> {
  return fc.oneof(
    { weight: 10, arbitrary: fc.constantFrom(...PORT_SLOTS).map((p) => v(p)) },
    { weight: 1, arbitrary: fc.constant(v(UNKNOWN_PORT, 'path.port:unknown')) },
    { weight: 1, arbitrary: fc.constantFrom('abc', '0').map((p) => v(p, 'path.port:not-a-port')) },
    { weight: 1, arbitrary: fc.constantFrom(...PORT_SLOTS).map((p) => v(`0${p}`, 'path.port:leading-zero')) },
  );
}

/**
 * One call of an operation, with generated path, query and body. A path whose `pm` stands for the
 * program's brand (`x-brand-prefix`) is sent with `brand` (the real manager serves `/api/lpm_users`).
 */
export function callOf(doc: OpenApiDoc, o: Operation, brand = REAL_MANAGER_BRAND): fc.Arbitrary<CallStep> {
  const prefix = o.facts.brandPrefix;
  const path = prefix ? o.path.replace(`/${prefix}_`, `/${brand}_`) : o.path;
  const hasPort = o.parameters.some((p) => p.in === 'path' && p.name === 'port');
  return fc
    .record({
      port: hasPort ? pathPort() : fc.constant(v(undefined)),
      q: queryOf(doc, o),
      b: o.requestBody ? bodyOf(doc, o) : fc.constant<Bodied>({ classes: [] }),
    })
    .map(({ port, q, b }) => {
      const classes = [...port.classes, ...q.classes, ...b.classes];
      return {
        kind: 'call' as const,
        operationId: o.operationId,
        method: o.method.toUpperCase(),
        path: path.replace('{port}', String(port.value)),
        query: q.query,
        ...(b.body ? { body: b.body } : {}),
        classes: classes.length ? classes : ['valid'],
      };
    });
}

/** Media types the target answers `/type/…` with: one of each kind the manager's log names, and two it reads in an order. */
const MEDIA_TYPES = [
  'application/json',
  'text/html; charset=utf-8',
  'application/javascript',
  'text/css',
  'image/png',
  'video/mp4',
  'font/woff2',
  'application/octet-stream',
  'application/vnd.api+json; profile=html',
  'image/svg+xml',
];

/**
 * Per-request control headers the real manager reads on a request through a port (lib/server.js,
 * lib/mixins/server_handle.js: its `x-lpm-*` family): a session of the client's own, a country (one
 * the network has peers in and one it has none), a fake answer (which fires the port's rules), a
 * reserved session, keep-alive, a user, an IP, a city or ASN. `x-lpm-sleep` and short `x-lpm-timeout`s
 * are left out: they only cost time.
 */
const LPM_HEADERS: Array<fc.Arbitrary<Valued>> = [
  fc.constantFrom('mysession', 'a_b-1', '').map((x) => v({ 'x-lpm-session': x }, 'header:x-lpm-session')),
  fc.constantFrom('us', 'fr', 'zz').map((x) => v({ 'x-lpm-country': x }, 'header:x-lpm-country')),
  fc.constant(v({ 'x-lpm-fake': 'true' }, 'header:x-lpm-fake')),
  fc.constantFrom('404', '503').map((x) => v({ 'x-lpm-fake': 'true', 'x-lpm-fake-status': x }, 'header:x-lpm-fake-status')),
  fc.constant(v({ 'x-lpm-fake': 'true', 'x-lpm-fake-data': '2000' }, 'header:x-lpm-fake-data')),
  fc.constant(v({ 'x-lpm-reserved': 'true' }, 'header:x-lpm-reserved')),
  fc.constant(v({ 'x-lpm-keep-alive': '60000' }, 'header:x-lpm-keep-alive')),
  fc.constant(v({ 'x-lpm-user': 'someone@example.com' }, 'header:x-lpm-user')),
  fc.constant(v({ 'x-lpm-ip': '10.1.1.1' }, 'header:x-lpm-ip')),
  fc.constantFrom<Json>({ 'x-lpm-city': 'paris' }, { 'x-lpm-asn': '7922' }).map((x) => v(x, 'header:x-lpm-geo')),
];
/** Headers any client sends, in the case it writes them. */
const ORDINARY_HEADERS: Array<fc.Arbitrary<Valued>> = [
  fc.constant(v({ 'User-Agent': 'curl/8.5.0', Accept: '*/*' }, 'header:ordinary')),
  fc.constant(v({ 'X-Custom-Thing': 'one', cookie: 'a=1; b=2' }, 'header:arbitrary')),
  fc.constant(v({ 'Accept-Encoding': 'gzip, deflate' }, 'header:accept-encoding')),
  fc.constant(v({ Connection: 'close' }, 'header:connection-close')),
  fc.constant(v({ 'Proxy-Authorization': `Basic ${Buffer.from('user:pass').toString('base64')}` }, 'header:proxy-authorization')),
];

/**
 * A request through a port to the loopback target: plain, one the target answers with an error status,
 * or with a media type; now and then another method (with a body), per-request `x-lpm-*` headers or
 * ordinary ones, or through a CONNECT tunnel.
 */
export function trafficStep(): fc.Arbitrary<TrafficStep> {
  return fc
    .record({
      port: fc.constantFrom(...PORT_SLOTS),
      path: fc.oneof(
        { weight: 3, arbitrary: fc.integer({ min: 1, max: 99 }).map((n) => `/t/${n}`) },
        { weight: 1, arbitrary: fc.constantFrom(404, 500, 403).map((n) => `/status/${n}`) },
        { weight: 1, arbitrary: fc.constantFrom(...MEDIA_TYPES).map((t) => `/type/${encodeURIComponent(t)}`) },
      ),
      method: fc.oneof(
        { weight: 6, arbitrary: fc.constant(v(undefined)) },
        { weight: 1, arbitrary: fc.constantFrom('POST', 'PUT').map((m) => v(m, `method:${m}`)) },
        { weight: 1, arbitrary: fc.constantFrom('HEAD', 'DELETE').map((m) => v(m, `method:${m}`)) },
      ),
      headers: fc.oneof(
        { weight: 4, arbitrary: fc.constant(v(undefined)) },
        { weight: 2, arbitrary: fc.oneof(...LPM_HEADERS) },
        { weight: 1, arbitrary: fc.oneof(...ORDINARY_HEADERS) },
      ),
      via: fc.oneof(
        { weight: 5, arbitrary: fc.constant(v(undefined)) },
        { weight: 1, arbitrary: fc.constant(v('connect', 'via:connect')) },
      ),
    })
    .map(({ port, path, method, headers, via }) => ({
      kind: 'traffic' as const,
      port,
      path,
      ...(method.value ? { method: method.value } : {}),
      ...(method.value === 'POST' || method.value === 'PUT' ? { body: '{"sent":"by the client"}' } : {}),
      ...(headers.value ? { headers: headers.value } : {}),
      ...(via.value ? { via: via.value } : {}),
      classes: [
        path.startsWith('/status/') ? 'target-error' : path.startsWith('/type/') ? 'media-type' : 'plain',
        ...method.classes,
        ...headers.classes,
        ...via.classes,
      ],
    }));
}

/** A route the real manager serves, read from its own route table (testkit/real-manager `realManagerRoutes`). */
export interface Route {
  method: string;
  /** e.g. `/api/proxies/:port?`, `/api/v2/gen_token`. */
  path: string;
}

/**
 * Routes of the real manager's table the generator leaves out, by the path after `/api` or `/api/v2`,
 * and why: each stops, replaces or logs out the program, or reaches beyond the machine's loopback.
 */
export const NOT_DRAWN_ROUTES: Record<string, string> = {
  '/shutdown': 'stops the program',
  '/restart': 'restarts the program',
  '/upgrade': 'replaces the program (and never answers offline)',
  '/downgrade': 'replaces the program',
  '/logout': 'logs the program out of its account: every later call answers otherwise',
  '/kill_workers': 'stops its workers',
  '/run_workers': 'starts workers the suite does not run (--no-cluster)',
  '/browser/:port': 'opens a browser',
  '/config': 'POST replaces the whole configuration and restarts the ports',
  '/creds_user': 'logs in to the provider',
  '/verify_two_step': 'logs in to the provider',
  '/cloud_auth': 'logs in to the provider',
  '/cloud_unauth': 'logs out of the provider',
  '/api_url': "changes the provider's address it keeps",
  '/pmgr_domain': "changes the provider's address it keeps",
  '/gen_cert': 'makes a new certificate authority (slow, rate-limited to 5 an hour)',
  '/emit_ws': "sends to the web interface's sockets",
  '/report_bug': 'sends a report to the provider',
  '/test_logs_remote': 'sends logs to a remote address',
  '/logs_resend': 'sends logs to a remote address',
};

const routeKey = (path: string) => path.replace(/^\/api(\/v2)?/, '');

/**
 * The real manager's routes that no operation of the spec describes (method and path, a `:param` for a
 * `{param}`, the brand's prefix as the real manager writes it), less NOT_DRAWN_ROUTES. A route with an
 * optional `:port?` is drawn with the port (without it, it is usually an operation of the spec).
 */
export function routesBeyondSpec(doc: OpenApiDoc, routes: Route[], brand = REAL_MANAGER_BRAND): Route[] {
  const inSpec = new Set(
    operations(doc).map((o) => {
      const prefix = o.facts.brandPrefix;
      const path = (prefix ? o.path.replace(`/${prefix}_`, `/${brand}_`) : o.path).replace(/\{(\w+)\}/g, ':$1');
      return `${o.method.toUpperCase()} ${path}`;
    }),
  );
  const seen = new Set<string>();
  return routes.filter((r) => {
    const path = r.path.replace(/:(\w+)\?/g, ':$1');
    const key = `${r.method} ${path}`;
    if (inSpec.has(key) || seen.has(key) || routeKey(r.path) in NOT_DRAWN_ROUTES || routeKey(path) in NOT_DRAWN_ROUTES) return false;
    seen.add(key);
    return true;
  });
}

/** A call of a route beyond the spec: its ports from the slots, no body, `{}`, or a body naming a port or the target. */
function routeCall(route: Route): fc.Arbitrary<CallStep> {
  const operation = `${route.method} ${route.path}`;
  return fc
    .record({
      port: pathPort(),
      body: fc.constantFrom<Json>(
        undefined,
        {},
        { port: PORT_SLOTS[0] },
        { url: `http://127.0.0.1:${TARGET_PORT}/tested`, headers: [] },
        { ip: '10.1.1.1', ports: [PORT_SLOTS[0]] },
      ),
    })
    .map(({ port, body }) => ({
      kind: 'call' as const,
      operationId: operation,
      method: route.method,
      path: route.path.replace(/:port\??/, String(port.value)).replace(/:(\w+)\??/g, 'x1'),
      query: [],
      ...(body === undefined || route.method === 'GET' ? {} : { body: { encoding: 'json' as const, value: body } }),
      classes: ['route:beyond-spec', ...port.classes],
    }));
}

/**
 * A spec operation's call as clients also write it: with a trailing slash, in upper case, or `HEAD` for
 * a `GET` (Express serves each: non-strict and case-insensitive routing, HEAD by GET).
 */
function variantOf(call: fc.Arbitrary<CallStep>): fc.Arbitrary<CallStep> {
  return fc.tuple(call, fc.constantFrom('trailing-slash', 'upper-case', 'head')).map(([c, variant]) => {
    if (variant === 'head' && c.method !== 'GET') return c;
    return {
      ...c,
      ...(variant === 'trailing-slash' ? { path: `${c.path}/` } : {}),
      ...(variant === 'upper-case' ? { path: c.path.toUpperCase() } : {}),
      ...(variant === 'head' ? { method: 'HEAD' } : {}),
      classes: [...c.classes, `variant:${variant}`],
    };
  });
}

/** The operations a sequence is drawn from. */
export function generatedOperations(doc: OpenApiDoc): Operation[] {
  return operations(doc).filter(generated);
}

/**
 * A port created with rules (values.ts) and requests through it, whose answers (a status, a body, a
 * URL the rules' triggers test) fire some of them and not others. When a rule sends the request on
 * to another port (`retry_port`), that port is created first and the rule names it (or the ruled port
 * itself). The create is drawn from the operation that creates ports, with no other field.
 */
function ruledTraffic(create: Operation, brand?: string): fc.Arbitrary<Step[]> {
  const prefix = create.facts.brandPrefix;
  const path = prefix ? create.path.replace(`/${prefix}_`, `/${brand ?? REAL_MANAGER_BRAND}_`) : create.path;
  const createOf = (proxy: Json, classes: string[]): CallStep => ({
    kind: 'call',
    operationId: create.operationId,
    method: create.method.toUpperCase(),
    path,
    query: [],
    body: { encoding: 'json', value: { proxy } },
    classes: classes.length ? classes : ['valid'],
  });
  return fc
    .record({
      ports: fc.shuffledSubarray([...PORT_SLOTS], { minLength: 2, maxLength: 2 }),
      rules: ruleList(),
      traffic: fc.array(trafficStep(), { minLength: 1, maxLength: 3 }),
    })
    .map(({ ports: [at, other], rules, traffic }) => {
      const onward = (to: Json) => (Number(to) === at ? to : typeof to === 'string' ? String(other) : other);
      const list = (rules.value as Json[]).map((r: Json) =>
        r?.action?.retry_port === undefined ? r : { ...r, action: { ...r.action, retry_port: onward(r.action.retry_port) } },
      );
      const routes = list.some((r: Json) => r?.action?.retry_port !== undefined && Number(r.action.retry_port) !== at);
      return [
        ...(routes ? [createOf({ port: other }, [])] : []),
        createOf({ port: at, rules: list }, ['scenario:ruled-traffic', ...rules.classes.map((c) => `body.proxy:rules:${c}`)]),
        ...traffic.map((t) => ({ ...t, port: at as number })),
      ];
    });
}

/**
 * Sequences of calls and traffic. Creating a port is drawn more often than any other call, so that
 * the calls on ports and the traffic meet ports that exist; one sequence in two starts with a port
 * that has rules and traffic through it (ruledTraffic), then goes on as the others.
 */
export function sequences(doc: OpenApiDoc, maxSteps: number, brand?: string, routes: Route[] = [], beyond = false): fc.Arbitrary<Step[]> {
  const ops = generatedOperations(doc).filter((o) => beyond || !BEYOND_ONLY.has(o.operationId));
  // The operations that create what other paths address by `{port}` (POST /api/proxies).
  const creates = (o: Operation) => o.method === 'post' && ops.some((p) => p.path.startsWith(`${o.path}/{port}`));
  const others = beyond ? routesBeyondSpec(doc, routes, brand) : [];
  const step = fc.oneof(
    ...ops.map((o) => ({ weight: creates(o) ? Math.ceil(ops.length / 3) : 1, arbitrary: callOf(doc, o, brand) as fc.Arbitrary<Step> })),
    { weight: Math.ceil(ops.length / 4), arbitrary: trafficStep() as fc.Arbitrary<Step> },
    // Beyond the spec: the real manager's other routes, and the spec's calls as written otherwise.
    ...(others.length ? [{ weight: Math.ceil(ops.length / 8), arbitrary: fc.oneof(...others.map(routeCall)) as fc.Arbitrary<Step> }] : []),
    ...(beyond
      ? [
          {
            weight: Math.ceil(ops.length / 8),
            arbitrary: variantOf(fc.oneof(...ops.map((o) => callOf(doc, o, brand)))) as fc.Arbitrary<Step>,
          },
        ]
      : []),
  );
  const drawn = fc.array(step, { minLength: 1, maxLength: maxSteps });
  const create = ops.find(creates);
  if (!create) return drawn;
  const ruled = fc
    .tuple(ruledTraffic(create, brand), fc.array(step, { maxLength: maxSteps }))
    .map(([first, then]) => [...first, ...then].slice(0, Math.max(maxSteps, first.length)));
  return fc.oneof({ weight: 1, arbitrary: drawn }, { weight: 1, arbitrary: ruled });
}
