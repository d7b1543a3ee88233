import { deref, type OpenApiDoc } from '@zone-api/spec/model';
import fc from 'fast-check';

// The values a generated call carries, read from the operation's schemas: each field valid most of
// the time, else at a boundary or broken in one way its schema names (a string for a boolean, a
// number below the minimum, a port in use). Each value carries its input classes
// (`body.proxy.ssl:string-for-boolean`); steps.ts puts them together into calls and sequences.

// biome-ignore lint/suspicious/noExplicitAny: schemas and generated bodies are walked generically
export type Json = any;

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

/** A generated value and the input classes it belongs to. */
export interface Valued {
  value: Json;
  classes: string[];
}
export const v = (value: Json, ...classes: string[]): Valued => ({ value, classes });

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

export function typesOf(doc: OpenApiDoc, schema: Json): string[] {
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

/**
 * Where a port listens instead of its `port` (`listen_port`; packages/sandbox/src/traffic/listen-port.ts):
 * a number no sequence creates, sends traffic to or finds in use, so that the port's own number shows
 * the difference (refused on both); or a value that leaves the port on its `port` or listening nowhere.
 * No traffic goes to these numbers: a request answered there stops the whole real manager (its usage
 * names no port it knows, lib/manager.js 322-325), which the sandbox does not imitate. Not a slot, the
 * manager's own port or a busy one: listening there fails with EADDRINUSE, which the real manager
 * answers by looking for another running manager and exiting when it finds one (lib/manager.js 108-111
 * and 304-315).
 */
export const LISTEN_PORTS = [24050, 24051] as const;
function listenPortValue(): fc.Arbitrary<Valued> {
  return fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...LISTEN_PORTS).map((p) => v(p)) },
    { weight: 1, arbitrary: fc.constantFrom(0, '').map((p) => v(p, 'falsy')) },
    { weight: 1, arbitrary: fc.constant(v(String(LISTEN_PORTS[0]), 'string-for-number')) },
    { weight: 1, arbitrary: fc.constantFrom(70000, -1, 24050.5).map((p) => v(p, 'out-of-range')) },
    { weight: 1, arbitrary: fc.constantFrom<Json>({ a: 1 }, true, ['x']).map((p) => v(p, 'wrong-type')) },
  );
}

function ipValue(): fc.Arbitrary<Valued> {
  return fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...IPS_VALID).map((ip) => v(ip)) },
    { weight: 1, arbitrary: fc.constantFrom(...IPS_INVALID).map((ip) => v(ip, 'invalid-ip')) },
    { weight: 1, arbitrary: fc.constant(v('10.9.0.0/16', 'subnet')) },
  );
}

/**
 * A port's `rules`. The spec leaves a rule's shape undocumented (`ProxyPort.rules.items` is `{}`), so
 * a rule is drawn as the real manager's web interface saves one (@luminati-io/luminati-proxy 1.570.247
 * util/rules_util.js 19-110): a `trigger_type` with the field it names (a regular expression on the
 * status, the body or the URL, a request time), an `action_type` with its `action`. The values are
 * chosen for the traffic steps' target (`/status/N` answers N, every body reads `target answers GET
 * <path>`), so that each trigger both fires and does not; a request time of a minute never passes on
 * loopback, so time triggers are decided. Besides: an invalid regular expression, a rule turned off, an
 * action that is no object, an action the manager does not know, a rule that is no object.
 */
