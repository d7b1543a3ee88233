import { PORT_DEFAULTS } from '../domain/port-defaults.js';
import type { Store } from '../domain/state.js';
import type { ProxyPortConfig } from '../domain/types.js';
import type { Ctx } from '../router/api-options.js';
import type { ManagerTable } from '../router/handlers.js';
import type { OpenApiDoc } from '../router/spec.js';
import { HttpError } from '../shared/errors.js';
import type { FieldTypes, PortFacts } from './port-config.js';

// What the manager's handler modules share: the store, the options, the general log, and the rules
// about a port (which port a path names, its status, its effective config, restart semantics). Each
// module of this folder is one tag of the manager spec and a table of handlers by operationId.

export type ManagerCtx = Ctx<undefined>;
/** A module's handlers, typed by operationId: `return { … } satisfies ManagerHandlers`. */
export type ManagerHandlers = Partial<ManagerTable<undefined>>;
/** Every operation's handler, typed by its operationId. */
export type ManagerHandlerTable = ManagerTable<undefined>;

export interface ManagerOptions {
  /** Ports the sandbox itself listens on: a proxy port may not take them ("in use by the UI/API and UI/WebSocket", the real manager's words for its own, mgr_proxy.js 611-612). */
  reservedPorts: () => number[];
  /**
   * `--strict`: also refuse what the real manager accepts but cannot serve (a port created for a Zone
   * the account does not have; the real 1.570.247 creates it and its requests then fail upstream).
   */
  strict?: boolean;
  /** The type of each port field (the spec's `ProxyPort`), for the real manager's conversions (port-config.ts). */
  portFieldTypes?: FieldTypes;
  /** The command line reported by `GET /api/version`. */
  argv: string;
  /** Called after `POST /api/shutdown` has been answered (the CLI may exit; tests keep running). */
  onShutdown?: () => void;
  /**
   * Defaults a port shows that come from how the sandbox runs: its upstream (`proxy`, `proxy_port`), as
   * the real manager shows its own flags.
   */
  portDefaults?: () => { proxy?: string; proxy_port?: number };
  /** The manager bundle, for what the sandbox answers from the spec (the port fields of `GET /api/consts`). */
  doc?: OpenApiDoc;
  /** The port the manager API listens on (`www` in `GET /api/defaults`), once it listens. */
  wwwPort?: () => number;
  /** The listening proxy ports, when ports carry traffic: a created port listens, a deleted one closes. */
  ports?: {
    open(cfg: ProxyPortConfig): Promise<unknown>;
    close(port: number): Promise<void>;
    /** The port's status check (`test_url` through the port, as the real manager's): `ok`, else the status the real manager reads. */
    check(cfg: ProxyPortConfig, testUrl: string, userAgent: string): Promise<string>;
    /** Calls `listener` with the port of each request through a port that succeeds. */
    onSuccess?(listener: (port: number) => void): void;
  };
}

/** A port's defaults: their one home is domain/port-defaults.ts. */
export { PORT_DEFAULTS };

export type ManagerContext = ReturnType<typeof managerContext>;

/** The general log's bounds: their home is domain/logs.ts. */
export { LOG_LINE_MAX, LOG_MAX } from '../domain/logs.js';

export function managerContext(store: Store, options: ManagerOptions) {
  const m = () => store.manager;

  /** One line of the general log (domain/logs.ts). */
  const log = (line: string): void => store.logs.line(line);

  /**
   * A port named in a path as the real manager looks most of them up: as a key of its running ports
   * (`this.proxy_ports[port]`, web_api.js 437-493, 508-555), so that `024000`, `0x5DC0` or `abc` name
   * none. The path parameter comes as the request gave it where the spec marks it unchecked, else as
   * the number it was validated to.
   */
  function portByKey(raw: unknown): ProxyPortConfig | undefined {
    const port = Number(raw);
    return String(port) === String(raw) ? store.ports.get(port) : undefined;
  }

  /**
   * The port of the path (by key, portByKey). An unknown one is refused as the real manager refuses
   * it: `400 No proxy at port N`, sent in the form the operation declares for 400 (text, `{errors}`,
   * or the status alone).
   */
  function portOf(ctx: ManagerCtx): ProxyPortConfig {
    const cfg = portByKey(ctx.params.port);
    if (!cfg) throw new HttpError(400, `No proxy at port ${ctx.params.port}`);
    return cfg;
  }

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

  /**
   * What the manager stores with a new port (lib/mixins/mgr_proxy.js 171-176): the password of its Zone
   * (else the one given, else the manager's), the Zone's price per GB (lib/zones.js 93-103) and the
   * default whitelist: the command line's, the admin whitelist and the ports' default (lib/manager.js 508-515).
   */
  function portFacts(given: { zone?: unknown; password?: unknown }): PortFacts {
    const s = m().settings;
    // Looked up as the real manager compares (`z.zone==zname`): a one-name list names that Zone, other values none.
    const zone = store.zones.get(String(given.zone || s.zone));
    const password = zone?.passwords[0] ?? (typeof given.password === 'string' && given.password ? given.password : s.password) ?? '';
    const whitelist = [...(s.fixed_whitelist_ips ?? []), ...(s.www_whitelist_ips ?? []), ...(s.whitelist_ips ?? [])];
    return { password, gb_cost: zone?.price_per_gb ?? 0, plan: (zone?.plans.at(-1) ?? {}) as Record<string, unknown>, whitelist };
  }

  /** Restart semantics: the configuration stays, the running state (bans, sessions, token rate) starts over. */
  function resetRuntime(what: string): void {
    store.restartPorts();
    log(`${what}: ports ${[...store.ports.keys()].join(', ') || '(none)'} restarted with their configuration`);
  }

  return { store, options, m, log, portByKey, portOf, status, portFacts, resetRuntime };
}
