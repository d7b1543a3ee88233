import { randomInt } from 'node:crypto';
import { isIP } from 'node:net';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { assertHeld, ipRecord, replaceIps } from '../account/ips.js';
import { badRequest, HttpError } from '../errors.js';
import type { Ctx, Handler } from '../http.js';
import { ipInList, isLoopback, isWhitelistEntry } from '../net.js';
import type { OperationDef } from '../spec.js';
import type { Store } from '../state.js';
import type { ProxyPortConfig } from '../types.js';

type C = Ctx<undefined>;
// biome-ignore lint/suspicious/noExplicitAny: HAR 1.2 entries are read generically
type HarEntry = Record<string, any>;

export interface ManagerOptions {
  /** Ports the sandbox itself listens on: a proxy port may not take them ("in use by the UI/API"). */
  reservedPorts: () => number[];
  /**
   * `--strict`: also refuse what the real manager accepts but cannot serve (a port created for a Zone
   * the account does not have; the real 1.570.247 creates it and its requests then fail upstream).
   */
  strict?: boolean;
  /** The command line reported by `GET /api/version`. */
  argv: string;
  /** Called after `POST /api/shutdown` has been answered (the CLI may exit; tests keep running). */
  onShutdown?: () => void;
}

const FIRST_PORT = 24000;
const TOKEN_LIMIT = 5;
const HOUR = 3_600_000;
const TOKEN_CHARS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** Defaults the manager applies to a port (what `proxies_running` shows beside the stored fields). */
const PORT_DEFAULTS = {
  proxy_type: 'persist',
  iface: '0.0.0.0',
  proxy: 'zproxy.example.com',
  proxy_port: 22225,
  proxy_connection_type: 'http',
  proxy_retry: 2,
  insecure: false,
  ssl: false,
  dns: 'local',
  route_err: 'pass_dyn',
  sticky_ip: false,
  pool_size: 0,
  rotate_session: false,
  max_ban_retries: 10,
  socket_inactivity_timeout: 120_000,
  debug: 'none',
  multiply: 1,
} as const;

/**
 * The manager's access rules, as the spec states them, before the body is read: an operation whose
 * security names `managerToken` needs the current token (`Authorization: <token>`, no Bearer); one
 * with `x-client-ip-check: true` needs a client IP that is loopback or in `www_whitelist_ips`.
 */
export function authenticateManager(store: Store, req: FastifyRequest, _reply: FastifyReply, op: OperationDef): undefined {
  if (op.credentials.includes('managerToken')) {
    const token = store.manager.token;
    if (!token || req.headers.authorization !== token) throw new HttpError(403, 'Token required', { text: true });
    return undefined;
  }
  if (op.clientIpCheck !== true || isLoopback(req.ip)) return undefined;
  const s = store.manager.settings;
  if (ipInList(req.ip, [...s.www_whitelist_ips, ...s.fixed_whitelist_ips])) return undefined;
  throw new HttpError(
    403,
    `Connection from your IP is forbidden. If you want to access this site ask the administrator to add ${req.ip} to the whitelist.`,
    {
      text: true,
      headers: { 'x-service-block-ip': req.ip },
    },
  );
}

/** The observed `{errors: [{msg, field}]}` of port creation and update. */
const portErrors = (msg: string, field?: string) => new HttpError(400, msg, { body: { errors: [field ? { msg, field } : { msg }] } });

/**
 * The manager's one JSON error body, `{errors: [{msg, field}]}`, for the statuses whose answer the spec
 * declares as JSON (port create and update); every other error of the manager is text.
 */
export function managerErrorBody(op: OperationDef, err: HttpError): unknown {
  if (!op.responses.get(String(err.status))?.media.includes('application/json')) return undefined;
  if (err.details?.some((d) => d.field === 'body.proxy.port' && d.reason.startsWith('must be >='))) {
    return { errors: [{ msg: 'Invalid port. It must be a number >= 1000', field: 'port' }] };
  }
  if (!err.details?.length) return { errors: [{ msg: err.message }] };
  return {
    errors: err.details.map((d) => ({ msg: `${d.field} ${d.reason}`, field: d.field.replace(/^body\.proxy\./, '') })),
  };
}

