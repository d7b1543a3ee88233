import { existsSync } from 'node:fs';
import type { ProxyPortConfig } from '../domain/types.js';
import { listenHost, portFree } from '../host/free-ports.js';
import { HttpError } from '../shared/errors.js';
import { spreadInPieces } from '../shared/in-pieces.js';
import type { ManagerContext, ManagerCtx, ManagerHandlers } from './context.js';
import { dropPortLogs } from './logs-stats.js';
import {
  deletion,
  isDuplicate,
  isStored,
  MULTIPLY_BYTES_LIMIT,
  masterRun,
  multiplied,
  PORTS_LIMIT,
  portCount,
  readOnly,
  rebuildDuplicates,
  refuseDuplicateUpdate,
  storedConfigs,
  uiCheckEnd,
} from './multiply.js';
import {
  coerceUpdate,
  createBody,
  dropPrototypeField,
  RESTARTED_BANLIST,
  restarts,
  runningConfig,
  runningView,
  serverError,
  startedFields,
  storedBwLimit,
  storedConfig,
  unrelayableSmtp,
  unstartableLookup,
  updatedConfig,
} from './port-config.js';
import { storedList } from './port-copies.js';
import { openListeners } from './port-listeners.js';
import { portChecks } from './port-status.js';
import { portErrors, proxyCheckInPieces, refusal, storeScope } from './proxy-check.js';
import { startedPorts } from './started-ports.js';

// Proxy ports: create, update, delete, list, status, sessions, SSL analyzing.

const FIRST_PORT = 24000;

/** The real manager's delete of an unknown port fails inside its handler: `500` with this text. */
const noSuchProxy = () => serverError('this proxy does not exist');

