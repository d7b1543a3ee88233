import { deref, type OpenApiDoc, type Operation, operations } from '@zone-api/spec/model';
import fc from 'fast-check';

// What the differential suite plays: sequences of manager calls and of requests through the ports
// they create, generated from the operation model (every operation the bundle lists, its parameters
// and its request body schema), valid, at the boundaries and broken one field at a time. Each value
// carries the input classes it belongs to (`body.proxy.ssl:string-for-boolean`), which name a
// divergence in a report and in packages/sandbox/parity.yaml.

// biome-ignore lint/suspicious/noExplicitAny: schemas and generated bodies are walked generically
type Json = any;

/** Ports a sequence creates and uses: the real manager's first port and the next two. */
export const PORT_SLOTS = [24000, 24001, 24002] as const;
/** A port no sequence creates. */
export const UNKNOWN_PORT = 25999;
/**
 * Stand-ins resolved when a step is played, per target: the manager's own API port (in use by its UI)
 * and the loopback target's port (in use by another program). In a JSON body they become numbers.
 */
export const WWW_PORT = '$WWW_PORT';
export const TARGET_PORT = '$TARGET_PORT';

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
  /** The input classes of this call, e.g. `path.port:unknown`, `body.proxy.port:zero`, `query:limit+sort`. */
  classes: string[];
}

export interface TrafficStep {
  kind: 'traffic';
  /** The manager port the request goes through. */
  port: number;
  /** The path asked of the loopback target; `/status/N` answers N. */
  path: string;
  classes: string[];
}

export type Step = CallStep | TrafficStep;

/**
 * Operations the generator leaves out, and why. Everything else in the bundle is generated.
 * (The operations that end or replace the program are found by their tag and `x-changes-state`.)
 */
export const NOT_GENERATED: Record<string, string> = {
  getNewToken:
    'the real manager allows 5 calls an hour per process, so a run would spend it in the first sequences and every later answer would be 429 on one side only; the scenario suite covers it',
};

/** Whether the generator plays an operation: not one that stops or replaces the program (tag Lifecycle, changes state). */
export function generated(o: Operation): boolean {
  if (o.operationId in NOT_GENERATED) return false;
  return !(o.tags.includes('Lifecycle') && o.facts.changesState);
}

interface Valued {
  value: Json;
  classes: string[];
}
const v = (value: Json, ...classes: string[]): Valued => ({ value, classes });

/** The properties of an object schema, through `allOf` (later parts win), `$ref`s followed. */
function propertiesOf(doc: OpenApiDoc, schema: Json): { props: Record<string, Json>; required: string[] } {
  const s = deref(doc, schema).node ?? {};
  const props: Record<string, Json> = {};
  const required: string[] = [...(s.required ?? [])];
  for (const part of s.allOf ?? []) {
    const inner = propertiesOf(doc, part);
    Object.assign(props, inner.props);
    required.push(...inner.required);
  }
  for (const [k, p] of Object.entries(s.properties ?? {})) props[k] = deref(doc, p).node;
  return { props, required };
}

function typesOf(doc: OpenApiDoc, schema: Json): string[] {
  const s = deref(doc, schema).node ?? {};
  const t = [].concat(s.type ?? []).filter((x: string) => x !== 'null');
  if (t.length) return t;
  if (Array.isArray(s.enum)) return [...new Set(s.enum.filter((x: Json) => x !== null).map((x: Json) => typeof x))] as string[];
  for (const key of ['oneOf', 'anyOf']) if (Array.isArray(s[key])) return [...new Set(s[key].flatMap((a: Json) => typesOf(doc, a)))];
  if (s.properties || s.allOf) return ['object'];
  return [];
}

const IPS_VALID = ['10.1.1.1', '10.1.1.2', '192.0.2.7'];
const IPS_INVALID = ['not-an-ip', '300.1.1.1', '10.1.1.1.1'];
const isIpName = (name: string) => /^(ip|ips|.*_ip|.*_ips)$/.test(name);

/** Port numbers as a client may send them: the slots, the manager's own, a busy one, out of range, not numbers. */
function portValue(): fc.Arbitrary<Valued> {
  return fc.oneof(
    { weight: 8, arbitrary: fc.constantFrom(...PORT_SLOTS).map((p) => v(p)) },
    { weight: 1, arbitrary: fc.constant(v(0, 'zero')) },
    { weight: 1, arbitrary: fc.constant(v(WWW_PORT, 'in-use-by-the-manager')) },
    { weight: 1, arbitrary: fc.constant(v(TARGET_PORT, 'in-use-by-another-program')) },
    { weight: 1, arbitrary: fc.constantFrom(80, 70000, -1).map((p) => v(p, 'out-of-range')) },
    { weight: 1, arbitrary: fc.constantFrom('abc', '24000').map((p) => v(p, 'string-for-number')) },
  );
}

