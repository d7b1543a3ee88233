import type { Store } from '../domain/state.js';
import type { ProxyPortConfig, ZoneState } from '../domain/types.js';
import { HttpError, withinLimits } from '../shared/errors.js';
import { FIELDS_PER_PIECE, walkAtOnce, walkInPieces } from '../shared/in-pieces.js';
import { serverError } from './port-config.js';

// The real local proxy manager 1.570.247's check of a port configuration (`proxy_check`,
// lib/mixins/mgr_proxy.js 481-594), as far as it applies offline. An update checks the stored
// configuration with the update over it (`assign({}, old_proxy, req.body.proxy)`, web_api.js 400-404),
// so a stored field the check refuses (a create stores any Zone: its check sees only `port`,
// `ext_proxies` and `multiply`, web_api.js 372-373) refuses every later update of the port until an
// update replaces it; a `persist` port's status check keeps the details of this check of its running
// configuration (web_api.js 568-574). Each problem found is one entry, in the real manager's order.
//
// Not here: the checks of a Cloud Proxy Manager only (`zagent`: port ranges, `whitelist_ips` of `any`,
// more than 100 `ext_proxies`), and `the zone has no IPs in whitelist`, which 1.570.247 never gives: it
// compares the Zone's `ips` with `""`, and its Zones keep no `ips` (lib/zones.js 33-46). Whether a port
// can listen is the sandbox's listener's question (ports.ts).

// biome-ignore lint/suspicious/noExplicitAny: configurations hold what a client sent
type Json = any;

export interface ProxyProblem {
  msg: string;
  field?: string;
}

/** The observed refusal of a port's create or update: `400 {errors: [{msg, field}]}`, each problem found. */
export const refusal = (problems: ProxyProblem[]) => {
  // Cut to the spec's bounds (ProxyError): a message may quote what the client sent.
  const errors = problems.map(withinLimits);
  return new HttpError(400, errors.map((p) => p.msg).join('; '), { body: { errors } });
};
/** A refusal of one problem. */
export const portErrors = (msg: string, field?: string) => refusal([field ? { msg, field } : { msg }]);

/** The longest text a configuration field may hold (lib/consts.js 18, `MAX_STRING_LENGTH`). */
export const MAX_STRING_LENGTH = 300;
/**
 * The most problems the sandbox names in one answer: the spec's bound (`ProxyErrors.errors`, `maxItems`),
 * above what a body within the limit and the stored configuration can bring, so that every problem is
 * named, as the real manager names them all (mgr_proxy.js 454-596).
 */
export const MAX_PROBLEMS = 20_000;
/** The bounds of a bandwidth limit's `bytes` and `days` (mgr_proxy.js 545-553). */
const BW_BOUNDS: Array<[string, number]> = [
  ['bytes', Number.MAX_SAFE_INTEGER],
  ['days', 1e5],
];

export interface CheckScope {
  /** The account's Zones, by name. */
  zones: ReadonlyMap<string, ZoneState>;
  /** Whether a port number is taken by another running port. */
  taken: (port: number) => boolean;
  /** Ports the manager API itself listens on (`in use by the UI/API and UI/WebSocket`). */
  reserved: readonly number[];
}

/** The scope of a check in the sandbox: the store's Zones and running ports, and the sandbox's own ports. */
export const storeScope = (store: Store, reserved: readonly number[]): CheckScope => ({
  zones: store.zones,
  taken: (p) => store.ports.has(p),
  reserved,
});

/**
 * The Zone a configuration names, looked up as the real manager looks it up (`z.zone==zname`, lib/zones.js
 * 60-62): a one-name list names that Zone, a number or an object none (unless its text is a Zone's name).
 */
export function zoneNamed(zones: ReadonlyMap<string, ZoneState>, zone: unknown): ZoneState | undefined {
  if (zone === null || zone === undefined) return undefined;
  // biome-ignore lint/suspicious/noDoubleEquals: the real manager compares with `==`
  for (const z of zones.values()) if (z.name == (zone as string)) return z;
  return undefined;
}

/**
 * What the Zone check says of a Zone name (mgr_proxy.js 507-519): none it knows, or one whose plan is
 * disabled (the cloud's `plan.disable`; the sandbox's disabled Zone) or missing.
 */
function zoneProblem(scope: CheckScope, zone: unknown): string | undefined {
  const z = zoneNamed(scope.zones, zone);
  if (!z) return 'the provided zone name is not valid.';
  const plan = z.plans.at(-1) as Record<string, unknown> | undefined;
  if (z.disabled || !plan || plan.disable) return 'zone disabled';
  return undefined;
}

/**
 * The ports a configuration would take that are in use (`proxy_port_check`, mgr_proxy.js 598-616): from
 * `port` on, `multiply` of them, except those of the port's own running range (`self`, `selfMultiply`).
 */
function portProblem(scope: CheckScope, port: unknown, multiply: unknown, self?: number, selfMultiply?: unknown): string | undefined {
  const first = +(port as number);
  const end = first + (+(multiply as number) || 1) - 1;
  const ownEnd = self === undefined ? undefined : self + (+(selfMultiply as number) || 1) - 1;
  for (let p = first; p <= end; p++) {
    if (self !== undefined && ownEnd !== undefined && self <= p && p <= ownEnd) continue;
    if (scope.reserved.includes(p)) return `${p} in use by the UI/API and UI/WebSocket`;
    if (scope.taken(p)) return `${p} in use by another proxy`;
  }
  return undefined;
}

