import type { ProxyPortConfig } from '../domain/types.js';
import { HttpError } from '../errors.js';
import { portFree } from '../free-ports.js';
import type { ManagerContext, ManagerCtx, ManagerHandlers } from './context.js';
import { deletion, multiplied, rebuildDuplicates, refuseDuplicateUpdate, storedConfigs, usersOnCreate } from './multiply.js';

// Proxy ports: create, update, delete, list, status, sessions, SSL analyzing.

const FIRST_PORT = 24000;
/** The real manager's `ports_limit` default: ports at once (util/lpm_config_static.js 110, lib/mixins/mgr_proxy.js 161-166). */
export const PORTS_LIMIT = 10_000;
/**
 * Bytes of configuration one create may store with `multiply` (copies x the config's JSON): 700 copies
 * of a 1.3 MB config once took the sandbox out of memory. The sandbox's own bound (the real manager has none).
 */
export const MULTIPLY_BYTES_LIMIT = 64 * 1024 * 1024;

/** The observed `{errors: [{msg, field}]}` of port creation and update. */
const portErrors = (msg: string, field?: string) => new HttpError(400, msg, { body: { errors: [field ? { msg, field } : { msg }] } });

/** The real manager's delete of an unknown port fails inside its handler: `500` with this text. */
const noSuchProxy = () => new HttpError(500, 'Server error: this proxy does not exist', { text: true });