function ipValue(): fc.Arbitrary<Valued> {
  return fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...IPS_VALID).map((ip) => v(ip)) },
    { weight: 1, arbitrary: fc.constantFrom(...IPS_INVALID).map((ip) => v(ip, 'invalid-ip')) },
    { weight: 1, arbitrary: fc.constant(v('10.9.0.0/16', 'subnet')) },
  );
}

/** A value for one property: valid most of the time, else broken in one way its schema names. */
function fieldValue(doc: OpenApiDoc, name: string, schema: Json, depth: number): fc.Arbitrary<Valued> {
  const s = deref(doc, schema).node ?? {};
  const types = typesOf(doc, s);
  const type = types[0];
  if (name === 'port' && (type === 'integer' || type === 'number')) return portValue();
  if (isIpName(name) && type === 'string') return ipValue();
  if (isIpName(name) && type === 'array')
    return fc.oneof(
      {
        weight: 4,
        arbitrary: fc.array(ipValue(), { minLength: 1, maxLength: 2 }).map((xs) =>
          v(
            xs.map((x) => x.value),
            ...xs.flatMap((x) => x.classes),
          ),
        ),
      },
      { weight: 1, arbitrary: fc.constant(v([], 'empty-list')) },
      { weight: 1, arbitrary: fc.constantFrom(...IPS_VALID).map((ip) => v(ip, 'scalar-for-array')) },
    );
  const wrong = fc
    .constantFrom<Json>(
      ...([7, true, { a: 1 }, ['x']] as Json[]).filter(
        (x) => !types.includes(Array.isArray(x) ? 'array' : typeof x === 'object' ? 'object' : typeof x),
      ),
    )
    .map((x) => v(x, 'wrong-type'));
  const examples = [...(s.examples ?? []), ...('example' in s ? [s.example] : []), ...('default' in s ? [s.default] : [])];
  switch (type) {
    case 'boolean':
      return fc.oneof(
        { weight: 4, arbitrary: fc.boolean().map((b) => v(b)) },
        { weight: 2, arbitrary: fc.constantFrom('true', 'false', '1', '0').map((x) => v(x, 'string-for-boolean')) },
        { weight: 1, arbitrary: wrong },
      );
    case 'integer':
    case 'number': {
      const min = typeof s.minimum === 'number' ? s.minimum : 0;
      // Small valid values: a multiply or a pool size of thousands would start thousands of ports.
      const valid = fc.integer({ min, max: Math.min(min + 3, typeof s.maximum === 'number' ? s.maximum : min + 3) });
      return fc.oneof(
        { weight: 4, arbitrary: fc.oneof(valid, ...(examples.length ? [fc.constantFrom(...examples)] : [])).map((x) => v(x)) },
        { weight: 2, arbitrary: fc.constantFrom('3', '0', 'abc', '').map((x) => v(x, 'string-for-number')) },
        { weight: 1, arbitrary: fc.constantFrom(...[min - 1, -1, 0].filter((x) => x < min)).map((x) => v(x, 'below-minimum')) },
        { weight: 1, arbitrary: wrong },
      );
    }
    case 'string': {
      const valid = Array.isArray(s.enum)
        ? s.enum.filter((x: Json) => typeof x === 'string')
        : examples.filter((x) => typeof x === 'string');
      return fc.oneof(
        { weight: 4, arbitrary: fc.constantFrom(...(valid.length ? valid : ['x1'])).map((x) => v(x)) },
        ...(Array.isArray(s.enum) ? [{ weight: 1, arbitrary: fc.constant(v('not-in-enum', 'not-in-enum')) }] : []),
        { weight: 1, arbitrary: fc.constant(v('', 'empty-string')) },
        { weight: 1, arbitrary: wrong },
      );
    }
    case 'array':
      return fc.oneof(
        {
          weight: 4,
          arbitrary: fc.array(fieldValue(doc, name, s.items ?? {}, depth + 1), { maxLength: 2 }).map((xs) =>
            v(
              xs.map((x) => x.value),
              ...xs.flatMap((x) => x.classes),
            ),
          ),
        },
        { weight: 1, arbitrary: fc.constant(v('x', 'scalar-for-array')) },
      );
    case 'object':
      return depth > 2 ? fc.constant(v({})) : objectOf(doc, s, depth + 1, '');
    default:
      return fc.constantFrom(v('x1'), v(1), v(true));
  }
}

