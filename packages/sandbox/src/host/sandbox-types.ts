import type { Call, CallFilter } from '../control/calls.js';
import type { FaultControl } from '../control/control.js';
import type { Overrides } from '../control/overrides.js';
import type { AnswerForms, StateData } from '../domain/types.js';
import type { Handler } from '../router/api-options.js';
import type { AccountOperationId, ApiName, ManagerOperationId, OpenApiDoc } from '../router/spec.js';
import type { SandboxCredentials } from './boot.js';

// What startSandbox() takes (its options) and gives (the sandbox, its accounts, their managers): the
// package's public surface, documented here once; sandbox.ts builds it.

export interface SandboxOptions {
  /**
   * The account API's answers where the seed documentation and the provider's API reference disagree:
   * `live` (default), the reference's forms, which the clients of the live service read (route_ips one
   * IP per line, a Zone's `ips` an array), or `seed`, the seed documentation's (a range, a summary
   * string). Overrides the seed's `account.answer_forms` (the seed builder's `answerForms()`).
   */
  answerForms?: AnswerForms;
  /** Interface to listen on. Default 127.0.0.1 (loopback only). */
  host?: string;
  /**
   * Port of the account API. Default 0: a free port (read it from `accountUrl`), so that sandboxes run
   * side by side; the CLI keeps the well-known 8787 (DEFAULT_ACCOUNT_PORT).
   */
  accountPort?: number;
  /**
   * `false`: the APIs listen on no port at all and answer only in process, through `handle()` (the MSW
   * adapter, `@zone-api/sandbox/msw`); `accountUrl` and `managerUrl` are then empty and the ports 0.
   * Default true. The proxy network and ports listen as asked, either way.
   */
  listen?: boolean;
  /** Port of the manager API. Default 0: a free port (`managerUrl`); the CLI keeps the real manager's 22999 (DEFAULT_MANAGER_PORT). */
  managerPort?: number;
  /**
   * With `proxyPorts`: the proxy ports of the seed (or the data file) listen on free ports instead of
   * their numbers; the state holds the new numbers, and `ports.proxy` maps each seed number to its
   * port. Default on, so that sandboxes with traffic run side by side; `false`: they listen on their
   * own numbers (24000, …), as the CLI does without `--free-ports`.
   */
  freeProxyPorts?: boolean;
  /**
   * Keep the state in this JSON file across restarts: a snapshot plus `<file>.journal`, each change
   * written before its answer. Default: in memory only.
   */
  dataFile?: string;
  /**
   * With `dataFile`: `interval` (default) writes each change to the operating system before its
   * answer (it survives the process being killed) and fsyncs once a second; `always` fsyncs each
   * group of changes before their answers (it survives a power loss too, at the disk's pace).
   */
  fsync?: 'always' | 'interval';
  /** The seed: a path to a JSON seed file, the seed itself, or a seed builder (`seed().zone(…)`). Default: the built-in seed. */
  seed?: string | StateData | { build(): StateData };
  /** Directory holding `account.openapi.json` and `manager.openapi.json`. Default: `ZONE_API_SANDBOX_SPEC_DIR`, else the `@zone-api/spec` package. */
  specDir?: string;
  /** The bundles themselves (tests use this to start against a changed spec). */
  specs?: Partial<Record<ApiName, OpenApiDoc>>;
  /**
   * Answers of single operations for a test, typed by operationId from the spec; each answer is
   * checked against the spec when sent (one it refuses is a 500 naming the field):
   * `overrides: { account: { getBalance: () => ({ body: { balance: 0, pending_costs: 0 } }) } }`.
   */
  overrides?: Overrides;
  /** Replace or add handlers by operationId, unchecked; `null` removes one (tests of the start-up contract). */
  handlers?: Partial<Record<ApiName, Record<string, Handler<never> | null>>>;
  /**
   * Refuse request fields the provider's documentation does not name (400 naming each), and values it does not list. Default
   * off: such fields are accepted, ignored and listed in `X-Sandbox-Ignored-Fields`, as the provider
   * accepts them (docs/behaviour.md).
   */
  strict?: boolean;
  /** fastify's request log on stdout. Default off (it costs throughput). */
  logger?: boolean;
  /** Called after `POST /api/shutdown` of the manager has been answered. */
  onShutdown?: () => void;
  /** The command line `GET /api/version` reports. */
  argv?: string;
  /**
   * Token the control endpoints (`/__sandbox/*`) require in `X-Sandbox-Control-Token`. Default: none on
   * loopback; beyond loopback (`host` 0.0.0.0 or an interface address) a random one is made.
   */
  controlToken?: string;
  /**
   * The emulated proxy network (the provider's super proxy) on this port: 22225 is the real upstream's,
   * 0 a free one. Default: none (the CLI starts it on 22225).
   */
  networkPort?: number;
  /**
   * The proxy ports' upstream, manager-wide, as the real manager's `--proxy` and `--proxy_port` set it
   * (the only upstream it honours: a port's own `proxy` and `proxy_port` are stored and shown, but its
   * traffic goes here; lib/mixins/mgr_proxy.js 45-57, lib/server.js 140-142 and 713-721). Default: the
   * sandbox's network. `port` defaults to 22225, the real one's. An upstream beyond loopback must be
   * allowed by `egressAllow`.
   */
  upstream?: { host: string; port?: number };
  /**
   * Manager proxy ports listen and forward (each an HTTP proxy on its `iface`, loopback by default).
   * Default off, so that many sandboxes can run side by side (the CLI turns it on).
   */
  proxyPorts?: boolean;
  /** Traffic targets beyond loopback that the network and the ports may reach: `*`, host names, `.domains`, IPs, subnets. */
  egressAllow?: string[];
  /** CA certificates (PEM) the network trusts for HTTPS targets beside the system's (e.g. a local HTTPS service's own CA). */
  targetCa?: string[];
}

