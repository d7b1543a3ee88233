import { isDeepStrictEqual } from 'node:util';
import { deref, type OpenApiDoc } from '@zone-api/spec/model';
import type { ProxyPortConfig } from '../domain/types.js';
import { HttpError } from '../shared/errors.js';
import { spreadInPieces } from '../shared/in-pieces.js';

// A port's configuration as the real local proxy manager 1.570.247 (@luminati-io/luminati-proxy) keeps
// it: what a create stores (the body's `proxy` as given, not converted), what an update converts first,
// and what `proxies_running` shows of a running port. The field types are the spec's `ProxyPort`.

// biome-ignore lint/suspicious/noExplicitAny: port configurations hold what a client sent
type Json = any;

/** A port field's JSON type as the real manager's coercion names it: `integer` reads as `number`, `array` as `object` (lib/util.js 714-724). */
export type FieldTypes = Record<string, string>;

/** The type of each field of the spec's `ProxyPort`, as the real manager's own field list types them (util/lpm_api_models.js). */
export function portFieldTypes(doc: OpenApiDoc): FieldTypes {
  const schema = deref(doc, { $ref: '#/components/schemas/ProxyPort' }).node ?? {};
  const out: FieldTypes = {};
  for (const [name, raw] of Object.entries<Json>(schema.properties ?? {})) {
    const s = deref(doc, raw).node ?? {};
    const type = [].concat(s.type ?? []).find((t: string) => t !== 'null') as string | undefined;
    if (type) out[name] = type === 'integer' ? 'number' : type === 'array' ? 'object' : type;
  }
  // The one integer of the spec the real manager's field list leaves out (util/lpm_api_models.js, so not in
  // its numeric_fields, util/lpm_config_static.js 25-26): its port server reads `listen_port` as given
  // (lib/server.js 106, 656-660; traffic/listen-port.ts), so it is stored and run unconverted.
  delete out.listen_port;
  return out;
}

/** The real manager's crash, as its API error handler sends it (lib/mixins/web_api.js 63-68). */
export const serverError = (message: string) => new HttpError(500, `Server error: ${message}`, { text: true });

/** A value the real manager leaves out of a stored configuration: falsy but not `0` or `false` (lib/mixins/mgr_proxy.js 271). */
const empty = (v: unknown) => !v && v !== 0 && v !== false;

/**
 * A port configuration given to a create or an update, without a field named `__proto__` at its top. The
 * real manager copies it with `Object.assign` (web_api.js 372 at a create; `update_proxy_fields`,
 * mgr_proxy.js 178, at an update), which makes such a field the copy's prototype rather than a field of
 * it, and then keeps the copy's own fields only (`omit_by` over `Object.keys`, mgr_proxy.js 270-271;
 * `assign(old_opt, …)`, mgr_proxy.js 407): it is never stored nor answered. One inside a field's value (a
 * rule, an unknown object) is data there, stored and answered as given, on both. The real manager also
 * reads a few fields through that prototype before it drops it (docs/fidelity.md, "The sandbox's own choices"); the
 * sandbox reads none.
 */
const PROTO_FIELD = '__proto__';
export function dropPrototypeField(proxy: Record<string, Json>): void {
  if (Object.hasOwn(proxy, PROTO_FIELD)) Reflect.deleteProperty(proxy, PROTO_FIELD);
}

/** The fields of a `bw_limit` the real manager keeps (`update_bw_limits`, mgr_proxy.js 358-370). */
const BW_LIMIT_FIELDS = ['days', 'bytes', 'start', 'renewable', 'use_limit_webhook', 'th_webhook_value'] as const;

/**
 * A port's `bw_limit` as the real manager stores it when a create or an update gives one (`update_bw_limits`,
 * mgr_proxy.js 358-370; web_api.js 373-374 and mgr_proxy.js 358 call it): the old limit's fields with the
 * given ones over them, of its own fields only, `renewable` a boolean, `th_webhook_value` left out unless
 * truthy, and `start` now unless one is kept or given.
 */
export function storedBwLimit(given: Json, old: Json, now: number): Record<string, Json> {
  const pick = (from: Json) =>
    Object.fromEntries(BW_LIMIT_FIELDS.filter((k) => from != null && Object.hasOwn(Object(from), k)).map((k) => [k, from[k]]));
  const out: Record<string, Json> = { ...pick(old), ...pick(given) };
  out.renewable = !!out.renewable;
  if (!out.th_webhook_value) delete out.th_webhook_value;
  if (!out.start) out.start = new Date(now).toISOString();
  return out;
}

/**
 * The `proxy` of a create body, read as the real manager's `proxy_create_api` reads it (web_api.js
 * 348-385): nothing there is a crash (it reads `proxy.port` of nothing), a `users` that has a length but
 * is no list another; everything else is taken as given.
 */