/** An object for a schema: its required fields (each may be missing), optional ones, maybe an unknown one. */
function objectOf(doc: OpenApiDoc, schema: Json, depth: number, at: string): fc.Arbitrary<Valued> {
  const { props, required } = propertiesOf(doc, schema);
  const optional = Object.keys(props).filter((k) => !required.includes(k));
  // Fields the spec gives examples for are the ones clients send (a port's `zone`, `proxy_type`): each
  // comes half the time; of the rest, up to two.
  const typical = optional.filter((k) => props[k]?.examples?.length || 'example' in (props[k] ?? {}));
  const rest = optional.filter((k) => !typical.includes(k));
  const prefix = at ? `${at}.` : '';
  const field = (k: string) =>
    fieldValue(doc, k, props[k], depth).map((x) => ({ k, value: x.value, classes: x.classes.map((c) => `${prefix}${k}:${c}`) }));
  return fc
    .record({
      req: fc.tuple(...required.map((k) => fc.option(field(k), { freq: 12, nil: null }).map((f) => f ?? { k, missing: true as const }))),
      opt: fc
        .tuple(fc.subarray(typical), fc.subarray(rest, { maxLength: Math.min(2, rest.length) }))
        .map(([a, b]) => [...a, ...b])
        .chain(
          (keys): fc.Arbitrary<Array<{ k: string; value: Json; classes: string[] }>> =>
            keys.length ? fc.tuple(...keys.map(field)) : fc.constant([]),
        ),
      // One object in six carries a field the schema does not name.
      unknown: fc.oneof(
        { weight: 5, arbitrary: fc.constant(null) },
        { weight: 1, arbitrary: fc.constant({ k: 'unknown_field', value: 'kept?', classes: [`${prefix}unknown-field`] }) },
      ),
    })
    .map(({ req, opt, unknown }) => {
      const out: Record<string, Json> = {};
      const classes: string[] = [];
      for (const f of [...req, ...opt, ...(unknown ? [unknown] : [])]) {
        if ('missing' in f) {
          classes.push(`${prefix}${f.k}:missing`);
          continue;
        }
        out[f.k] = f.value;
        classes.push(...f.classes);
      }
      return v(out, ...classes);
    });
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
  );
}

/**
 * One call of an operation, with generated path, query and body. A path whose `pm` stands for the
 * program's brand (`x-brand-prefix`) is sent with `brand` (the real manager serves `/api/lpm_users`).
 */
export function callOf(doc: OpenApiDoc, o: Operation, brand = 'lpm'): fc.Arbitrary<CallStep> {
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

/** A request through a port to the loopback target: plain, or one the target answers with an error status. */
export function trafficStep(): fc.Arbitrary<TrafficStep> {
  return fc
    .record({
      port: fc.constantFrom(...PORT_SLOTS),
      path: fc.oneof(
        { weight: 3, arbitrary: fc.integer({ min: 1, max: 99 }).map((n) => `/t/${n}`) },
        { weight: 1, arbitrary: fc.constantFrom(404, 500, 403).map((n) => `/status/${n}`) },
      ),
    })
    .map(({ port, path }) => ({ kind: 'traffic' as const, port, path, classes: [path.startsWith('/status/') ? 'target-error' : 'plain'] }));
}

/** The operations a sequence is drawn from. */
export function generatedOperations(doc: OpenApiDoc): Operation[] {
  return operations(doc).filter(generated);
}

/**
 * Sequences of calls and traffic. Creating a port is drawn more often than any other call, so that
 * the calls on ports and the traffic meet ports that exist.
 */
export function sequences(doc: OpenApiDoc, maxSteps: number, brand?: string): fc.Arbitrary<Step[]> {
  const ops = generatedOperations(doc);
  // The operations that create what other paths address by `{port}` (POST /api/proxies).
  const creates = (o: Operation) => o.method === 'post' && ops.some((p) => p.path.startsWith(`${o.path}/{port}`));
  const step = fc.oneof(
    ...ops.map((o) => ({ weight: creates(o) ? Math.ceil(ops.length / 3) : 1, arbitrary: callOf(doc, o, brand) as fc.Arbitrary<Step> })),
    { weight: Math.ceil(ops.length / 4), arbitrary: trafficStep() as fc.Arbitrary<Step> },
  );
  return fc.array(step, { minLength: 1, maxLength: maxSteps });
}
