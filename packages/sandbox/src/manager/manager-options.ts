import { GIP_REFRESH_COST } from '../domain/money.js';
import { PORT_DEFAULTS } from '../domain/port-defaults.js';
import type { ProxyPortConfig, ZoneState } from '../domain/types.js';
import { PROVIDER_DOMAIN } from '../shared/brand.js';
import { spreadInPieces } from '../shared/in-pieces.js';
import type { ManagerContext } from './context.js';
import { PORTS_LIMIT } from './multiply.js';

// The manager's options as the real local proxy manager 1.570.247 holds them: its built-in defaults and
// the manager-wide settings (`GET /api/defaults`), and a port's complete configuration, which a create
// and an update answer as `{data}` (`complete_proxy_config`, lib/mixins/mgr_proxy.js 45-63).

// biome-ignore lint/suspicious/noExplicitAny: options hold what a client sent
type Json = any;

/**
 * Manager-wide values the real manager 1.570.247 holds from its built-in defaults and its command line,
 * which the sandbox shows and no request changes: `GET /api/settings` (lib/mixins/mgr_config.js 47-90),
 * `GET /api/defaults` and a port's complete configuration read them here, and nowhere else.
 */
export const MANAGER_BUILT_INS = {
  debug: PORT_DEFAULTS.debug,
  lpm_auth: 'none',
  av_server: false,
  reseller: false,
  new_ui: false,
  socket_inactivity_timeout: PORT_DEFAULTS.socket_inactivity_timeout,
} as const;

/**
 * The real manager's API body limit, as `GET /api/settings` shows it and in bytes (its `api_body_limit`,
 * util/lpm_config_static.js 126, read by its body parsers, web_server.js 166-176; express's `bytes`
 * counts a `mb` as 1,048,576): a sandbox stricter than it breaks clients.
 */
export const API_BODY_LIMIT = { shown: '2mb', bytes: 2 * 1024 * 1024 } as const;

/** The real manager's port of its newer upstream, its default (util/lpm_config_static.js 74). */
const NEW_PROXY_PORT = 33_335;
/** How often the real manager resolves its upstream's addresses, in ms (util/lpm_config_static.js 78). */
const RESOLVE_PROXIES_INTERVAL = 10_000;

/** The cloud's description of one Zone (its `_defaults.zones` entry, lib/zones.js 33-47): passwords, current plan, permissions, prices. */
export function cloudZone(z: ZoneState): Record<string, Json> {
  const plan = z.plans[z.plans.length - 1];
  return {
    ips: 'any',
    kw: {},
    cost: { gb: z.price_per_gb },
    refresh_cost: zoneRefreshCost(plan),
    password: [...z.passwords],
    plan: plan ?? {},
    perm: z.perms.join(' '),
  };
}

/** What refreshing one gIP of a Zone costs: its plan's gIPs, else none (`null`). listZones and the cloud's Zones answer it. */
export const zoneRefreshCost = (plan: { vip?: unknown } | undefined): number | null => (plan?.vip ? GIP_REFRESH_COST : null);

/**
 * The permissions the real manager reads from a Zone's plan (lib/zones.js 6-31, `get_perm`): a static
 * plan has country and IP routing (and city with `city`); another plan country and vip, and each kind it
 * has of city, asn, mobile, state and zip. A Zone without a plan type has its cloud's `perm`.
 */
export function planPerms(plan: Record<string, unknown> | undefined, perm: string): string[] {
  if (!plan?.type) return perm.split(' ');
  if (plan.type === 'static') return ['country', 'ip', 'route_all', 'route_dedicated', ...(plan.city ? ['city'] : [])];
  const kinds: Record<string, string[]> = {
    city: ['state', 'city'],
    asn: ['asn', 'carrier', 'state'],
    mobile: ['mobile', 'asn', 'carrier', 'state', 'city'],
    state: ['state'],
    zip: ['zip'],
  };
  const out = ['country', 'vip', ...Object.entries(kinds).flatMap(([k, v]) => (plan[k] ? v : []))];
  if (plan.vips_type === 'domain_p') out.push('vip_all');
  return [...new Set(out)];
}

