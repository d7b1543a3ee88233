import type { Store } from '../domain/state.js';
import type { ProxyPortConfig } from '../domain/types.js';
import { HttpError } from '../shared/errors.js';
import { cloneInPieces, spreadInPieces, yieldToLoop } from '../shared/in-pieces.js';

// `multiply` and `users` as the real manager 1.570.247 runs them (lib/mixins/mgr_proxy.js, the
// duplicates of a port; lib/mixins/web_api.js 505-560, the users). A port created with `multiply: N`
// is ONE stored configuration (the master, `multiply` kept) and N running ports: the master and N-1
// duplicates on the next numbers, each `proxy_type: "duplicate"` with `master_port`. The sandbox keeps
// the duplicates beside the master in its ports (so that traffic, bans and sessions find them as on
// the real one); what lists stored configurations leaves them out. A duplicate cannot be deleted
// (500 `cannot delete this port`) nor updated (400 `No proxy at port N`); deleting or updating its
// master deletes or rebuilds it. With `multiply_users`, the master runs as the first of `users` and
// each duplicate as the next one (`user`).

type Running = ProxyPortConfig & { master_port?: number; user?: string; users?: unknown };

/** The real manager's `ports_limit` default: ports at once (util/lpm_config_static.js 110, lib/mixins/mgr_proxy.js 161-166). */
export const PORTS_LIMIT = 10_000;
/**
 * Bytes of configuration one create may store with `multiply` (copies x the config's JSON): 700 copies
 * of a 1.3 MB config once took the sandbox out of memory. The sandbox's own bound (the real manager has none).
 */
export const MULTIPLY_BYTES_LIMIT = 64 * 1024 * 1024;

/**
 * The last port a create's `multiply` reaches as the real manager's `validate_proxy` works it out before
 * it starts the port (lib/mixins/mgr_proxy.js 151-160): `port+(multiply||1)-1` in JavaScript, where a
 * `multiply` given as text (any form body's) is appended to the port's digits: port 24000 with `"0"`
 * reaches 239999. Its range check before that (`proxy_port_check`, mgr_proxy.js 598-616) converts the
 * text and passes.
 */
export function uiCheckEnd(port: number, multiply: unknown): number {
  const m = multiply || 1;
  if (typeof m === 'number') return port + m - 1;
  if (typeof m === 'boolean') return port;
  return Number(`${port}${String(m)}`) - 1;
}

/** Whether a running port is the duplicate of another. */
export const isDuplicate = (cfg: ProxyPortConfig): boolean =>
  cfg.proxy_type === 'duplicate' && typeof (cfg as Running).master_port === 'number';

/**
 * Whether the manager stores a running port's configuration: a `persist` one (a create without
 * `proxy_type` is one; a port of the seed has none). A port created with another `proxy_type` runs
 * without being stored (lib/mixins/mgr_proxy.js 271-282): `GET /api/proxies` leaves it out, an update
 * finds no port (`No proxy at port N`), `proxies_running` shows only what the running port says of it.
 * A stored port stays stored whatever `proxy_type` an update in place gives it (`assign(old_opt,
 * new_proxy)` on the stored entry, mgr_proxy.js 402-423): `kept` names those ports.
 */
export const isStored = (cfg: ProxyPortConfig, kept?: ReadonlySet<number>): boolean =>
  cfg.proxy_type === undefined || cfg.proxy_type === 'persist' || !!kept?.has(cfg.port);

/** How many ports a configuration runs: `multiply`, at least one. */
export function portCount(cfg: ProxyPortConfig): number {
  const n = Math.floor(Number(cfg.multiply));
  return Number.isFinite(n) && n > 1 ? n : 1;
}

/**
 * The running ports of a stored configuration: the master itself, then its duplicates (the real
 * manager's multiply_port, lib/mixins/mgr_proxy.js 219-262): each duplicate runs the master's
 * configuration; with `multiply_users` port i runs as `users[i % n]`, with `multiply_ips` /
 * `multiply_vips` duplicate i uses `ips[i % n]` / `vips[i % n]` alone.
 */