const RULE_TRIGGERS: Array<fc.Arbitrary<Valued>> = [
  fc.constantFrom('404', '5..', '^2', '403|404').map((status) => v({ trigger_type: 'status', status }, 'trigger-status')),
  fc.constantFrom('target', 'status/5', 'no such text').map((body) => v({ trigger_type: 'body', body }, 'trigger-body')),
  fc.constantFrom('/status/', '/t/', 'no-such-path').map((url) => v({ trigger_type: 'url', url }, 'trigger-url')),
  fc.constant(v({ trigger_type: 'status', status: '404', url: '/status/' }, 'trigger-status+url')),
  fc.constant(v({ trigger_type: 'max_req_time', max_req_time: 60_000 }, 'trigger-max_req_time')),
  fc.constant(v({ trigger_type: 'min_req_time', min_req_time: 60_000 }, 'trigger-min_req_time')),
  fc.constantFrom('status', 'body', 'url').map((f) => v({ trigger_type: f, [f]: '(' }, 'invalid-regex')),
];
const RULE_ACTIONS: Array<fc.Arbitrary<Valued>> = [
  fc
    .constantFrom('ban_ip', 'ban_ip_domain', 'ban_ip_global')
    .chain((a) => fc.constantFrom(0, 600_000).map((ms) => v({ action_type: a, action: { [a]: ms } }, `action-${a}`))),
  fc.constantFrom<Json>(true, 2, '1').map((retry) => v({ action_type: 'retry', action: { retry } }, 'action-retry')),
  fc.constant(v({ action_type: 'retry', action: { retry: true, retries: 2 } }, 'action-retry')),
  fc.constant(v({ action_type: 'retry_same', action: { retry: true, retry_same: true } }, 'action-retry_same')),
  fc
    .constantFrom<Json>(...PORT_SLOTS, String(PORT_SLOTS[1]))
    .map((to) => v({ action_type: 'retry_port', action: { retry_port: to } }, 'action-retry_port')),
  fc.constant(v({ action_type: 'refresh_ip', action: { refresh_ip: true } }, 'action-refresh_ip')),
  fc.constant(v({ action_type: 'null_response', action: { null_response: true } }, 'action-null_response')),
  fc.constant(v({ action_type: 'timeout_response', action: { timeout_response: true } }, 'action-timeout_response')),
  fc.constant(v({ action_type: 'bypass_proxy', action: { bypass_proxy: true } }, 'action-bypass_proxy')),
  fc.constant(v({ action_type: 'direct', action: { direct: true } }, 'action-direct')),
  fc.constant(v({ action_type: 'cache', action: { cache: true } }, 'action-cache')),
  // The web interface saves "Save IP to reserved pool" as `reserve_session` (lib/rules.js 312-313).
  fc.constant(v({ action_type: 'save_to_pool', action: { reserve_session: true } }, 'action-save_to_pool')),
  // A URL asked after the request (lib/rules.js 231-250 and 340-343): the loopback target, so that what it receives shows it.
  fc
    .constantFrom<Json>(
      { url: `http://127.0.0.1:${TARGET_PORT}/requested`, method: 'GET' },
      { url: `127.0.0.1:${TARGET_PORT}/requested-post`, method: 'POST', payload: { ip: '$IP', n: 1 } },
    )
    .map((request_url) => v({ action_type: 'request_url', action: { request_url } }, 'action-request_url')),
];
function ruleValue(): fc.Arbitrary<Valued> {
  const rule = fc
    .tuple(fc.oneof(...RULE_TRIGGERS), fc.oneof(...RULE_ACTIONS))
    .map(([t, a]) => v({ ...t.value, ...a.value }, ...t.classes, ...a.classes));
  return fc.oneof(
    { weight: 12, arbitrary: rule },
    { weight: 1, arbitrary: rule.map((r) => v({ ...r.value, active: false }, ...r.classes, 'inactive')) },
    { weight: 1, arbitrary: rule.map((r) => v({ ...r.value, action: r.value.action_type }, 'action-not-an-object')) },
    {
      weight: 1,
      arbitrary: fc
        .oneof(...RULE_TRIGGERS)
        .map((t) => v({ ...t.value, action_type: 'no_such_action', action: { no_such_action: true } }, 'action-unknown')),
    },
    { weight: 1, arbitrary: fc.constantFrom<Json>('x1', 7).map((x) => v(x, 'rule-not-an-object')) },
  );
}

/** One or two rules, as a port's `rules`. */
export function ruleList(): fc.Arbitrary<Valued> {
  return fc.array(ruleValue(), { minLength: 1, maxLength: 2 }).map((xs) =>
    v(
      xs.map((x) => x.value),
      ...xs.flatMap((x) => x.classes),
    ),
  );
}

/** Fields a body of the schema carries half the time, as often as those with examples: the ones traffic steps exercise. */
const DRAWN_OFTEN = new Set(['rules']);

/** A value for one property: valid most of the time, else broken in one way its schema names. */
function fieldValue(doc: OpenApiDoc, name: string, schema: Json, depth: number): fc.Arbitrary<Valued> {
  const s = deref(doc, schema).node ?? {};
  const types = typesOf(doc, s);
  const type = types[0];
  if (name === 'port' && (type === 'integer' || type === 'number')) return portValue();
  if (name === 'listen_port') return listenPortValue();
  if (isIpName(name) && type === 'string') return ipValue();
  if (name === 'rules' && type === 'array')
    return fc.oneof(
      { weight: 6, arbitrary: ruleList() },
      { weight: 1, arbitrary: fc.constant(v([], 'empty-list')) },
      { weight: 1, arbitrary: fc.constant(v({ trigger_type: 'url', url: '/t/' }, 'scalar-for-array')) },
    );
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
      // A field of no documented type: a string, else named by the type given (the real manager may read it as text).
      return fc.constantFrom(v('x1'), v(1, 'untyped-number'), v(true, 'untyped-boolean'));
  }
}

/** An object for a schema: its required fields (each may be missing), optional ones, maybe an unknown one. */
export function objectOf(doc: OpenApiDoc, schema: Json, depth: number, at: string): fc.Arbitrary<Valued> {
  const { props, required } = propertiesOf(doc, schema);
  const optional = Object.keys(props).filter((k) => !required.includes(k));
  // Fields the spec gives examples for are the ones clients send (a port's `zone`, `proxy_type`): each
  // comes half the time, and so do the fields traffic exercises (DRAWN_OFTEN); of the rest, up to two.
  const typical = optional.filter((k) => props[k]?.examples?.length || 'example' in (props[k] ?? {}) || DRAWN_OFTEN.has(k));
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