export function managerOptions(c: ManagerContext) {
  const { store, options, m } = c;
  const b = MANAGER_BUILT_INS;

  /**
   * The port of the manager's upstream: the one it runs with (`--proxy_port`, the sandbox's network when
   * ports carry traffic), else the built-in one (mgr_config.js 41-45, `get_mgr_proxy_port`). The settings,
   * the defaults and a port's complete configuration show it.
   */
  const upstreamPort = (): number => options.portDefaults?.().proxy_port ?? PORT_DEFAULTS.proxy_port;

  /** The manager's `logs_settings`: a Cloud Proxy Manager's, none on a local one (an update of it is refused, settings.ts). */
  const logsSettings = () => ({});

  /**
   * The manager's effective options (`GET /api/defaults`, the real manager's `opts`): a new port's
   * defaults and the manager-wide settings, under the names the real manager uses.
   */
  function defaults(): Record<string, Json> {
    const s = m().settings;
    const d = PORT_DEFAULTS;
    const run = options.portDefaults?.() ?? {};
    return {
      multiply: 0,
      multiply_users: false,
      ssl: d.ssl,
      tls_lib: 'open_ssl',
      av_check: false,
      customer: s.customer,
      zone: s.zone,
      password: s.password,
      proxy: run.proxy ?? d.proxy,
      proxy_port: upstreamPort(),
      proxy_connection_type: d.proxy_connection_type,
      proxy_retry: d.proxy_retry,
      dns: d.dns,
      reverse_lookup_dns: false,
      session: true,
      sticky_ip: d.sticky_ip,
      rotate_session: d.rotate_session,
      throttle: '',
      route_err: d.route_err,
      debug: b.debug,
      lpm_auth: b.lpm_auth,
      const: false,
      multiply_ips: false,
      multiply_vips: false,
      max_ban_retries: d.max_ban_retries,
      preset: 'session_long',
      ua: false,
      follow_redirect: false,
      whitelist_ips: s.whitelist_ips,
      www_whitelist_ips: s.www_whitelist_ips,
      www: options.wwwPort?.() ?? 0,
      config: s.config,
      dropin: s.dropin,
      dropin_port: d.proxy_port,
      no_usage_stats: true,
      high_perf: false,
      zagent: s.zagent,
      reseller: b.reseller,
      cluster: false,
      sync_config: s.sync_config,
      sync_zones: true,
      sync_stats: true,
      request_stats: s.request_stats,
      test_url: s.test_url,
      log: s.log,
      logs: s.logs,
      logs_settings: logsSettings(),
      har_limit: s.har_limit,
      ports_limit: PORTS_LIMIT,
      ui_ws: true,
      force: false,
      session_termination: false,
      local_login: false,
      read_only: s.read_only,
      extra_ssl_ips: [],
      new_ui: b.new_ui,
      api_body_limit: API_BODY_LIMIT.shown,
      api_parameter_limit: 10000,
      socket_inactivity_timeout: b.socket_inactivity_timeout,
      api_domain: PROVIDER_DOMAIN,
    };
  }

  /**
   * A port's complete configuration, which a create and an update answer (`complete_proxy_config`,
   * lib/mixins/mgr_proxy.js 45-63): the manager's built-in defaults and its settings (util/lpm_config.js
   * `manager_default`, the manager's `_defaults`: the provider's domains, the files it keeps, the cloud's
   * Zones), then the port's configuration `cfg`, then the manager's upstream port, what the port's Zone
   * permits (`ssl_perm`; `state_perm` and `zip_perm` only for a Zone the account has) and the addresses of
   * the upstream (`hosts`). The sandbox keeps its files in its store, which `config` names. `started`:
   * what starting the port changes of `cfg` (port-config.ts startedFields), spread over it here rather
   * than over a copy of it.
   */
  async function complete(cfg: ProxyPortConfig, started: Record<string, Json> = {}, at?: StartedWith): Promise<Record<string, Json>> {
    const run = options.portDefaults?.() ?? {};
    const store_ = String(m().settings.config);
    const now = defaults();
    const head: Record<string, Json> = {
      ...(at ? { ...at.defaults, ...pick(now, PROPAGATED) } : now),
      new_proxy_port: NEW_PROXY_PORT,
      proxy_country: '',
      resolve_proxies_interval: RESOLVE_PROXIES_INTERVAL,
      info: false,
      av_server: b.av_server,
      cn: false,
      // The manager's built-in default (util/lpm_config.js `manager_default`), not how it runs (`opts`, from its command line).
      cluster: true,
      config: store_,
      loki: store_,
      session_path: store_,
      www_domain: PROVIDER_DOMAIN,
      www_api: `https://${PROVIDER_DOMAIN}`,
      www_help: `https://help.${PROVIDER_DOMAIN}`,
      zones: Object.fromEntries([...store.zones.values()].map((z) => [z.name, cloudZone(z)])),
      num_workers: 1,
    };
    // `{...head, ...cfg, ...started, proxy_port}`, with the port's fields copied in pieces (a port may
    // hold tens of thousands of unknown fields, as the real manager stores them).
    const out = await spreadInPieces(head, cfg);
    Object.assign(out, started, { proxy_port: upstreamPort() });
    const perms = at?.perms ?? zonePerms(out.zone);
    out.ssl_perm = perms.ssl_perm;
    for (const k of ['state_perm', 'zip_perm'] as const) {
      if (perms[k] === undefined) delete out[k];
      else out[k] = perms[k];
    }
    out.hosts = [run.proxy ?? PORT_DEFAULTS.proxy];
    // What the real manager sets from its cloud's answers, whatever the port's own: none offline (`undefined`, not sent).
    for (const k of ['cn_hosts', 'zone_auth_type_whitelist', 'lb_ips', 'banlist_sync']) delete out[k];
    return out;
  }

  /** What a Zone permits a port (complete_proxy_config, mgr_proxy.js 48-53): `ssl_perm`; `state_perm` and `zip_perm` only for a Zone the account has. */
  function zonePerms(name: unknown): ZonePerms {
    // `zones_mgr.get_obj(c.zone)` compares `z.zone==zname`: a one-name list names that Zone, other values none.
    const zone = store.zones.get(String(name));
    const plan = zone?.plans[zone.plans.length - 1] as Record<string, unknown> | undefined;
    const perms = zone && planPerms(plan, zone.perms.join(' '));
    return { ssl_perm: !!plan?.ssl, state_perm: perms?.includes('state'), zip_perm: perms?.includes('zip') };
  }

  // The last settings a port started with, shared by the ports that start with the same (ports of one
  // configuration hold one copy, not one each).
  let lastDefaults: { text: string; value: Record<string, Json> } | undefined;
  /** What a port takes from the manager as it starts (StartedWith): the settings and its Zone's permissions now. */
  function startedWith(cfg: ProxyPortConfig): StartedWith {
    const now = defaults();
    const text = JSON.stringify(now);
    if (lastDefaults?.text !== text) lastDefaults = { text, value: now };
    const zone = 'zone' in cfg ? (cfg as Record<string, Json>).zone : now.zone;
    return { defaults: lastDefaults.value, perms: zonePerms(zone) };
  }

  return { defaults, complete, startedWith, upstreamPort, logsSettings };
}