function semverParts(v: string): number[] {
  return v
    .split(/[.-]/)
    .slice(0, 3)
    .map((n) => Number.parseInt(n, 10) || 0);
}
function newer(a: string, b: string): boolean {
  const x = semverParts(a);
  const y = semverParts(b);
  for (let i = 0; i < 3; i++) if ((x[i] as number) !== (y[i] as number)) return (x[i] as number) > (y[i] as number);
  return false;
}

export function managerHandlers(store: Store, options: ManagerOptions): Record<string, Handler<undefined>> {
  const m = () => store.manager;

  function log(line: string): void {
    const lines = m().general_log;
    lines.push(`${new Date().toISOString()} NOTICE:Manager: ${line}`);
    if (lines.length > 10_000) lines.splice(0, lines.length - 10_000);
  }

  /**
   * The port of the path. An unknown one is refused as the real manager refuses it: `400 No proxy at
   * port N`, sent in the form the operation declares for 400 (text, `{errors}`, or the status alone).
   */
  function portOf(ctx: C): ProxyPortConfig {
    const port = ctx.params.port as number;
    const cfg = store.ports.get(port);
    if (!cfg) throw new HttpError(400, `No proxy at port ${port}`);
    return cfg;
  }

  /** The real manager's delete of an unknown port fails inside its handler: `500` with this text. */
  const noSuchProxy = () => new HttpError(500, 'Server error: this proxy does not exist', { text: true });

  function status(cfg: ProxyPortConfig): { status: string; status_details?: { msg: string; field?: string }[] } {
    const zoneName = cfg.zone ?? m().settings.zone;
    const zone = store.zones.get(zoneName);
    if (!zone)
      return {
        status: `Zone ${zoneName} not found`,
        status_details: [{ msg: `Zone ${zoneName} does not exist in the account`, field: 'zone' }],
      };
    if (zone.disabled) return { status: 'Disabled zone' };
    if (store.account.status !== 'active')
      return { status: 'Account suspended', status_details: [{ msg: `Account status is ${store.account.status}`, field: 'customer' }] };
    return { status: 'ok' };
  }

  function effective(cfg: ProxyPortConfig) {
    const s = m().settings;
    return {
      ...PORT_DEFAULTS,
      customer: s.customer,
      zone: s.zone,
      whitelist_ips: s.whitelist_ips,
      ...cfg,
      ...status(cfg),
    };
  }

  /**
   * The settings as `GET`/`PUT /api/settings` answer them: the stored ones, plus the fields the real
   * manager 1.570.247 always sends that the sandbox does not act on, with the values it sends offline.
   * Not sent: `mail_domain` and `cloud_url_address`, the provider's own host names (see parity.yaml).
   */
  function settingsView() {
    return {
      ...m().settings,
      debug: 'none',
      lpm_auth: 'none',
      av_server: false,
      reseller: false,
      cache_report: [0],
      cache_limit: 100_000_000,
      server_conf: { client: {} },
      proxy_port: 22225,
      logs_settings: {},
      use_custom_cert: false,
      socket_inactivity_timeout: 120_000,
      new_ui: false,
    };
  }

  /** Refusals shared by create and update: a port taken by another proxy or by the sandbox itself, an unknown Zone. */
  function checkPort(port: number, self?: number): void {
    if (port !== self && store.ports.has(port)) throw portErrors(`port ${port} in use by another proxy`, 'port');
    if (options.reservedPorts().includes(port)) throw portErrors(`port ${port} in use by the UI/API`, 'port');
  }
  function checkZone(cfg: ProxyPortConfig): void {
    if (cfg.zone !== undefined && !store.zones.has(cfg.zone)) throw portErrors(`Zone ${cfg.zone} not found`, 'zone');
  }

  function nextPort(): number {
    let port = Math.max(FIRST_PORT - 1, ...store.ports.keys()) + 1;
    while (options.reservedPorts().includes(port) || store.ports.has(port)) port++;
    return port;
  }

  function dropPort(port: number): void {
    store.ports.delete(port);
    store.bans.delete(port);
    delete m().sessions[String(port)];
  }

  /** Restart semantics: the configuration stays, the running state (bans, sessions, token rate) starts over. */
  function resetRuntime(what: string): void {
    store.bans.clear();
    m().sessions = {};
    m().token_issued = [];
    log(`${what}: ports ${[...store.ports.keys()].join(', ') || '(none)'} restarted with their configuration`);
  }

  function validIps(list: string[], field: string): void {
    const details = list
      .map((ip, i) => (isIP(ip) ? undefined : { field: `${field}[${i}]`, reason: `${ip} is not an IP address` }))
      .filter((d) => d !== undefined);
    if (details.length) throw new HttpError(400, 'Invalid request', { details });
  }

  function ban(ports: number[], ips: string[], domain: string | undefined, ms: number | undefined): void {
    const to = ms ? Date.now() + ms : 0;
    for (const port of ports) for (const ip of ips) store.addBan({ port, ip, domain: domain ?? null, to });
    log(`banned ${ips.join(', ')} on port${ports.length === 1 ? '' : 's'} ${ports.join(', ')}${ms ? ` for ${ms} ms` : ''}`);
  }

  /** Lifts bans of `ips` on a port (all domains unless one is named); returns how many were lifted. */
  function unban(port: number, ips: string[], domain: string | undefined): number {
    const list = store.activeBans(port);
    const keep = list.filter((b) => !(ips.includes(b.ip) && (domain === undefined || b.domain === domain)));
    if (keep.length) store.bans.set(port, keep);
    else store.bans.delete(port);
    return list.length - keep.length;
  }

  function addToList(list: string[], ip: string): void {
    if (!list.includes(ip)) list.push(ip);
  }

  function refreshSession(ctx: C) {
    const cfg = portOf(ctx);
    if (cfg.rotate_session === true) return { status: 204 };
    const key = String(cfg.port);
    const n = (m().sessions[key] ?? 0) + 1;
    m().sessions[key] = n;
    return { body: { session_id: `${cfg.port}_${n}` } };
  }

  const harField: Record<string, (e: HarEntry) => string | number> = {
    uuid: (e) => e.uuid ?? '',
    startedDateTime: (e) => e.startedDateTime,
    timestamp: (e) => e.startedDateTime,
    url: (e) => e.request.url,
    method: (e) => e.request.method,
    status_code: (e) => e.response.status,
    port: (e) => e.details?.port ?? 0,
    time: (e) => e.time,
    bw: (e) => e.details?.bw ?? 0,
  };

  return {
    // `backup_exist` is sent only when the manager started from a backup of its config; the sandbox never does.
    getVersion: () => ({ body: { version: m().version, argv: options.argv } }),

    getLatestVersion: () => {
      const latest = m().releases[0] as { ver: string };
      return { body: { version: latest.ver, newer: newer(latest.ver, m().version), versions: m().releases } };
    },

    getNodeVersion: () => {
      const [major, minor, patch] = process.versions.node.split('.').map(Number) as [number, number, number];
      const version = process.versions.node;
      return {
        body: {
          current: { options: {}, loose: false, raw: process.version, major, minor, patch, prerelease: [], build: [], version },
          satisfied: major > 20 || (major === 20 && minor >= 19),
          recommended: '>=20.19.0',
        },
      };
    },

    getNewToken: () => {
      const now = Date.now();
      const recent = m().token_issued.filter((t) => now - t < HOUR);
      if (recent.length >= TOKEN_LIMIT) {
        const wait = Math.ceil(((recent[0] as number) + HOUR - now) / 1000);
        throw new HttpError(429, 'Too many requests: at most 5 tokens an hour', { text: true, headers: { 'Retry-After': String(wait) } });
      }
      const token = Array.from({ length: 14 }, () => TOKEN_CHARS[randomInt(TOKEN_CHARS.length)]).join('');
      m().token_issued = [...recent, now];
      m().token = token;
      log('new token generated');
      return { body: { token } };
    },

    addWhitelistIp: (ctx) => {
      const ip = ctx.body.ip as string;
      if (ip === 'any' || !isWhitelistEntry(ip)) throw new HttpError(422, 'Wrong format', { text: true });
      addToList(m().settings.whitelist_ips, ip);
      log(`${ip} added to the whitelist of all ports`);
      return { text: 'OK' };
    },

    addAdminWhitelistIp: (ctx) => {
      const ip = ctx.body.ip as string;
      if (ip === 'any' || !isWhitelistEntry(ip)) throw new HttpError(422, 'Wrong format', { text: true });
      addToList(m().settings.www_whitelist_ips, ip);
      log(`${ip} allowed into the admin UI`);
      return { text: 'OK' };
    },

    listRunningProxies: () => ({ body: [...store.ports.values()].map(effective) }),
    listProxies: () => ({ body: [...store.ports.values()] }),

    createProxy: (ctx) => {
      const { multiply, ...given } = ctx.body.proxy as ProxyPortConfig & { multiply?: number };
      const first = given.port ?? nextPort();
      const count = multiply && multiply > 1 ? multiply : 1;
      const ports = Array.from({ length: count }, (_, i) => first + i);
      for (const port of ports) {
        if (port > 65535) throw portErrors(`port ${port} is out of range`, 'port');
        checkPort(port);
      }
      if (options.strict) checkZone(given);
      const configs = ports.map((port) => ({ ...structuredClone(given), port }));
      for (const cfg of configs) store.ports.set(cfg.port, cfg);
      log(`port${count > 1 ? 's' : ''} ${ports.join(', ')} created`);
      return { body: { data: effective(configs[0] as ProxyPortConfig) } };
    },

    getRecentStats: () => {
      const ports: Record<string, { reqs: number; success: number; bw: number }> = {};
      const by = (key: (e: HarEntry) => string) => {
        const counts = new Map<string, { key: string; reqs: number; success: number; bw: number }>();
        for (const e of m().har) {
          const k = key(e);
          const row = counts.get(k) ?? { key: k, reqs: 0, success: 0, bw: 0 };
          row.reqs++;
          if (e.response.status < 400) row.success++;
          row.bw += e.details?.bw ?? 0;
          counts.set(k, row);
        }
        return [...counts.values()].sort((a, b) => b.reqs - a.reqs);
      };
      for (const row of by((e) => String(e.details?.port ?? 0))) ports[row.key] = { reqs: row.reqs, success: row.success, bw: row.bw };
      const har = m().har;
      return {
        body: {
          ports,
          status_code: by((e) => String(e.response.status)),
          hostname: by((e) => new URL(e.request.url).hostname),
          protocol: by((e) => e.details?.protocol ?? new URL(e.request.url).protocol.replace(':', '')),
          total: har.length,
          success: har.filter((e) => e.response.status < 400).length,
          ssl_enable: [...store.ports.values()].some((p) => p.ssl === true),
        },
      };
    },

    deleteProxies: (ctx) => {
      const ports = [...new Set(ctx.body.ports as number[])];
      if (ports.some((p) => !store.ports.has(p))) throw noSuchProxy();
      for (const p of ports) dropPort(p);
      log(`ports ${ports.join(', ')} deleted`);
      return { status: 204 };
    },

    updateProxy: (ctx) => {
      const old = portOf(ctx);
      const given = ctx.body.proxy as ProxyPortConfig;
      const port = given.port ?? old.port;
      checkPort(port, old.port);
      checkZone(given);
      const cfg = { ...old, ...structuredClone(given), port };
      if (port !== old.port) {
        // A move keeps the port's running state (bans, sessions) with it.
        const bans = store.bans.get(old.port);
        const sessions = m().sessions[String(old.port)];
        dropPort(old.port);
        if (bans)
          store.bans.set(
            port,
            bans.map((b) => ({ ...b, port })),
          );
        if (sessions !== undefined) m().sessions[String(port)] = sessions;
        log(`port ${old.port} moved to ${port}`);
      } else log(`port ${port} updated`);
      store.ports.set(port, cfg);
      return { body: { data: effective(cfg) } };
    },

    deleteProxy: (ctx) => {
      const cfg = store.ports.get(ctx.params.port as number);
      if (!cfg) throw noSuchProxy();
      dropPort(cfg.port);
      log(`port ${cfg.port} deleted`);
      return { status: 204 };
    },

    getProxyStatus: (ctx) => {
      const cfg = store.ports.get(ctx.params.port as number);
      if (!cfg) return { body: { status: 'Unknown proxy' } };
      // The real manager adds the details of its port check to the answer for `persist` ports only.
      const s = status(cfg);
      return { body: cfg.proxy_type === 'persist' ? { status_details: [], ...s } : s };
    },

    banIp: (ctx) => {
      const cfg = portOf(ctx);
      validIps([ctx.body.ip], 'body.ip');
      ban([cfg.port], [ctx.body.ip], ctx.body.domain, ctx.body.ms);
      return { status: 204 };
    },

    banIps: (ctx) => {
      const cfg = portOf(ctx);
      const field = ctx.body.ip ? 'body.ip' : 'body.ips';
      const ips = [...(ctx.body.ip ?? []), ...(ctx.body.ips ?? [])] as string[];
      validIps(ips, field);
      ban([cfg.port], ips, ctx.body.domain, ctx.body.ms);
      return { status: 204 };
    },

    unbanIp: (ctx) => {
      const cfg = portOf(ctx);
      if (unban(cfg.port, [ctx.body.ip], ctx.body.domain) === 0) throw new HttpError(400, 'IP is not banned', { text: true });
      log(`unbanned ${ctx.body.ip} on port ${cfg.port}`);
      return { body: { ips: store.activeBans(cfg.port).map(({ ip, domain, to }) => ({ ip, domain, to })) } };
    },

    unbanIps: (ctx) => {
      const cfg = portOf(ctx);
      unban(cfg.port, ctx.body.ip, ctx.body.domain);
      log(`unbanned ${(ctx.body.ip as string[]).join(', ')} on port ${cfg.port}`);
      return { text: 'OK' };
    },

    banIpAllPorts: (ctx) => {
      const b = ctx.body as { ip?: string; ips?: string[]; domain?: string; ms?: number; ports?: number[] };
      const ips = [...(b.ip ? [b.ip] : []), ...(b.ips ?? [])];
      validIps(b.ip ? [b.ip] : [], 'body.ip');
      validIps(b.ips ?? [], 'body.ips');
      const unknown = (b.ports ?? [])
        .map((p, i) => (store.ports.has(p) ? undefined : { field: `body.ports[${i}]`, reason: `no proxy port ${p}` }))
        .filter((d) => d !== undefined);
      if (unknown.length) throw new HttpError(400, 'Invalid request', { details: unknown });
      ban(b.ports ?? [...store.ports.keys()], ips, b.domain, b.ms);
      return { status: 204 };
    },

    getRefreshSessions: refreshSession,
    refreshSessions: refreshSession,

    getSettings: () => ({ body: settingsView() }),

    updateSettings: (ctx) => {
      const b = ctx.body as {
        zone?: string;
        www_whitelist_ips?: string[];
        whitelist_ips?: string[];
        logs?: boolean | number;
        request_stats?: boolean;
        logs_settings?: object | null;
      };
      // A Cloud Proxy Manager setting: the local manager refuses it before looking at anything else.
      if (b.logs_settings) throw new HttpError(400, 'Available only in Cloud Proxy Manager');
      if (b.zone !== undefined && !store.zones.has(b.zone)) throw badRequest('body.zone', `Zone ${b.zone} does not exist`);
      for (const key of ['www_whitelist_ips', 'whitelist_ips'] as const) {
        const details = (b[key] ?? [])
          .map((ip, i) =>
            ip !== 'any' && isWhitelistEntry(ip) ? undefined : { field: `body.${key}[${i}]`, reason: `${ip} is not an IP or subnet` },
          )
          .filter((d) => d !== undefined);
        if (details.length) throw new HttpError(400, 'Invalid request', { details });
      }
      const s = m().settings;
      if (b.zone !== undefined) s.zone = b.zone;
      if (b.www_whitelist_ips) s.www_whitelist_ips = [...new Set(b.www_whitelist_ips)];
      if (b.whitelist_ips) s.whitelist_ips = [...new Set(b.whitelist_ips)];
      // The manager keeps `logs` as the number of requests logged; a boolean switches it between 1000 and 0.
      if (b.logs !== undefined) s.logs = typeof b.logs === 'number' ? b.logs : b.logs ? 1000 : 0;
      if (b.request_stats !== undefined) s.request_stats = b.request_stats;
      log(`settings changed: ${Object.keys(b).join(', ') || '(nothing)'}`);
      return { body: settingsView() };
    },

    listZones: () => ({
      body: {
        zones: [...store.zones.values()]
          .filter((z) => !z.disabled)
          .map((z) => {
            const plan = z.plans[z.plans.length - 1];
            return { name: z.name, perm: z.perms.join(' '), plan, password: z.passwords[0] ?? '', refresh_cost: plan?.vip ? 0.02 : null };
          }),
        def: m().settings.zone,
      },
    }),

    refreshZones: () => {
      log('zones refreshed from the account');
      return undefined;
    },

    listAllocatedIps: (ctx) => {
      const name = (ctx.query.zone as string | undefined) ?? m().settings.zone;
      const zone = store.zones.get(name);
      if (!zone) throw badRequest('query.zone', `Zone ${name} does not exist`);
      return { body: { ips: zone.ips } };
    },

    listAllocatedVips: (ctx) => {
      const name = (ctx.query.zone as string | undefined) ?? m().settings.zone;
      const zone = store.zones.get(name);
      if (!zone) throw badRequest('query.zone', `Zone ${name} does not exist`);
      return { body: { ips: zone.gips } };
    },

    refreshIps: (ctx) => {
      const zone = store.zones.get(ctx.body.zone);
      if (!zone) throw badRequest('body.zone', `Zone ${ctx.body.zone} does not exist`);
      const ips = [...new Set(ctx.body.ips as string[])];
      assertHeld(zone.ips, ips, 'body.ips', zone.name, 'an IP');
      replaceIps(store, zone, ips, {}, 'body.ips');
      log(`refreshed ${ips.length} IPs of Zone ${zone.name}`);
      return {
        body: {
          ips: zone.ips.map((ip) => {
            const r = ipRecord(store, ip);
            return { ...r, ext: { ...r.ext, def: r.maxmind } };
          }),
        },
      };
    },

    enableSsl: () => {
      for (const cfg of store.ports.values()) cfg.ssl = true;
      log('SSL analyzing enabled on all ports');
      return { text: 'ok' };
    },

    shutdownManager: () => {
      resetRuntime('shutdown (simulated: the sandbox keeps answering)');
      if (options.onShutdown) setImmediate(options.onShutdown);
      return { body: { result: 'ok' } };
    },

    restartManager: () => {
      resetRuntime('restart');
      return { body: { result: 'ok' } };
    },

    upgradeManager: () => {
      const latest = (m().releases[0] as { ver: string }).ver;
      const from = m().version;
      if (newer(latest, from)) m().version = latest;
      resetRuntime(`upgrade from ${from} to ${m().version}`);
      return { body: { result: 'ok' } };
    },

    listUsers: () => ({ body: m().users }),

    addUser: (ctx) => {
      const email = ctx.body.email as string;
      if (!m().users.some((u) => u.email === email)) m().users.push({ email });
      log(`user ${email} added`);
      return undefined;
    },

    getGeneralLogs: (ctx) => {
      const limit = (ctx.query.limit as number | undefined) ?? 100;
      return { text: m().general_log.slice(-limit).join('\n') };
    },

    getLogs: (ctx) => {
      const q = ctx.query;
      let search: RegExp | undefined;
      if (q.search !== undefined) {
        try {
          search = new RegExp(q.search);
        } catch {
          throw badRequest('query.search', 'is not a valid regular expression');
        }
      }
      const sortKey = (q.sort as string | undefined) ?? 'uuid';
      const getter = harField[sortKey];
      if (!getter) throw badRequest('query.sort', `must be one of ${Object.keys(harField).join(', ')}`);
      const code = q.status_code as string | undefined;
      const codeRe = code ? new RegExp(`^${code.replace(/\*/g, '\\d')}$`) : undefined;
      const matched = m().har.filter(
        (e) =>
          (!search || search.test(e.request.url)) &&
          (q.port_from === undefined || (e.details?.port ?? 0) >= q.port_from) &&
          (q.port_to === undefined || (e.details?.port ?? 0) <= q.port_to) &&
          (!codeRe || codeRe.test(String(e.response.status))),
      );
      const dir = q.sort_desc === true ? -1 : 1;
      matched.sort((a, b) => {
        const x = getter(a);
        const y = getter(b);
        return (x < y ? -1 : x > y ? 1 : 0) * dir;
      });
      const skip = (q.skip as number | undefined) ?? 0;
      const entries = q.limit !== undefined ? matched.slice(skip, skip + (q.limit as number)) : matched.slice(skip);
      return {
        body: {
          log: { version: '1.2', creator: { name: 'zone-api-sandbox', version: m().version }, pages: [], entries },
          total: matched.length,
          skip,
          sum_in: matched.reduce((n, e) => n + (e.details?.in_bw ?? 0), 0),
          sum_out: matched.reduce((n, e) => n + (e.details?.out_bw ?? 0), 0),
        },
      };
    },
  };
}