export function createBody(body: unknown): Record<string, Json> {
  const b = body as Json;
  const proxy = b === null || b === undefined ? undefined : b.proxy;
  if (proxy === undefined || proxy === null) throw serverError(`Cannot read properties of ${proxy} (reading 'port')`);
  if (typeof proxy !== 'object') throw serverError(`Cannot create property 'port' on ${typeof proxy} '${String(proxy)}'`);
  dropPrototypeField(proxy);
  if (proxy.users?.length) {
    if (typeof proxy.users.map !== 'function') throw serverError('req.body.proxy.users.map is not a function');
    if (proxy.users.some((u: unknown) => typeof u !== 'string')) throw serverError('x.toLowerCase is not a function');
    proxy.users = proxy.users.map((u: string) => u.toLowerCase());
  }
  return proxy;
}

/**
 * A port's `reverse_lookup_values` that the real manager's port cannot start with: anything but text
 * lines (`IP name`) when it reads them, i.e. unless `reverse_lookup_dns` is true or
 * `reverse_lookup_file` names a file (lib/server.js 53-62 and 157-165: `line.match` of a number, or
 * values that are no list). Its port worker then throws, and the real manager 1.570.247 never answers
 * that create, nor any later create or delete (observed). The sandbox refuses the configuration
 * instead (400, the field named), rather than leave its client waiting; parity.yaml lists it.
 */
export function unstartableLookup(proxy: Record<string, Json>, fileExists: (path: string) => boolean): string | undefined {
  const values = proxy.reverse_lookup_values;
  if (!values || proxy.reverse_lookup_dns === true) return undefined;
  if (typeof proxy.reverse_lookup_file === 'string' && proxy.reverse_lookup_file && fileExists(proxy.reverse_lookup_file)) return undefined;
  if (typeof values === 'string') return undefined;
  const bad = Array.isArray(values) ? values.findIndex((x) => typeof x !== 'string') : -1;
  if (Array.isArray(values) && bad === -1) return undefined;
  return Array.isArray(values)
    ? `reverse_lookup_values[${bad}] is no text line ("IP name"): the real manager's port cannot start with it (line.match is not a function) and the real manager answers nothing`
    : 'reverse_lookup_values is no list of text lines ("IP name"): the real manager\'s port cannot start with it (values is not iterable) and the real manager answers nothing';
}

/**
 * A port's `smtp` list with an entry that is no text (`[1]`, `[true]`): the real manager's port relays
 * each connection to an entry picked at random (lib/smtp.js 17-23), and one that is no text makes its
 * connection handler throw (`address.split is not a function`). That ends the whole real manager 1.570.247
 * (its `uncaughtException` trap shuts it down, bin/lum_node.js 58-70): the client's connection is reset
 * and every later call is refused or never answered (observed). The sandbox refuses the configuration
 * instead (400, the field named) rather than stop; parity.yaml lists it.
 */
export function unrelayableSmtp(proxy: Record<string, Json>): string | undefined {
  const list = proxy.smtp;
  if (!Array.isArray(list) || !list.length) return undefined;
  const bad = list.findIndex((x) => typeof x !== 'string');
  return bad === -1
    ? undefined
    : `smtp[${bad}] is no text ("host[:port]"): the real manager's port throws on the first connection it relays (address.split is not a function), which stops the real manager`;
}

/** What the manager adds to a port it stores: its Zone's password and price, the whitelist every port has (mgr_proxy.js 171-180). */
export interface PortFacts {
  password: string;
  gb_cost: number;
  /** The Zone's current plan (`static`, `mobile`, `unblock` of an updated port). */
  plan: Record<string, unknown>;
  /** The manager's default whitelist (command line, admin and default port whitelists: lib/manager.js 508-515). */
  whitelist: string[];
}

/**
 * The configuration a create stores (mgr_proxy.js 266-275, 171-180): the given fields without the empty
 * ones (`""`, `null`), the port as a number, `proxy_type` `persist` unless given, the Zone's password,
 * its price per GB and the whitelist (the default one and the port's own). `given` becomes that
 * configuration (changed in place, not copied: a create hands over its own copy of the body).
 */
export function storedConfig(given: Record<string, Json>, port: number, facts: PortFacts): ProxyPortConfig {
  const conf = given;
  conf.port = port;
  if (!conf.proxy_type) conf.proxy_type = 'persist';
  for (const k of Object.keys(conf)) if (empty(conf[k])) delete conf[k];
  // `concat`, as the real manager joins them: a single value given for the list joins as one entry.
  const whitelist = [...new Set(facts.whitelist.concat(conf.whitelist_ips || []))];
  Object.assign(conf, { password: facts.password, gb_cost: facts.gb_cost, whitelist_ips: whitelist });
  return conf as ProxyPortConfig;
}