/** What a Zone permits a port: `state_perm` and `zip_perm` are left out for a Zone the account does not have. */
export interface ZonePerms {
  ssl_perm: boolean;
  state_perm?: boolean;
  zip_perm?: boolean;
}

/**
 * What a running port took from the manager when it started (a create, a restart, a move): the real
 * manager 1.570.247 builds a port's options once, as it starts it (`complete_proxy_config`, mgr_proxy.js
 * 45-63, 65-66), and an update in place assigns the update over them (`update_config`, lib/proxy_port.js
 * 214-234). So an update's answer shows the settings of the port's start and the permissions of the Zone
 * it started with, except the settings the manager sends to its running ports when they change (PROPAGATED).
 */
export interface StartedWith {
  defaults: Record<string, Json>;
  perms: ZonePerms;
}

/**
 * The settings a change of which the real manager sends to every running port (`update_ports`,
 * mgr_config.js 130-140, 181-190), and `zone`, which it sends to the ports stored without a Zone of
 * their own (mgr_config.js 116-128; a port with its own Zone shows that one).
 */
const PROPAGATED = ['zone', 'har_limit', 'debug', 'lpm_auth', 'logs_settings', 'socket_inactivity_timeout'] as const;

const pick = (o: Record<string, Json>, keys: readonly string[]): Record<string, Json> => Object.fromEntries(keys.map((k) => [k, o[k]]));