/** What `createAccount()` takes: a seed builder (`seed.empty().zone(…)`) or a seed. */
export type AccountSeed = StateData | { build(): StateData };

export interface CreateAccountOptions {
  /**
   * A manager of the account's own: its manager API on a free port, and (when the sandbox's ports
   * listen) its seed's proxy ports on free ports, forwarding to the sandbox's network with its own
   * Zone passwords. Its ports, bans, logs and settings are its own. Default off: the account shares
   * the sandbox's manager, as one customer's several machines would not.
   */
  manager?: boolean;
}

/** An account's own manager (`createAccount(seed, { manager: true })`). */
export interface SandboxAccountManager {
  /** Its manager API, e.g. `http://127.0.0.1:41234`. */
  url: string;
  /** Its manager API's port, and each proxy port of its seed -> the port it listens on. */
  ports: { manager: number; proxy: Record<string, number> };
  /** Its proxy ports that listen now. */
  listeningPorts(): number[];
}

/** One customer of a sandbox made by `createAccount()`. */
export interface SandboxAccount {
  customer: string;
  /** Its admin API token (bearer). */
  token: string;
  credentials: SandboxCredentials;
  /** Its own clock (ban expiry, usage days, cooling periods). */
  clock: { now(): Date; advance(ms: number): void; set(at: string): void; reset(): void };
  /** Faults of the account API for this account's requests only. */
  faults: FaultControl<AccountOperationId>;
  /** The calls this account made. */
  calls(filter?: Omit<CallFilter, 'account'>): Call[];
  /** A copy of its state. */
  state(): StateData;
  /** Its own manager, when created with `{ manager: true }`. */
  manager?: SandboxAccountManager;
  /** Back to its seed (its own manager's ports too). */
  reset(): Promise<void>;
  /** Removes the account: its credentials stop working, its own manager and ports close. */
  remove(): Promise<void>;
}

/** Where a sandbox listens. */
export interface SandboxPorts {
  account: number;
  manager: number;
  /** The proxy network's port, when it runs. */
  network?: number;
  /** Each proxy port of the seed (or data file) -> the port it listens on (the same number with `freeProxyPorts: false`). */
  proxy: Record<string, number>;
}

export interface Sandbox {
  /** The ports it listens on, and where the seed's proxy ports went. */
  ports: SandboxPorts;
  /**
   * The calls received, oldest first, as `GET /__sandbox/calls` lists them: per API, operation and
   * account (`{ operationId: 'getZone', account: 'hl_1a2b3c4d' }`), each with its method, path,
   * params, body (credentials redacted; no headers are kept), status and time.
   */
  calls(filter?: CallFilter): Call[];
  /** Forgets the calls received (of one account when given); returns how many. */
  clearCalls(account?: string): number;
  /**
   * A new customer on this sandbox, in milliseconds (as `POST /__sandbox/accounts`): from `seed` (a
   * seed builder or a seed; the built-in one by default) with a customer id and secrets of its own. Its
   * Zones, usage, logs, clock and faults are its own; its requests go to the same APIs and network,
   * with its token and Zone passwords; another account's customer named with its token gets the 401 of a
   * customer that does not exist (parity-account.yaml, `listActiveZones.foreignCustomer`).
   */
  createAccount(seed?: AccountSeed, options?: CreateAccountOptions): Promise<SandboxAccount>;
  /**
   * Fault injection per API, in process (what `/__sandbox/faults` does over HTTP), with typed
   * operationIds: `sandbox.faults.account.arm({ operationId: 'getZone', status: 503, count: 1 })`.
   */
  faults: { account: FaultControl<AccountOperationId>; manager: FaultControl<ManagerOperationId> };
  /**
   * The sandbox's clock (ban expiry, usage days, cooling periods, the token rate limit), as
   * `/__sandbox/clock` moves it: `advance(ms)`, `set(isoDate)` (forward only), `reset()` to real time.
   */
  clock: { now(): Date; advance(ms: number): void; set(at: string): void; reset(): void };
  /** The token `/__sandbox/*` requires (`X-Sandbox-Control-Token`), if any. */
  controlToken?: string;
  /** Where the account API listens (empty with `listen: false`). */
  accountUrl: string;
  /** Where the manager API listens (empty with `listen: false`). */
  managerUrl: string;
  /** The proxy network (`http://127.0.0.1:22225`), when it runs: send `curl -x` traffic here with a Zone's credentials. */
  networkUrl?: string;
  /** The manager ports that listen now. */
  listeningPorts(): number[];
  /** The CA certificate (PEM) of SSL analyzing (`ssl: true` ports), as `GET /__sandbox/ca` gives it; undefined when ports do not listen. */
  caCertificate(): Promise<string | undefined>;
  credentials: SandboxCredentials;
  /** Where the state is kept: the data file, or undefined for memory. */
  dataFile?: string;
  /** A copy of the whole state (the shape of a seed). */
  state(): StateData;
  /** Back to the seed (and saved, with a data file). */
  reset(): Promise<void>;
  /**
   * Resolves once every request and tunnel so far is billed (usage, request logs) and logged (the
   * HAR log), and saved with a data file: await it instead of polling. A tunnel counts until it closes.
   */
  settled(): Promise<void>;
  /**
   * Answers a Fetch API `Request` in process, with no socket: the API's router serves it as if it had
   * come over loopback (validation, faults, accounts, the record of calls), whatever host its URL
   * names. What the MSW adapter (`@zone-api/sandbox/msw`) calls. A `drop` fault rejects it.
   */
  handle(api: ApiName, request: Request): Promise<Response>;
  /** Stops both servers after the last write has reached the disk. */
  close(): Promise<void>;
}