/**
 * The configuration an update in place stores (mgr_proxy.js 330-338, 402-410, 171-189): the old one with
 * the given fields, the whitelist kept unless one is given, the Zone kept unless one is given (none, when
 * the port had none), and what `update_proxy_fields` adds: the password, price and whitelist as at
 * create, the given number fields as numbers (`+value`, so `"abc"` is NaN, sent as null), the plan's
 * kind and the cloud's super proxy ports and antivirus server (none offline: its default address).
 */
export async function updatedConfig(
  old: ProxyPortConfig,
  given: Record<string, Json>,
  facts: PortFacts,
  types: FieldTypes,
): Promise<ProxyPortConfig> {
  const o = old as Record<string, Json>;
  // Copied in pieces: either may hold tens of thousands of fields (in-pieces.ts).
  const next: Record<string, Json> = await spreadInPieces(given);
  if (!next.whitelist_ips && o.whitelist_ips) next.whitelist_ips = o.whitelist_ips;
  next.zone = next.zone || o.zone;
  next.password = facts.password;
  next.gb_cost = facts.gb_cost;
  next.whitelist_ips = [...new Set(facts.whitelist.concat(next.whitelist_ips || []))];
  // The typed fields the update gives (the spec's field list, not the update's fields: those may be many).
  for (const k of Object.keys(types)) if (types[k] === 'number' && Object.hasOwn(next, k) && next[k]) next[k] = +next[k];
  Object.assign(next, planFields(facts.plan));
  return (await spreadInPieces(old, next)) as ProxyPortConfig;
}

/** The fields `update_proxy_fields` reads as numbers (`+value` when set; util/lpm_config.js `numeric_fields`, 1.570.247). */
const NUMERIC_FIELDS = [
  'port',
  'multiply',
  'proxy_port',
  'proxy_retry',
  'vip',
  'ext_proxy_port',
  'pool_size',
  'throttle',
  'max_ban_retries',
];

/**
 * What the real manager changes of a stored configuration when it starts its port (`update_proxy_fields`,
 * mgr_proxy.js 171-189): its number fields as numbers (`+value` of each that is set: `"abc"` is NaN, sent as
 * null), and what planFields adds for the Zone's plan `plan`. Spread over the stored configuration, it is
 * the configuration the port starts with; only the changes are made here, not a copy of the whole (a port
 * of 60,000 unknown fields took two).
 */
export function startedFields(cfg: ProxyPortConfig, plan: Record<string, unknown>): Record<string, Json> {
  const c = cfg as Record<string, Json>;
  const numbers: Record<string, Json> = {};
  for (const k of NUMERIC_FIELDS) if (c[k]) numbers[k] = +c[k];
  return { ...numbers, ...planFields(plan) };
}

/**
 * What `update_proxy_fields` adds to the configuration a port starts with (mgr_proxy.js 171-189): the
 * kind of its Zone's plan, and the cloud's super proxy ports and antivirus server (none offline: its
 * default address).
 */
export function planFields(plan: Record<string, unknown>): Record<string, Json> {
  return {
    static: plan.type === 'static',
    mobile: !!plan.mobile,
    unblock: plan.type === 'unblocker' || !!plan.unblocker,
    super_proxy_ports: [],
    av_server_url: '127.0.0.1:1343',
  };
}

/**
 * Whether an update restarts the port with the new configuration rather than update it in place
 * (`proxy_update`, mgr_proxy.js 340-375): another port, a `multiply` or `multiply_users` given and not
 * equal (`!=`) to the port's, other `users`, or other `ips` or `vips` (each sorted, none as `[]`: an
 * update that leaves out the `ips` of a port that has some changes them).
 */
export function restarts(old: ProxyPortConfig, given: Record<string, Json>, port: number): boolean {
  const o = old as Record<string, Json>;
  // biome-ignore lint/suspicious/noDoubleEquals: the real manager compares with `!=`
  const differ = (k: string) => given[k] !== undefined && given[k] != o[k];
  const sorted = (x: Json) => JSON.stringify(x ? (typeof x === 'string' ? [...x] : Object.values(x)).map(String).sort() : []);
  return (
    port !== old.port ||
    differ('multiply') ||
    differ('multiply_users') ||
    (given.users !== undefined && !isDeepStrictEqual(given.users, o.users)) ||
    sorted(o.ips) !== sorted(given.ips) ||
    sorted(o.vips) !== sorted(given.vips)
  );
}

/** The ban list a restarted port's configuration carries (mgr_proxy.js 433, 444: its `Ip_cache`, whose Map sends as `{}`). */
export const RESTARTED_BANLIST = { cache: {}, max: null } as const;