export async function multiplied(master: ProxyPortConfig, own = false): Promise<ProxyPortConfig[]> {
  const m = master as Running & { ips?: unknown; vips?: unknown };
  const list = (x: unknown) => (Array.isArray(x) ? (x as unknown[]) : []);
  const users = list(m.users);
  const ips = list(m.ips);
  const vips = list(m.vips);
  const nth = (cfg: Running & Record<string, unknown>, i: number) => {
    if (m.multiply_users && users.length) cfg.user = users[i % users.length] as string;
    // The master keeps its stored lists (the sandbox stores what it runs); its duplicates take one each.
    if (i > 0 && m.multiply_ips && ips.length) Object.assign(cfg, { ip: ips[i % ips.length], ips: [ips[i % ips.length]] });
    if (i > 0 && m.multiply_vips && vips.length) Object.assign(cfg, { vip: vips[i % vips.length], vips: [vips[i % vips.length]] });
    return cfg;
  };
  const duplicates: ProxyPortConfig[] = [];
  const count = portCount(master);
  // Each copy is made in pieces, the event loop let go of between them and between copies: a configuration
  // may hold tens of thousands of fields, or 1.3 MB of rules copied 40 times (in-pieces.ts).
  if (count > 1) {
    // As the real manager lists them, a duplicate carries neither the users nor the port whitelist.
    const rest = await spreadInPieces(m);
    delete rest.users;
    delete rest.whitelist_ips;
    for (let i = 1; i < count; i++) {
      await yieldToLoop();
      const copy = await cloneInPieces(rest);
      duplicates.push(nth(Object.assign(copy, { port: master.port + i, proxy_type: 'duplicate', master_port: master.port }) as Running, i));
    }
  }
  // The master runs as itself when the caller hands it over (`own`: a configuration just made), else as a copy.
  return [nth(own ? m : ((await spreadInPieces(m)) as Running), 0), ...duplicates];
}

/**
 * A settings `zone` change as the running ports take it (lib/mixins/mgr_config.js 116-126): the real
 * manager gives the new Zone to the ports its saved configuration lists without a Zone of their own, the
 * stored `persist` ones (lib/config.js 218-219), and to no other (`_.pick` of those ports: not their
 * duplicates). A port of another `proxy_type` and a duplicate run on with the Zone they started with,
 * the settings' Zone then (complete_proxy_config, mgr_proxy.js 45-47): the sandbox gives them that Zone
 * (`before`) as their own running one, which their traffic uses too. A stored port an update in place
 * left without a Zone takes the new one. A port kept stored with another `proxy_type` is left as it is.
 */
export function settingsZoneChanged(store: Store, before: string, kept: ReadonlySet<number>): void {
  for (const cfg of [...store.ports.values()]) {
    if (cfg.zone !== undefined || kept.has(cfg.port)) continue;
    store.setPortZone(cfg.port, isStored(cfg) && !isDuplicate(cfg) ? undefined : before);
  }
}

/**
 * How the real manager runs a port that is no duplicate (multiply_port, lib/mixins/mgr_proxy.js 249-262):
 * with `multiply_ips` (any value JavaScript takes as true, the text "false" too) as the first of its `ips`
 * alone (`ip`; `ips: [undefined]`, sent as `[null]`, when it has none), with `multiply_vips` as the first
 * of its `vips`, with `multiply_users` as the first of its `users`. A create answers it (`proxy_port.opt`,
 * web_api.js 385) and `proxies_running` shows its `ip`, `vip` and `user`; the stored configuration keeps
 * the lists (the real manager stores the configuration before it runs a copy, mgr_proxy.js 177, 272-275).
 */
export function masterFields(cfg: ProxyPortConfig): Record<string, unknown> {
  const m = cfg as Running & { ips?: ArrayLike<unknown>; vips?: ArrayLike<unknown>; users?: ArrayLike<unknown> };
  if (!(m.multiply_ips || m.multiply_vips || m.multiply_users) || isDuplicate(cfg)) return {};
  const out: Record<string, unknown> = {};
  const first = (x: ArrayLike<unknown> | undefined) => (x || [])[0];
  if (m.multiply_ips) Object.assign(out, { ip: first(m.ips), ips: [first(m.ips)] });
  if (m.multiply_vips) Object.assign(out, { vip: first(m.vips), vips: [first(m.vips)] });
  if (m.multiply_users) out.user = first(m.users);
  return out;
}

/** A port as it runs (masterFields), the configuration itself when it runs as stored. */
export function masterRun(cfg: ProxyPortConfig): ProxyPortConfig {
  const fields = masterFields(cfg);
  return Object.keys(fields).length ? ({ ...cfg, ...fields } as ProxyPortConfig) : cfg;
}

