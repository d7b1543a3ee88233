import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { type AccountAuth, authenticateAccount, fillFromCredential } from './account/auth.js';
import { accountHandlers } from './account/index.js';
import { type AccountEntry, Accounts } from './accounts.js';
import { credentialsOf, readSeed, type SandboxCredentials } from './boot.js';
import { type Call, type CallFilter, CallLog } from './calls.js';

export type { SandboxCredentials } from './boot.js';

import { statSync } from 'node:fs';
import { bundlePath, loadBundle } from '@zone-api/spec/model';
import { REAL_MANAGER_BRAND } from './brand.js';
import { controlRoutes, type FaultControl, faultControl, hostAllowed, isLoopbackHost, newControlToken } from './control.js';
import { DataFile, lockDataFile, readState, removeStaleTemps } from './domain/persist.js';
import { validateSeed } from './domain/seed-check.js';
import { Store } from './domain/state.js';
import type { StateData } from './domain/types.js';
import { HttpError } from './errors.js';
import { freePort, portInUse, renumberPorts } from './free-ports.js';
import { authenticateManager, managerErrorBody, managerHandlers } from './manager/index.js';
import { portFieldTypes } from './manager/port-config.js';
import { checkedOverrides, type Overrides } from './overrides.js';
import { accountAliases } from './router/aliases.js';
import { FaultRegistry } from './router/faults.js';
import { type AnsweredCall, buildApi, type Handler } from './router/http.js';
import {
  type AccountOperationId,
  type ApiName,
  type ManagerOperationId,
  type OpenApiDoc,
  type OperationDef,
  routesOf,
} from './router/spec.js';
import { SandboxCa } from './traffic/ca.js';
import { PortTraffic, startTraffic } from './traffic/index.js';
import { Inflight } from './traffic/inflight.js';

export const DEFAULT_ACCOUNT_PORT = 8787;
export const DEFAULT_MANAGER_PORT = 22999;
export const DEFAULT_HOST = '127.0.0.1';
/** Sent with every manager `/api` response, as the real manager does (the date is the sandbox's choice). */
export const MANAGER_SUNSET = 'Thu, 31 Dec 2026 23:59:59 GMT';