/** A bandwidth limit's `start` as the real manager's date reads it (util/date.js 169-216): an invalid date, or a crash for a value that is no text nor number. */
function badStart(start: unknown): boolean {
  if (typeof start === 'number') return Number.isNaN(new Date(start).getTime());
  if (typeof start !== 'string') throw serverError(`invalid date ${String(start)}`);
  const d = start.trim();
  const iso = /^((\d\d\d\d)-(\d\d)-(\d\d)|(\d\d?)-([A-Za-z]{3})-(\d\d(\d\d)?))\s*([\sT](\d\d):(\d\d)(:(\d\d)(\.(\d\d\d))?)?Z?)?$/.exec(d);
  // An ISO, SQL or `25-Dec-2024` date is read field by field (any numbers make a date), except all zeros.
  if (iso) return !!iso[2] && !/[1-9]/.test(iso[0]);
  if (/^\d+$/.test(d)) return Number.isNaN(new Date(+d).getTime());
  return Number.isNaN(new Date(d).getTime());
}

/** The problems of a bandwidth limit (mgr_proxy.js 542-581); a limit that is no object crashes the check (`'…' in bw_limit`). */
function bwProblems(bw: Json): ProxyProblem[] {
  const out: ProxyProblem[] = [];
  const problem = (msg: string) => out.push({ msg: `Invalid BW limit params, ${msg}`, field: 'bw_limit' });
  for (const [p, max] of BW_BOUNDS) {
    const value = +bw[p];
    if (!value || value < 0 || value > max) problem(`${p} should be positive number no greater than ${max}`);
  }
  if (bw.start && badStart(bw.start)) problem('start should be date');
  if (typeof bw !== 'object') throw serverError(`Cannot use 'in' operator to search for 'use_limit_webhook' in ${String(bw)}`);
  if ('use_limit_webhook' in bw && typeof bw.use_limit_webhook !== 'boolean') problem('use_limit_webhook should be true or false');
  if ('th_webhook_value' in bw && bw.th_webhook_value !== '' && bw.th_webhook_value !== undefined) {
    const th = bw.th_webhook_value;
    if (typeof th !== 'number' || th <= 0 || th >= 100) problem('th_webhook_value should be a number between 0 and 99');
  }
  return out;
}

/**
 * The real manager's `proxy_check` of a configuration (mgr_proxy.js 481-594): its `port` (a number of at
 * least 1000, its `multiply` ports free but for the port's own, `self`), its Zone, its bandwidth limit
 * and the length of each text field. `self`: the port checked (an update's, a status check's), whose
 * running range (`selfMultiply` ports) does not count as taken.
 */
export function proxyCheck(scope: CheckScope, cfg: Record<string, Json>, self?: number, selfMultiply?: unknown): ProxyProblem[] {
  return walkAtOnce(proxyCheckWalk(scope, cfg, self, selfMultiply));
}

/** proxyCheck with the fields looked at in pieces of FIELDS_PER_PIECE, the event loop let go of between them (a port may hold 60,000). */
export function proxyCheckInPieces(
  scope: CheckScope,
  cfg: Record<string, Json>,
  self?: number,
  selfMultiply?: unknown,
): Promise<ProxyProblem[]> {
  return walkInPieces(proxyCheckWalk(scope, cfg, self, selfMultiply));
}

function* proxyCheckWalk(
  scope: CheckScope,
  cfg: Record<string, Json>,
  self?: number,
  selfMultiply?: unknown,
): Generator<void, ProxyProblem[]> {
  const out: ProxyProblem[] = [];
  const { port, zone, multiply, bw_limit } = cfg;
  if (port !== undefined) {
    if (!port || +port < 1000) out.push({ msg: 'Invalid port. It must be a number >= 1000', field: 'port' });
    else {
      const inUse = portProblem(scope, port, multiply, self, selfMultiply);
      if (inUse) out.push({ msg: `port ${inUse}`, field: 'port' });
    }
  }
  if (zone !== undefined) {
    const problem = zoneProblem(scope, zone);
    if (problem) out.push({ msg: problem, field: 'zone' });
  }
  if (bw_limit) out.push(...bwProblems(bw_limit));
  const fields = Object.keys(cfg);
  for (let i = 0; i < fields.length; i++) {
    if ((i + 1) % FIELDS_PER_PIECE === 0) yield;
    const field = fields[i] as string;
    const value = cfg[field];
    if (typeof value === 'string' && value.length > MAX_STRING_LENGTH) out.push({ msg: 'Maximum string length exceeded', field });
  }
  return out.slice(0, MAX_PROBLEMS);
}

/** A port's configuration as `proxy_check` sees it on its status check: its running Zone (stored, else the settings' one). */
export const runningCheckConfig = (cfg: ProxyPortConfig, settingsZone: string): Record<string, Json> =>
  'zone' in cfg ? cfg : { ...cfg, zone: settingsZone };