export function portsHandlers(c: ManagerContext) {
  const { store, options, m, log, portOf, portFacts } = c;
  const types = options.portFieldTypes ?? {};
  /** Each port's last status check (port-status.ts), which `proxies_running` shows. */
  const checks = portChecks(c);
  /** What each port started with, which an update in place answers (started-ports.ts). */
  const startedWith = startedPorts(c);
  /** The numbers a configuration runs on: its own and its duplicates'. */
  const runs = (cfg: ProxyPortConfig) => Array.from({ length: portCount(cfg) }, (_, i) => cfg.port + i);
  /** Stored ports an update in place gave a `proxy_type` other than `persist`: they stay stored (multiply.ts isStored), in the state. */
  const kept = (): ReadonlySet<number> => new Set(m().kept_stored ?? []);
  function keep(port: number, on: boolean): void {
    const list = (m().kept_stored ?? []).filter((p) => p !== port);
    if (on) list.push(port);
    store.setManager({ kept_stored: list.length ? list.sort((a, b) => a - b) : undefined });
  }
  /** A create's refusals: a port taken by another proxy or by the sandbox itself; with `--strict`, an unknown Zone (checkZone). */
  function checkPort(port: number): void {
    if (store.ports.has(port)) throw portErrors(`port ${port} in use by another proxy`, 'port');
    if (options.reservedPorts().includes(port)) throw portErrors(`port ${port} in use by the UI/API and UI/WebSocket`, 'port');
  }
  function checkZone(cfg: ProxyPortConfig): void {
    if (cfg.zone !== undefined && !store.zones.has(cfg.zone)) throw portErrors(`Zone ${cfg.zone} not found`, 'zone');
  }

  /**
   * The port a create without `port` takes: the highest + 1, at least 24000, skipping the sandbox's
   * own ports and, when ports listen, ports this machine already uses (another sandbox's, another
   * program's), so that sandboxes side by side each get a port they can open.
   */
  async function nextPort(iface: unknown): Promise<number> {
    let port = Math.max(FIRST_PORT - 1, ...store.ports.keys(), ...creating) + 1;
    const host = listenHost(iface);
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

  /** What the real manager changes of a stored configuration when it starts its port (port-config.ts startedFields). */
  const started = (cfg: ProxyPortConfig) => startedFields(cfg, portFacts({ zone: cfg.zone }).plan);

  /** Ports a create is opening now (between picking a number and storing the port): another create skips them. */
  const creating = new Set<number>();

  /**
   * A port deleted (with its duplicates). What the real manager's delete leaves in its stored list
   * (proxy_delete, mgr_proxy.js 303-323): it stops the port, then removes the FIRST stored entry of its
   * number only when the port runs as `persist`. The entry of a port whose `proxy_type` an update made
   * another stays stored (listed, read-only, not running); a `persist` port whose number has such a
   * stopped entry before it removes that one, and its own entry stays in its place.
   */
  function dropPort(port: number): void {
    const cfg = store.ports.get(port);
    const stopped = [...(m().stored_stopped ?? [])];
    if (cfg && kept().has(port)) stopped.push(cfg);
    else if (cfg && isStored(cfg)) {
      const first = stopped.findIndex((s) => s.port === port);
      if (first >= 0) stopped.splice(first, 1, cfg);
    }
    store.setManager({ stored_stopped: stopped.length ? stopped : undefined });
    store.dropPort(port);
    keep(port, false);
    checks.forget(port);
    startedWith.stop(port);
  }

  /** Opens the listeners of new ports when ports carry traffic (port-listeners.ts). */
  const listen = (configs: ProxyPortConfig[]) => openListeners(options.ports, configs, types);

  function refreshSession(ctx: ManagerCtx) {
    const cfg = portOf(ctx);
    if (cfg.rotate_session === true) return { status: 204 };
    return { body: { session_id: `${cfg.port}_${store.nextSession(cfg.port)}` } };
  }

  return {
    listRunningProxies: () => ({
      body: [...store.ports.values()]
        .sort((a, b) => a.port - b.port)
        .map((cfg) =>
          runningView(
            cfg,
            runningConfig(masterRun(cfg), types),
            m().settings.zone,
            checks.last(cfg.port),
            isStored(cfg, kept()) || isDuplicate(cfg),
          ),
        ),
    }),

    listProxies: () => ({ body: storedList(c) }),

    createProxy: async (ctx) => {
      // As the real manager reads the body (web_api.js 348-385): no check of the fields, none converted.
      // The port owns the body's `proxy` as parsed, not a copy (the record of calls keeps the body's text,
      // calls.ts): a body of 60,000 unknown fields took about ten passes over them, each 100 ms.
      const given = createBody(ctx.body);
      const { multiply } = given;
      delete given.multiply;
      const picked = !given.port ? await nextPort(given.iface) : undefined;
      const first = picked ?? +given.port;
      // The numbers this create holds while it opens them (nextPort reserved the first).
      const mine = new Set<number>(picked === undefined ? [] : [picked]);
      try {
        if (!first || first < 1000 || !Number.isInteger(first)) throw portErrors('Invalid port. It must be a number >= 1000', 'port');
        const unstartable = unstartableLookup(given, existsSync);
        if (unstartable) throw portErrors(unstartable, 'reverse_lookup_values');
        const unrelayable = unrelayableSmtp(given);
        if (unrelayable) throw portErrors(unrelayable, 'smtp');
        const facts = portFacts(given);
        const zone = given.zone;
        // One stored configuration, `multiply` ports running (multiply.ts), counted and weighed before any
        // is made (a single port is within the body limit, far below the bound: it is not weighed).
        const count = portCount({ multiply } as ProxyPortConfig);
        if (store.ports.size + count > PORTS_LIMIT) throw portErrors(`number of many proxy ports exceeding the limit: ${PORTS_LIMIT}`);
        const size = count > 1 ? Buffer.byteLength(JSON.stringify(given)) : 0;
        if (count * size > MULTIPLY_BYTES_LIMIT)
          throw portErrors(
            `multiply: ${count} copies of a ${size}-byte configuration would store ${count * size} bytes, more than ${MULTIPLY_BYTES_LIMIT}`,
            'multiply',
          );
        if (multiply !== undefined) given.multiply = multiply;
        if (given.bw_limit) given.bw_limit = storedBwLimit(given.bw_limit, undefined, store.clock.now());
        const master = storedConfig(given, first, facts);
        const configs = await multiplied(master, true);
        const ports = configs.map((c) => c.port);
        for (const port of ports) {
          if (port > 65535) throw portErrors(`port ${port} is out of range`, 'port');
          checkPort(port);
          if (port !== picked && creating.has(port)) throw portErrors(`port ${port} in use by another proxy`, 'port');
        }
        // "Proxy port conflict UI port" (mgr_proxy.js 157-160, answered as 400 by web_api.js 382-384): the
        // manager API's port lies between the first port and the end its `multiply` reaches, worked out as
        // the real manager does (uiCheckEnd).
        const www = options.wwwPort?.();
        if (www && first <= www && uiCheckEnd(first, multiply) >= www) throw portErrors('Proxy port conflict UI port');
        if (options.strict) checkZone({ zone } as ProxyPortConfig);
        for (const port of ports) {
          creating.add(port);
          mine.add(port);
        }
        await listen(configs);
        for (const cfg of configs) {
          store.putPort(cfg);
          keep(cfg.port, false);
          // A new port has not been checked, even where a port of its number was (and was deleted, or reset away).
          checks.forget(cfg.port);
        }
        log(`port${count > 1 ? 's' : ''} ${ports.join(', ')} created`);
        const head = configs[0] as ProxyPortConfig;
        return { body: { data: await startedWith.start(head, started(head)) } };
      } finally {
        for (const port of mine) creating.delete(port);
      }
    },

    deleteProxies: async (ctx) => {
      // `req.body.ports||[]`, each looked up as a key (web_api.js 527-537): `"24000"` names port 24000.
      const named = ctx.body?.ports || [];
      if (!Array.isArray(named)) throw serverError('ports.forEach is not a function');
      const byKey = (p: unknown) => [...store.ports.keys()].find((k) => String(k) === String(p));
      if (named.some((p) => byKey(p) === undefined)) throw noSuchProxy();
      const { ports, refused } = deletion(store, [...new Set(named.map(byKey) as number[])]);
      for (const p of ports) dropPort(p);
      await Promise.all(ports.map((p) => options.ports?.close(p)));
      // Their logs and statistics lines go, for the ports as named (web_api.js 534, mgr_proxy.js 291-300),
      // unless a delete failed: the real manager's wrapper then throws before it clears them.
      if (!refused) dropPortLogs(store, named);
      log(`ports ${ports.join(', ')} deleted`);
      if (refused) throw refused;
      return { status: 204 };
    },

    deleteProxy: async (ctx) => {
      // `+req.params.port` (web_api.js 520): `0x5DC0`, `24000.0` or `2.4e4` name port 24000, `abc` none.
      const cfg = store.ports.get(Number(ctx.params.port));
      if (!cfg) throw noSuchProxy();
      const { ports, refused } = deletion(store, [cfg.port]);
      if (refused) throw refused;
      for (const p of ports) {
        dropPort(p);
        await options.ports?.close(p);
      }
      // Its log entries and statistics line go; a duplicate's stay (`[port]`, web_api.js 523; mgr_proxy.js 291-300).
      dropPortLogs(store, [cfg.port]);
      log(`port ${cfg.port} deleted`);
      return { status: 204 };
    },

    updateProxy: async (ctx) => {
      // `this.proxies.find(p=>p.port==old_port)` (web_api.js 391-397): `024000` or `0x5DC0` name port 24000, `abc` none.
      // The stored list's first entry of the number: a stopped one (dropPort) comes before a port made after it.
      const stopped = m().stored_stopped?.find((s) => String(s.port) === String(Number(ctx.params.port)));
      if (stopped && !isStored(stopped)) throw readOnly();
      const old = store.ports.get(Number(ctx.params.port));
      if (!old) throw new HttpError(400, `No proxy at port ${ctx.params.port}`);
      refuseDuplicateUpdate(old, kept());
      // The real manager converts the fields to their types first (lib/middleware.js 124-131), checks the stored
      // configuration with the update over it (web_api.js 400-404, proxy-check.ts), then wants `proxy` (web_api.js 405-410).
      const body = ctx.body;
      const raw = body?.proxy;
      if (raw && typeof raw === 'object') dropPrototypeField(raw);
      if (raw && typeof raw === 'object' && Object.keys(raw).length) coerceUpdate(raw, types);
      // The stored configuration with the update over it, copied and checked in pieces: either may hold
      // tens of thousands of fields (in-pieces.ts).
      const merged = await spreadInPieces(old, raw);
      const problems = await proxyCheckInPieces(storeScope(store, options.reservedPorts()), merged, old.port, old.multiply);
      if (problems.length) throw refusal(problems);
      if (!raw)
        throw new HttpError(400, "Request body should contain 'proxy' field", {
          body: { errors: [{ msg: "Request body should contain 'proxy' field", body: JSON.stringify(body ?? {}) }] },
        });
      // A port's `bw_limit` is no field of the spec's port (the real manager's, observed): read as sent.
      const limits = raw as { bw_limit?: unknown };
      if (limits.bw_limit) limits.bw_limit = storedBwLimit(limits.bw_limit, (old as { bw_limit?: unknown }).bw_limit, store.clock.now());
      const given = raw as ProxyPortConfig;
      const unstartable = unstartableLookup(merged, existsSync);
      if (unstartable) throw portErrors(unstartable, 'reverse_lookup_values');
      const unrelayable = unrelayableSmtp(merged);
      if (unrelayable) throw portErrors(unrelayable, 'smtp');
      const port = given.port ?? old.port;
      // The port owns the body's `proxy` as parsed, as a create does (the record of calls keeps the body's text).
      const fresh = given as Record<string, unknown>;
      // Restarted (proxy_remove_and_create, mgr_proxy.js 427-445): the old configuration with the update, stored
      // as a create stores it, with the old port's ban list; else updated in place (mgr_proxy.js 402-423).
      const restart = restarts(old, fresh, port);
      const facts = portFacts({ zone: fresh.zone || old.zone });
      const cfg = restart
        ? storedConfig(await spreadInPieces(old, fresh, { banlist: RESTARTED_BANLIST }), port, facts)
        : await updatedConfig(old, fresh, facts, types);
      // A move or a new interface listens anew (refused, with the old port kept, if it cannot), and so does a
      // restart of a port with a `listen_port` (it may listen elsewhere now: traffic/listen-port.ts); other
      // changes apply to the next request, a `listen_port` updated in place too (the real port's server keeps
      // listening where it did, lib/mixins/mgr_proxy.js 402-423).
      const iface = (c: ProxyPortConfig) => c.iface;
      const relisten = restart && (cfg.listen_port || old.listen_port) !== undefined;
      if (options.ports && (port !== old.port || iface(cfg) !== iface(old) || relisten)) {
        if (port === old.port) await options.ports.close(old.port);
        try {
          await listen([cfg]);
        } catch (err) {
          if (port === old.port) await options.ports.open(old).catch(() => undefined);
          throw err;
        }
        if (port !== old.port) await options.ports.close(old.port);
      }
      // A restart starts the port and its duplicates anew: none has been checked (port-status.ts).
      if (restart) for (const p of new Set([...runs(old), ...runs(cfg)])) checks.forget(p);
      if (port !== old.port) {
        // A move keeps the port's running state (bans, sessions) with it.
        store.movePort(old.port, cfg);
        startedWith.stop(old.port);
        log(`port ${old.port} moved to ${port}`);
      } else {
        store.putPort(cfg);
        // Updated in place: the stored entry stays, whatever proxy_type it now has (mgr_proxy.js 402-423).
        if (!restart && !isStored(cfg)) keep(port, true);
        log(`port ${port} ${restart ? 'restarted' : 'updated'}`);
      }
      await rebuildDuplicates(store, old.port, cfg, options.ports);
      // The port's complete configuration: an update in place answers the running port's, from its start
      // (started-ports.ts), a restart the new port's (mgr_proxy.js 444).
      const data = restart ? await startedWith.start(cfg, started(cfg)) : await startedWith.updated(cfg, fresh, started(cfg));
      return { body: { data } };
    },

    ...checks.handlers,

    getRefreshSessions: refreshSession,

    refreshSessions: refreshSession,

    // Each stored port without SSL analyzing, or the one named, is updated in place with `ssl: true`
    // (web_api.js 257-273: `this.proxies`, the stored configurations, so a duplicate named is none), and
    // a multiplied port's duplicates run its new configuration (mgr_proxy.js 402-425).
    enableSsl: async (ctx) => {
      const named = ctx.body?.port;
      for (const cfg of storedConfigs(store, kept())) {
        if ((named && String(cfg.port) !== String(named)) || cfg.ssl) continue;
        const updated = await updatedConfig(store.ports.get(cfg.port) ?? cfg, { ssl: true }, portFacts({ zone: cfg.zone }), types);
        store.putPort(updated);
        await rebuildDuplicates(store, cfg.port, updated, options.ports);
      }
      log(named ? `SSL analyzing enabled on port ${named}` : 'SSL analyzing enabled on all ports');
      return { text: 'ok' };
    },
  } satisfies ManagerHandlers;
}