/** The duplicates a master runs now. */
export function duplicatesOf(store: Store, master: number): ProxyPortConfig[] {
  return [...store.ports.values()].filter((c) => isDuplicate(c) && (c as Running).master_port === master);
}

/** The stored configurations (`GET /api/proxies`): no duplicates, and no `user` the master runs as. */
export function storedConfigs(store: Store, kept?: ReadonlySet<number>): ProxyPortConfig[] {
  return [...store.ports.values()]
    .filter((c) => isStored(c, kept))
    .map((c) => {
      if (!(c as Running).multiply_users || !('user' in c)) return c;
      const { user: _user, ...rest } = c as Running;
      return rest as ProxyPortConfig;
    });
}

/**
 * What a delete of these ports does: each port that is not a duplicate goes with its duplicates; a
 * duplicate named is refused with the real manager's `500 cannot delete this port` once the others are
 * gone (its deletes run side by side, lib/mixins/mgr_proxy.js 303-309: observed, `[master, duplicate]`
 * deletes the master and answers the 500).
 */
export function deletion(store: Store, ports: number[]): { ports: number[]; refused?: HttpError } {
  const out = new Set<number>();
  let refused: HttpError | undefined;
  for (const p of ports) {
    const cfg = store.ports.get(p);
    // Any port running as `proxy_type: "duplicate"`, one given so at create too (mgr_proxy.js 308-309).
    if (cfg?.proxy_type === 'duplicate') {
      refused = new HttpError(500, 'Server error: cannot delete this port', { text: true });
      continue;
    }
    out.add(p);
    for (const d of duplicatesOf(store, p)) out.add(d.port);
  }
  return { ports: [...out], ...(refused ? { refused } : {}) };
}

/**
 * An update names a duplicate or another port not stored: the real manager has no such port to update
 * (400 `{errors: [{msg}]}`, web_api.js 392-397). A stored port whose `proxy_type` an update made other
 * than `persist` is read-only (web_api.js 398-399).
 */
export function refuseDuplicateUpdate(cfg: ProxyPortConfig, kept?: ReadonlySet<number>): void {
  if (!isStored(cfg, kept))
    throw new HttpError(400, `No proxy at port ${cfg.port}`, { body: { errors: [{ msg: `No proxy at port ${cfg.port}` }] } });
  // Stored only because an update in place kept it there.
  if (!isStored(cfg)) throw readOnly();
}

/** The answer to an update of a stored entry whose `proxy_type` is not `persist` (web_api.js 398-399). */
export const readOnly = () => new HttpError(400, 'Proxy is read-only', { body: { errors: [{ msg: 'Proxy is read-only' }] } });

/**
 * After a master was updated (moved, or `multiply` or any field changed): its old duplicates go, the
 * new ones run with its new configuration. `close` and `open` are the listeners, when ports listen.
 */
export async function rebuildDuplicates(
  store: Store,
  oldPort: number,
  master: ProxyPortConfig,
  listeners?: { open(cfg: ProxyPortConfig): Promise<unknown>; close(port: number): Promise<void> },
): Promise<void> {
  const old = duplicatesOf(store, oldPort);
  const [head, ...next] = await multiplied(master);
  store.putPort(head as ProxyPortConfig);
  const was = new Set(old.map((d) => d.port));
  const keep = new Set(next.map((d) => d.port));
  // A duplicate that no longer runs goes with its running state; one that runs on takes the new configuration.
  for (const d of old) {
    if (keep.has(d.port)) continue;
    store.dropPort(d.port);
    await listeners?.close(d.port);
  }
  for (const d of next) {
    if (store.ports.has(d.port) && !was.has(d.port)) continue;
    store.putPort(d);
    await listeners?.open(d).catch(() => undefined);
  }
}

/**
 * `users` as the real manager reads it: user names, stored in lower case. The documented form, items
 * `{user}`, makes its create fail (`500 x.toLowerCase is not a function`), and a `users` that is not a
 * list too (`users.map is not a function`); the sandbox answers the same.
 */
export function usersOnCreate(given: ProxyPortConfig): void {
  const users = (given as Running).users;
  if (users === undefined) return;
  if (!Array.isArray(users)) throw new HttpError(500, 'Server error: req.body.proxy.users.map is not a function', { text: true });
  if (users.some((u) => typeof u !== 'string')) throw new HttpError(500, 'Server error: x.toLowerCase is not a function', { text: true });
  (given as Running).users = (users as string[]).map((u) => u.toLowerCase());
}