export interface SandboxOptions {
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
   * port. Default off: they listen on their own numbers (24000, …), as the CLI does without `--free-ports`.
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
   * accepts them (see the README).
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

interface OwnManager {
  url: string;
  port: number;
  proxy: Record<string, number>;
  listening(): number[];
  /** After the account's state went back to its seed: the seed's ports mapped again, and listening. */
  reset(): Promise<void>;
  settled(): Promise<void>;
  close(): Promise<void>;
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
  /** Each proxy port of the seed (or data file) -> the port it listens on (the same number unless `freeProxyPorts`). */
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
   * with its token and Zone passwords; another account's token is refused as a foreign customer's.
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

/** Statuses whose answer has no body (a Fetch API Response refuses one). */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

/**
 * A bundle as read from disk, the same object again while the file is unchanged: the validators,
 * compiled per bundle object, then serve every sandbox of the process (a warm start compiles nothing).
 */
const bundles = new Map<string, { mtimeMs: number; size: number; doc: OpenApiDoc }>();
function bundleOf(api: ApiName, dir: string | undefined): OpenApiDoc {
  const file = bundlePath(api, { dir, ext: 'json' });
  const { mtimeMs, size } = statSync(file);
  const key = `${api}\n${file}`;
  const hit = bundles.get(key);
  if (hit && hit.mtimeMs === mtimeMs && hit.size === size) return hit.doc;
  const doc = loadBundle(api, { dir });
  bundles.set(key, { mtimeMs, size, doc });
  return doc;
}

/** Starts both APIs on loopback. See the package README for the control endpoints under `/__sandbox/`. */
export async function startSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const specDir = options.specDir ?? process.env.ZONE_API_SANDBOX_SPEC_DIR;
  const specs: Record<ApiName, OpenApiDoc> = {
    account: options.specs?.account ?? bundleOf('account', specDir),
    manager: options.specs?.manager ?? bundleOf('manager', specDir),
  };
  const seed = readSeed(options.seed, specs);
  const dataFile = options.dataFile;
  const unlock = dataFile ? lockDataFile(dataFile) : () => {};
  try {
    return await startLocked(options, specs, seed, dataFile, unlock);
  } catch (err) {
    unlock();
    throw err;
  }
}

async function startLocked(
  options: SandboxOptions,
  specs: Record<ApiName, OpenApiDoc>,
  seed: StateData,
  dataFile: string | undefined,
  unlock: () => void,
): Promise<Sandbox> {
  let initial = seed;
  if (dataFile) {
    removeStaleTemps(dataFile);
    const saved = readState(dataFile);
    if (saved !== undefined) {
      validateSeed(saved, specs, `data file ${dataFile}`);
      initial = saved;
    }
  }
  const store = new Store(initial);
  const saver = dataFile
    ? new DataFile(
        dataFile,
        {
          sectionsJson: (all) => store.sectionsJson(all),
          snapshot: () => `${store.toJson({ saved_at: new Date().toISOString() })}\n`,
        },
        { fsync: options.fsync },
      )
    : undefined;
  // A change is acknowledged once it is written. When the write fails, memory goes back to what the
  // disk holds (every change still waiting for that write is undone) and the request gets a 503.
  const persist = async () => {
    if (!saver) return;
    try {
      await saver.save();
    } catch (err) {
      const acked = saver.acknowledged();
      if (acked) {
        store.load(acked as StateData);
        // The listeners follow the state gone back to: a port the undone change created closes, one it deleted listens again.
        for (const f of (await traffic.ports?.sync()) ?? []) console.error(`[zone-api sandbox] port ${f.port} cannot listen (${f.error})`);
      }
      const code = (err as NodeJS.ErrnoException).code;
      throw new HttpError(503, `The change could not be saved to the data file (${code ?? (err as Error).message}), so it was not made`, {
        headers: { 'Retry-After': '1' },
      });
    }
  };
  // The first write is a snapshot: of the seed, or of the data file with its journal folded in.
  if (saver) await saver.save();

  const host = options.host ?? DEFAULT_HOST;
  const listening: number[] = [];
  const faults = { account: new FaultRegistry(), manager: new FaultRegistry() };
  const calls = new CallLog();
  const accounts = new Accounts(() => store, specs);
  const recordCall = (api: ApiName) => (c: AnsweredCall) => {
    const { started: _started, ...rest } = c;
    calls.record({ api, ...rest, time: new Date(store.clock.now() - c.duration_ms).toISOString() });
  };
  const mutates = (op: OperationDef) => op.changesState;

  // Beyond loopback, the control endpoints need a token (given, or made here and shown in the banner).
  const controlToken = isLoopbackHost(host) ? options.controlToken : (options.controlToken ?? newControlToken());
  const idsOf = (api: ApiName) => new Set(routesOf(specs[api]).map((o) => o.operationId));
  const operationIds = { account: idsOf('account'), manager: idsOf('manager') };
  const control = (api: ApiName) =>
    controlRoutes({
      api,
      store,
      reset: () => reload(seed),
      caCertificate: () => traffic.caCertificate(),
      faults: faults[api],
      operationIds: operationIds[api],
      calls,
      accounts: {
        create: (accountSeed, opts) => createAccount(accountSeed, opts),
        remove: (customer) => removeAccount(customer),
        list: () => accounts.list().map((e) => e.customer),
        storeOf: (customer) => accounts.storeOf(customer),
      },
      settled: () => settled(),
      token: controlToken,
    });
  const allowHost = (h: string | undefined) => hostAllowed(host, h);
  const traffic = await startTraffic({
    store,
    host,
    networkPort: options.networkPort,
    proxyPorts: options.proxyPorts === true,
    egressAllow: options.egressAllow ?? [],
    strict: options.strict,
    targetCa: options.targetCa,
    persist,
    now: () => store.clock.now(),
    storeOf: (customer) => accounts.get(customer)?.store,
  }).catch((err: unknown) => {
    throw portInUse('proxy network', options.networkPort ?? 0, host, 'networkPort', '--network-port', err);
  });
  /** Seed port -> the port it listens on, when the seed's ports move to free ones (freeProxyPorts). */
  const moved = new Map<number, number>();
  /** Back to `data` (the seed): the ports that listen follow the state. */
  const reload = async (data: StateData) => {
    store.load(moved.size ? renumberPorts(data, moved) : data);
    const failed = (await traffic.ports?.sync()) ?? [];
    for (const f of failed) console.error(`[zone-api sandbox] port ${f.port} cannot listen (${f.error})`);
    await persist();
  };

  const merge = <A>(api: ApiName, base: Record<string, Handler<A>>): Record<string, Handler<A>> => {
    const out = { ...base, ...checkedOverrides<A>(api, specs[api], options.overrides?.[api] ?? {}, routesOf(specs[api])) };
    for (const [id, h] of Object.entries(options.handlers?.[api] ?? {})) {
      if (h === null) delete out[id];
      else out[id] = h as Handler<A>;
    }
    return out;
  };

  /** The account API's handlers: a created account's requests run its own table over its own Store (overrides stay shared). */
  const perAccount = (table: Record<string, Handler<AccountAuth>>): Record<string, Handler<AccountAuth>> =>
    Object.fromEntries(
      Object.entries(table).map(([id, h]) => {
        if (options.overrides?.account?.[id as AccountOperationId]) return [id, h];
        const dispatch: Handler<AccountAuth> = (ctx) => {
          const other = ctx.auth && ctx.auth.customer !== store.account.customer ? accounts.get(ctx.auth.customer) : undefined;
          return (other?.handlers[id] ?? h)(ctx);
        };
        return [id, dispatch];
      }),
    );
  const account = buildApi<AccountAuth>({
    name: 'account',
    doc: specs.account,
    handlers: perAccount(merge('account', accountHandlers(store))),
    faults: faults.account,
    authenticate: (req, reply, op) => authenticateAccount(accounts.storeFor(req), req, reply, op),
    prepare: fillFromCredential,
    accountOf: (auth) => auth?.customer ?? store.account.customer,
    onCall: recordCall('account'),
    mutates,
    afterChange: persist,
    extraRoutes: control('account'),
    allowHost,
    // The provider's current host serves the account paths without `/api`: both are served (aliases.ts).
    aliases: accountAliases,
    strict: options.strict,
    logger: options.logger,
  });
  /**
   * A manager API over a store: the first account's (with the control endpoints and the data file), or
   * a created account's own, whose proxy ports are its own (`ports`).
   */
  const managerApi = (own: Store, ports: PortTraffic | undefined, reserved: () => number[], first: boolean) =>
    buildApi<undefined>({
      name: 'manager',
      doc: specs.manager,
      handlers: merge(
        'manager',
        managerHandlers(own, {
          reservedPorts: () => (traffic.network ? [...reserved(), traffic.network.port] : reserved()),
          ports,
          portDefaults: () => ({
            ...(ports ? { iface: '127.0.0.1' } : {}),
            ...(traffic.upstream ? { proxy: traffic.upstream.host, proxy_port: traffic.upstream.port } : {}),
          }),
          strict: options.strict,
          portFieldTypes: portFieldTypes(specs.manager),
          argv: options.argv ?? `--port ${first ? (options.managerPort ?? 0) : 0}`,
          doc: specs.manager,
          // Its own API port (`www` of GET /api/defaults): the first account's, or the last reserved (an own manager's, once it listens).
          wwwPort: () => (first ? listening[1] : reserved().at(-1)) ?? 0,
          ...(first ? { onShutdown: options.onShutdown } : {}),
        }),
      ),
      faults: faults.manager,
      authenticate: (req, reply, op) => authenticateManager(own, req, reply, op),
      errorBody: managerErrorBody,
      accountOf: () => own.manager.settings.customer,
      onCall: recordCall('manager'),
      // The real manager's user paths carry its brand (`/api/lpm_users`) where the spec writes `pm`: both are served.
      aliases: (op) => (op.brandPrefix ? [op.url.replace(`/${op.brandPrefix}_`, `/${REAL_MANAGER_BRAND}_`)] : []),
      // Bodies as the real manager's express server reads them (form bodies too; router/bodies.ts), unless strict.
      realBodies: true,
      // The real manager sends every text body as text/html (observed), declared or not.
      textMedia: 'text/html',
      // The real manager's body limit (its api_body_limit, 2 MB by default): a sandbox stricter than it breaks clients.
      bodyLimit: 2 * 1024 * 1024,
      headers: { Deprecation: 'true', Sunset: MANAGER_SUNSET },
      mutates,
      afterChange: first ? persist : async () => {},
      ...(first ? { extraRoutes: control('manager') } : {}),
      allowHost,
      strict: options.strict,
      logger: options.logger,
    });
  const manager = managerApi(store, traffic.ports, () => listening, true);

  /** Created accounts' own managers (createAccount(seed, { manager: true })), by customer. */
  const ownManagers = new Map<string, OwnManager>();
  /**
   * A manager of the account's own: its API on a free port, and its proxy ports listening on free
   * ports when the sandbox's ports listen (the seed's numbers are mapped, as with freeProxyPorts), each
   * forwarding to the sandbox's network with the account's Zone passwords, so that its traffic is
   * billed and logged to it alone.
   */
  const startOwnManager = async (entry: AccountEntry): Promise<OwnManager> => {
    const own = entry.store;
    const inflight = new Inflight();
    let ca: Promise<SandboxCa> | undefined;
    const ports = traffic.ports
      ? new PortTraffic({
          store: own,
          network: () => traffic.upstream,
          egressAllow: options.egressAllow ?? [],
          changed: () => {},
          now: () => own.clock.now(),
          ca: () => {
            ca ??= SandboxCa.create(own.clock.now());
            return ca;
          },
          targetCa: options.targetCa ?? [],
          inflight,
          ...(traffic.network ? { inProcess: traffic.network } : {}),
        })
      : undefined;
    const moved = new Map<number, number>();
    const mine: number[] = [];
    const app = managerApi(own, ports, () => [...listening, ...mine], false);
    try {
      if (ports) {
        for (const cfg of [...own.ports.values()]) moved.set(cfg.port, await ports.open({ ...cfg, port: 0 }));
        own.load(renumberPorts(own.toData(), moved), undefined, true);
      }
      await app.listen({ host, port: 0 });
    } catch (err) {
      await Promise.allSettled([app.close(), ports?.closeAll()]);
      throw err;
    }
    const port = (app.server.address() as AddressInfo).port;
    mine.push(port);
    return {
      url: `http://${urlHost}:${port}`,
      port,
      proxy: Object.fromEntries([...moved].map(([from, to]) => [String(from), to])),
      listening: () => ports?.listening() ?? [],
      reset: async () => {
        if (moved.size) own.load(renumberPorts(own.toData(), moved), undefined, true);
        const failed = (await ports?.sync()) ?? [];
        for (const f of failed) console.error(`[zone-api sandbox] port ${f.port} of ${entry.customer} cannot listen (${f.error})`);
      },
      settled: () => inflight.idle(),
      close: async () => {
        await Promise.allSettled([app.close(), ports?.closeAll()]);
      },
    };
  };
  const createAccount = async (accountSeed?: AccountSeed, opts: CreateAccountOptions = {}): Promise<SandboxAccount> => {
    const entry = accounts.create(accountSeed);
    if (!opts.manager) return handleOf(entry);
    try {
      ownManagers.set(entry.customer, await startOwnManager(entry));
    } catch (err) {
      accounts.remove(entry.customer);
      throw err;
    }
    return handleOf(entry);
  };
  const removeAccount = async (customer: string): Promise<boolean> => {
    if (!accounts.remove(customer)) return false;
    faults.account.clear((f) => f.when?.account === customer);
    const own = ownManagers.get(customer);
    ownManagers.delete(customer);
    await own?.close();
    return true;
  };

  const accountFaults = faultControl<AccountOperationId>('account', faults.account, operationIds.account);
  const handleOf = (entry: AccountEntry): SandboxAccount => {
    const { customer, store: own } = entry;
    const credentials = credentialsOf(own);
    const mine = (f: { when?: { account?: string } }) => f.when?.account === customer;
    const ownManager = ownManagers.get(customer);
    return {
      customer,
      token: credentials.token,
      credentials,
      clock: {
        now: () => new Date(own.clock.now()),
        advance: (ms) => own.clock.advance(ms),
        set: (at) => own.clock.set(at),
        reset: () => own.clock.reset(),
      },
      faults: {
        arm: (spec) => accountFaults.arm({ ...spec, when: { ...spec.when, account: customer } }),
        list: () => faults.account.list().filter(mine),
        clear: () => faults.account.clear(mine),
      },
      calls: (filter) => calls.list({ ...filter, account: customer }),
      state: () => own.toData(),
      ...(ownManager
        ? {
            manager: {
              url: ownManager.url,
              ports: { manager: ownManager.port, proxy: ownManager.proxy },
              listeningPorts: ownManager.listening,
            },
          }
        : {}),
      reset: async () => {
        entry.reset();
        await ownManager?.reset();
      },
      remove: async () => {
        await removeAccount(customer);
      },
    };
  };
  const settled = async () => {
    await Promise.all([traffic.settled(), ...[...ownManagers.values()].map((m) => m.settled())]);
    await persist();
  };
  const handle = async (api: ApiName, request: Request): Promise<Response> => {
    const app = api === 'account' ? account : manager;
    const url = new URL(request.url);
    const headers: Record<string, string> = {};
    request.headers.forEach((v, k) => {
      headers[k] = v;
    });
    // The length is the payload's own; the Host is the sandbox's (the request never left the process).
    delete headers['content-length'];
    delete headers['transfer-encoding'];
    headers.host = `${urlHost}:${api === 'account' ? listening[0] : listening[1]}`;
    const payload = request.method === 'GET' || request.method === 'HEAD' ? undefined : Buffer.from(await request.arrayBuffer());
    const res = await new Promise<Awaited<ReturnType<FastifyInstance['inject']>>>((resolve, reject) => {
      app
        .inject({
          method: request.method as 'GET',
          url: `${url.pathname}${url.search}`,
          headers,
          ...(payload?.length ? { payload } : {}),
        })
        .then(resolve, reject);
    });
    const out = new Headers();
    for (const [k, v] of Object.entries(res.headers)) {
      if (v === undefined) continue;
      for (const one of Array.isArray(v) ? v : [v]) out.append(k, String(one));
    }
    const body = NULL_BODY.has(res.statusCode) || request.method === 'HEAD' ? null : res.rawPayload;
    return new Response(body, { status: res.statusCode, statusText: res.statusMessage, headers: out });
  };
  const listen = async (app: FastifyInstance, port: number, what: string, option: string, flag: string) => {
    try {
      await app.listen({ host, port });
    } catch (err) {
      throw portInUse(what, port, host, option, flag, err);
    }
    return (app.server.address() as AddressInfo).port;
  };
  const seedPorts = [...new Set([...store.ports.keys(), ...seed.manager.ports.map((p) => p.port)])];
  try {
    if (options.listen === false) {
      // No port at all: the APIs answer only in process (handle(), the MSW adapter).
      await Promise.all([account.ready(), manager.ready()]);
      listening.push(0, 0);
    } else {
      listening.push(await listen(account, options.accountPort ?? 0, 'account API', 'accountPort', '--account-port'));
      listening.push(await listen(manager, options.managerPort ?? 0, 'manager API', 'managerPort', '--manager-port'));
    }
    if (traffic.ports && options.freeProxyPorts) {
      // Each port of the state listens on a port the system picks; the state takes the new numbers.
      for (const cfg of [...store.ports.values()]) moved.set(cfg.port, await traffic.ports.open({ ...cfg, port: 0 }));
      // Seed ports absent from a data file get one too, for a reset.
      for (const p of seedPorts) if (!moved.has(p)) moved.set(p, await freePort(host));
      store.load(renumberPorts(store.toData(), moved));
      await persist();
    }
    // The ports of the seed or the data file listen from the start; one that cannot is a failed start.
    const failed = (await traffic.ports?.sync()) ?? [];
    if (failed.length)
      throw new Error(
        `Proxy ports cannot listen: ${failed.map((f) => `${f.port} (${f.error})`).join(', ')}${
          failed.some((f) => f.error === 'EADDRINUSE')
            ? ": pass freeProxyPorts: true (CLI: --free-ports) to move the seed's ports to free ones, or a seed with other ports"
            : ''
        }`,
      );
  } catch (err) {
    await Promise.allSettled([account.close(), manager.close(), traffic.close()]);
    throw err;
  }
  const urlHost = host.includes(':') ? `[${host}]` : host === '0.0.0.0' ? '127.0.0.1' : host;

  return {
    ports: {
      account: listening[0] as number,
      manager: listening[1] as number,
      ...(traffic.network ? { network: traffic.network.port } : {}),
      proxy: Object.fromEntries(seedPorts.map((p) => [String(p), moved.get(p) ?? p])),
    },
    controlToken,
    calls: (filter) => calls.list(filter),
    clearCalls: (account) => calls.clear(account),
    createAccount,
    faults: {
      account: accountFaults,
      manager: faultControl<ManagerOperationId>('manager', faults.manager, operationIds.manager),
    },
    accountUrl: listening[0] ? `http://${urlHost}:${listening[0]}` : '',
    managerUrl: listening[1] ? `http://${urlHost}:${listening[1]}` : '',
    ...(traffic.network ? { networkUrl: `http://${urlHost}:${traffic.network.port}` } : {}),
    listeningPorts: () => traffic.ports?.listening() ?? [],
    caCertificate: () => traffic.caCertificate(),
    clock: {
      now: () => new Date(store.clock.now()),
      advance: (ms) => store.clock.advance(ms),
      set: (at) => store.clock.set(at),
      reset: () => store.clock.reset(),
    },
    credentials: credentialsOf(store),
    dataFile,
    state: () => store.toData(),
    reset: () => reload(seed),
    handle,
    settled,
    async close() {
      await Promise.allSettled([account.close(), manager.close(), traffic.close(), ...[...ownManagers.values()].map((m) => m.close())]);
      try {
        await saver?.close();
      } finally {
        unlock();
      }
    },
  };
}