/**
 * A stored configuration as a port runs it: number fields given as strings read as numbers
 * (`update_proxy_fields`, mgr_proxy.js 176-179: `+value` of each numeric field that is set).
 */
export function runningConfig(cfg: ProxyPortConfig, types: FieldTypes): ProxyPortConfig {
  // Only the typed fields are looked at, and the configuration is copied only when one of them changes
  // (the unknown fields of a lenient body are many: a copy and a pass over 60,000 of them per call).
  const c = cfg as Record<string, Json>;
  let out = c;
  for (const [k, type] of Object.entries(types)) {
    const v = c[k];
    if (type !== 'number' || !v || typeof v === 'number') continue;
    if (out === c) out = { ...c };
    out[k] = +v;
  }
  return out as ProxyPortConfig;
}

/** Defaults a running port shows for the fields `proxies_running` reads from it (lib/config.js defaults, observed). */
const RUNNING_DEFAULTS = { dns: 'local', tls_lib: 'open_ssl', route_err: 'pass_dyn', proxy_connection_type: 'http' } as const;

/**
 * A port as `GET /api/proxies_running` lists it (web_api.js 866-895): its stored configuration, then
 * what the running port (`running`, runningConfig: `vip: "abc"` runs as NaN, sent as null) says of
 * `proxy_type`, `port`, `ip`, `vip`, `user`, `dns`, `zone`, `tls_lib`, `route_err` and
 * `proxy_connection_type` (its own value, else the manager's default), and the status of its last
 * check, once it has been checked. A port not stored (`stored` false) shows only those.
 */
export function runningView(
  cfg: ProxyPortConfig,
  running: ProxyPortConfig,
  defaultZone: string,
  checked?: object,
  stored = true,
): Record<string, Json> {
  const c = cfg as Record<string, Json>;
  const r = running as Record<string, Json>;
  // A port the manager runs without storing it (another `proxy_type`) has no stored configuration to show.
  const out: Record<string, Json> = stored ? { ...c } : {};
  // A duplicate of a multiplied port (`master_port`) shows its master's configuration without these (web_api.js 876-882).
  if (c.master_port) for (const k of ['ips', 'vips', 'users', 'whitelist_ips']) delete out[k];
  for (const k of ['proxy_type', 'port', 'ip', 'vip', 'user'] as const) if (r[k] !== undefined) out[k] = r[k];
  for (const [k, v] of Object.entries(RUNNING_DEFAULTS)) out[k] = r[k] ?? v;
  // An update in place sets the running port's Zone to the stored one, none when it has none.
  out.zone = 'zone' in r ? r.zone : defaultZone;
  return { ...out, ...checked };
}

/**
 * The real manager's conversion of an update's fields to their types (lib/middleware.js 102-111,
 * lib/util.js 646-727), in place: a string for a number reads as that number (`""` as 0), `"true"`/
 * `"false"`/`"1"`/`"0"`/`""` for a boolean as that boolean, 0 and 1 too; another type is converted as
 * JavaScript converts it (`String`, `Number`, `Boolean`); and any value that is then `"true"` or
 * `"false"` becomes that boolean. A list given as `[""]` is empty.
 */
export function coerceUpdate(proxy: Record<string, Json>, types: FieldTypes): void {
  for (const k of Object.keys(proxy)) {
    // Own fields only: a field named `constructor` or `toString` is no typed field (and `__proto__` is
    // dropped before, dropPrototypeField).
    const to = Object.hasOwn(types, k) ? types[k] : undefined;
    if (!to) continue;
    const from = typeof proxy[k];
    if (from !== to) proxy[k] = convert(proxy[k], from, to);
    if (proxy[k] === 'true' || proxy[k] === 'false') proxy[k] = proxy[k] === 'true';
  }
  for (const k of Object.keys(proxy)) if (Array.isArray(proxy[k]) && proxy[k].length === 1 && proxy[k][0] === '') proxy[k] = [];
}

function convert(v: Json, from: string, to: string): Json {
  if (from === 'number' && to === 'boolean') return v === 0 ? false : v === 1 ? true : v;
  if (from === 'string' && to === 'boolean') {
    if (v === '' || v === 'false' || v === '0') return false;
    return v === 'true' || v === '1' ? true : v;
  }
  if (from === 'string' && to === 'number') {
    if (v === '') return 0;
    return /^[+-]?\.?[0-9]/.test(v) && !/[^0-9.+-]/.test(v) ? Number.parseFloat(v) : v;
  }
  if (to === 'number') return Number(v);
  if (to === 'string') return String(v);
  if (to === 'boolean') return Boolean(v);
  return v;
}