export function portsHandlers(c: ManagerContext) {
  const { store, options, m, log, portOf, status, effective } = c;
  /** Refusals shared by create and update: a port taken by another proxy or by the sandbox itself, an unknown Zone. */
  function checkPort(port: number, self?: number): void {
    if (port !== self && store.ports.has(port)) throw portErrors(`port ${port} in use by another proxy`, 'port');
    if (options.reservedPorts().includes(port)) throw portErrors(`port ${port} in use by the UI/API`, 'port');
  }
  function checkZone(cfg: ProxyPortConfig): void {
    if (cfg.zone !== undefined && !store.zones.has(cfg.zone)) throw portErrors(`Zone ${cfg.zone} not found`, 'zone');
  }

  /**
   * The port a create without `port` takes: the highest + 1, at least 24000, skipping the sandbox's
   * own ports and, when ports listen, ports this machine already uses (another sandbox's, another
   * program's), so that sandboxes side by side each get a port they can open.
   */
  async function nextPort(iface: string | undefined): Promise<number> {
    let port = Math.max(FIRST_PORT - 1, ...store.ports.keys(), ...creating) + 1;
    const host = iface && iface !== 'any' ? iface : '127.0.0.1';
    for (let tries = 0; tries < 1000 && port < 65535; port++) {
      if (options.reservedPorts().includes(port) || store.ports.has(port) || creating.has(port)) continue;
      // Reserved before the check of the machine yields, so that a create meanwhile skips it too.
      creating.add(port);
      if (!options.ports || (await portFree(port, host))) return port;
      creating.delete(port);
      tries++;
    }
    return port;
  }

  /** Ports a create is opening now (between picking a number and storing the port): another create skips them. */
  const creating = new Set<number>();

  function dropPort(port: number): void {
    store.ports.delete(port);
    store.bans.delete(port);
    delete m().sessions[String(port)];
  }

  /**
   * Opens the listeners of new ports (when ports carry traffic). A port that cannot bind is refused
   * at create, naming the port and why; the ports opened before it close again.
   */
  async function listen(configs: ProxyPortConfig[]): Promise<void> {
    const traffic = options.ports;
    if (!traffic) return;
    const opened: number[] = [];
    for (const cfg of configs) {
      try {
        await traffic.open(cfg);
        opened.push(cfg.port);
      } catch (err) {
        await Promise.allSettled(opened.map((p) => traffic.close(p)));
        const why = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
        throw portErrors(`port ${cfg.port} cannot be opened on ${cfg.iface ?? '127.0.0.1'}: ${why}`, 'port');
      }
    }
  }

  function refreshSession(ctx: ManagerCtx) {
    const cfg = portOf(ctx);
    if (cfg.rotate_session === true) return { status: 204 };
    const key = String(cfg.port);
    const n = (m().sessions[key] ?? 0) + 1;
    m().sessions[key] = n;
    return { body: { session_id: `${cfg.port}_${n}` } };
  }

  return {
    listRunningProxies: () => ({ body: [...store.ports.values()].map(effective) }),

    listProxies: () => ({ body: storedConfigs(store) }),

    createProxy: async (ctx) => {
      const { multiply, ...given } = ctx.body.proxy as ProxyPortConfig & { multiply?: number };
      usersOnCreate(given);
      const picked = given.port === undefined ? await nextPort((given as { iface?: string }).iface) : undefined;
      const first = given.port ?? (picked as number);
      const count = multiply && multiply > 1 ? multiply : 1;
      if (store.ports.size + count > PORTS_LIMIT) throw portErrors(`number of many proxy ports exceeding the limit: ${PORTS_LIMIT}`);
      const size = Buffer.byteLength(JSON.stringify(given));
      if (count * size > MULTIPLY_BYTES_LIMIT)
        throw portErrors(
          `multiply: ${count} copies of a ${size}-byte configuration would store ${count * size} bytes, more than ${MULTIPLY_BYTES_LIMIT}`,
          'multiply',
        );
      // One stored configuration, `multiply` ports running (multiply.ts).
      const configs = multiplied({ ...structuredClone(given), port: first, ...(multiply === undefined ? {} : { multiply }) });
      const ports = configs.map((c) => c.port);
      // The numbers this create holds while it opens them (nextPort reserved the first).
      const mine = new Set<number>(picked === undefined ? [] : [picked]);
      try {
        for (const port of ports) {
          if (port > 65535) throw portErrors(`port ${port} is out of range`, 'port');
          checkPort(port);
          if (port !== picked && creating.has(port)) throw portErrors(`port ${port} in use by another proxy`, 'port');
        }
        if (options.strict) checkZone(given);
        for (const port of ports) {
          creating.add(port);
          mine.add(port);
        }
        await listen(configs);
      } finally {
        for (const port of mine) creating.delete(port);
      }
      for (const cfg of configs) store.ports.set(cfg.port, cfg);
      log(`port${count > 1 ? 's' : ''} ${ports.join(', ')} created`);
      return { body: { data: effective(configs[0] as ProxyPortConfig) } };
    },

    deleteProxies: async (ctx) => {
      const { ports, refused } = deletion(store, [...new Set(ctx.body.ports as number[])]);
      if (ports.some((p) => !store.ports.has(p))) throw noSuchProxy();
      for (const p of ports) dropPort(p);
      await Promise.all(ports.map((p) => options.ports?.close(p)));
      log(`ports ${ports.join(', ')} deleted`);
      if (refused) throw refused;
      return { status: 204 };
    },

    deleteProxy: async (ctx) => {
      const cfg = store.ports.get(ctx.params.port as number);
      if (!cfg) throw noSuchProxy();
      const { ports, refused } = deletion(store, [cfg.port]);
      if (refused) throw refused;
      for (const p of ports) {
        dropPort(p);
        await options.ports?.close(p);
      }
      log(`port ${cfg.port} deleted`);
      return { status: 204 };
    },

    updateProxy: async (ctx) => {
      const old = portOf(ctx);
      refuseDuplicateUpdate(old);
      const given = ctx.body.proxy as ProxyPortConfig;
      const port = given.port ?? old.port;
      checkPort(port, old.port);
      checkZone(given);
      const cfg = { ...old, ...structuredClone(given), port };
      // A move or a new interface listens anew (refused, with the old port kept, if it cannot); other changes apply to the next request.
      const iface = (c: ProxyPortConfig) => c.iface;
      if (options.ports && (port !== old.port || iface(cfg) !== iface(old))) {
        if (port === old.port) await options.ports.close(old.port);
        try {
          await listen([cfg]);
        } catch (err) {
          if (port === old.port) await options.ports.open(old).catch(() => undefined);
          throw err;
        }
        if (port !== old.port) await options.ports.close(old.port);
      }
      if (port !== old.port) {
        // A move keeps the port's running state (bans, sessions) with it.
        const sessions = m().sessions[String(old.port)];
        store.moveBans(old.port, port);
        dropPort(old.port);
        if (sessions !== undefined) m().sessions[String(port)] = sessions;
        log(`port ${old.port} moved to ${port}`);
      } else log(`port ${port} updated`);
      store.ports.set(port, cfg);
      await rebuildDuplicates(store, old.port, cfg, options.ports);
      return { body: { data: effective(cfg) } };
    },

    getProxyStatus: async (ctx) => {
      const cfg = store.ports.get(ctx.params.port as number);
      if (!cfg) return { body: { status: 'Unknown proxy' } };
      // The real manager adds the details of its port check to the answer for `persist` ports only.
      let s = status(cfg);
      // When ports carry traffic, the upstream is checked for real.
      // The real manager's answer for an upstream it cannot reach (observed), whatever the reason.
      if (s.status === 'ok' && options.ports && !(await options.ports.upstreamAnswers(cfg)))
        s = { status: 'No hosts available', status_details: [] };
      return { body: cfg.proxy_type === 'persist' ? { status_details: [], ...s } : s };
    },

    getRefreshSessions: refreshSession,

    refreshSessions: refreshSession,

    enableSsl: () => {
      for (const cfg of store.ports.values()) cfg.ssl = true;
      log('SSL analyzing enabled on all ports');
      return { text: 'ok' };
    },
  } satisfies ManagerHandlers;
}
