import type { AddressInfo } from 'node:net';
import { zoneCredential } from '@zone-api/spec/model';
import type { FastifyInstance } from 'fastify';
import { type AccountAuth, authenticateAccount, fillFromCredential } from '../account/auth.js';
import { accountHandlers } from '../account/index.js';
import { CallLog } from '../control/calls.js';
import { controlRoutes, faultControl, hostAllowed, isLoopbackHost, newControlToken } from '../control/control.js';
import { withOverrides } from '../control/overrides.js';
import { lockDataFile } from '../domain/lock.js';
import { Store } from '../domain/state.js';
import type { StateData } from '../domain/types.js';
import { answerInProcess } from '../in-process/in-process.js';
import { authenticateManager, managerErrorBody, managerHandlers } from '../manager/index.js';
import { portFieldTypes } from '../manager/port-config.js';
import { accountAliases } from '../router/aliases.js';
import type { AnsweredCall, Handler } from '../router/api-options.js';
import { FaultRegistry } from '../router/faults.js';
import { buildApi } from '../router/http.js';
import {
  type AccountOperationId,
  type ApiName,
  type ManagerOperationId,
  type OpenApiDoc,
  type OperationDef,
  routesOf,
} from '../router/spec.js';
import { REAL_MANAGER_BRAND } from '../shared/brand.js';
import { accountHandle, clockOf } from '../tenancy/account-handle.js';
import { Accounts, OWN_MANAGERS_LIMIT } from '../tenancy/accounts.js';
import { type OwnManager, startOwnManager } from '../tenancy/own-manager.js';
import { type PortTraffic, startTraffic } from '../traffic/index.js';
import { bundleOf, credentialsOf, readSeed } from './boot.js';
import { freePort, loopbackFor, portInUse, renumberPorts } from './free-ports.js';
import type { AccountSeed, CreateAccountOptions, Sandbox, SandboxAccount, SandboxOptions } from './sandbox-types.js';
import { savingTo, startingState } from './saving.js';

export const DEFAULT_ACCOUNT_PORT = 8787;
export const DEFAULT_MANAGER_PORT = 22999;
export const DEFAULT_HOST = '127.0.0.1';
/**
 * Sent with every manager `/api` response, as the real manager 1.570.247 sends it: the last second of
 * 1 November 2023 in its own date format, not an HTTP-date (lib/mixins/web_api.js 172-173
 * `sunset('11-01-2023')`, lib/middleware.js 96-99).
 */
export const MANAGER_SUNSET = '01-Nov-23 23:59:59';

/** Starts both APIs on loopback. See the package README for the control endpoints under `/__sandbox/`. */
export async function startSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const specDir = options.specDir ?? process.env.ZONE_API_SANDBOX_SPEC_DIR;
  const specs: Record<ApiName, OpenApiDoc> = {
    account: options.specs?.account ?? bundleOf('account', specDir),
    manager: options.specs?.manager ?? bundleOf('manager', specDir),
  };
  const read = readSeed(options.seed, specs);
  // The option wins over the seed's own `answer_forms` (the CLI's --answer-forms).
  const seed = options.answerForms ? { ...read, account: { ...read.account, answer_forms: options.answerForms } } : read;
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
  const store = new Store(startingState(seed, dataFile, specs));
  /** The ports that listen follow the state (after a reset, or a change undone); one that cannot is reported. */
  const syncPorts = async () => {
    for (const f of (await traffic.ports?.sync()) ?? []) console.error(`[zone-api sandbox] port ${f.port} cannot listen (${f.error})`);
  };
  // A change the data file could not take is undone: a port it created closes, one it deleted listens again.
  const { saver, persist } = savingTo(store, dataFile, options.fsync, () => syncPorts());
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
    ...(options.upstream ? { upstream: options.upstream } : {}),
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
    await syncPorts();
    await persist();
  };

  const merge = <A>(api: ApiName, base: Record<string, Handler<A>>) =>
    withOverrides<A>(api, specs[api], base, options.overrides?.[api] ?? {}, options.handlers?.[api] ?? {});
  // The Zone credential header as the account spec describes it (its name and value patterns).
  const credentialRules = { credential: zoneCredential(specs.account), strict: options.strict === true };
  const account = buildApi<AccountAuth>({
    name: 'account',
    doc: specs.account,
    // A created account's requests run its own handlers over its own Store (overrides stay shared).
    handlers: accounts.dispatching(
      merge('account', accountHandlers(store)),
      (id) => !!options.overrides?.account?.[id as AccountOperationId],
    ),
    faults: faults.account,
    authenticate: (req, reply, op) => authenticateAccount(credentialRules, accounts.storeFor(req), req, reply, op),
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
          portDefaults: () => (traffic.upstream ? { proxy: traffic.upstream.host, proxy_port: traffic.upstream.port } : {}),
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
      // Paths matched as its express router matches them (any case, a trailing slash or none), unless strict.
      realPaths: true,
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
  /** Own managers being started (counted against OWN_MANAGERS_LIMIT with those running). */
  let startingManagers = 0;
  const createAccount = async (accountSeed?: AccountSeed, opts: CreateAccountOptions = {}): Promise<SandboxAccount> => {
    if (opts.manager && ownManagers.size + startingManagers >= OWN_MANAGERS_LIMIT)
      throw new Error(
        `createAccount: the sandbox runs ${OWN_MANAGERS_LIMIT} managers of created accounts, as many as it runs; remove an account that has one, or create this one without { manager: true }`,
      );
    const entry = accounts.create(accountSeed);
    if (opts.manager) {
      startingManagers++;
      try {
        ownManagers.set(
          entry.customer,
          await startOwnManager(entry, {
            traffic,
            egressAllow: options.egressAllow ?? [],
            targetCa: options.targetCa ?? [],
            host,
            urlHost,
            managerApi: (own, ports, reserved) => managerApi(own, ports, reserved, false),
            listening,
          }),
        );
      } catch (err) {
        accounts.remove(entry.customer);
        throw err;
      } finally {
        startingManagers--;
      }
    }
    return accountHandle(entry, {
      faults: faults.account,
      accountFaults,
      calls,
      ownManager: ownManagers.get(entry.customer),
      remove: removeAccount,
    });
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
  const settled = async () => {
    await Promise.all([traffic.settled(), ...[...ownManagers.values()].map((m) => m.settled())]);
    await persist();
  };
  const handle = (api: ApiName, request: Request): Promise<Response> =>
    answerInProcess(api === 'account' ? account : manager, request, `${urlHost}:${api === 'account' ? listening[0] : listening[1]}`);
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
    if (traffic.ports && options.freeProxyPorts !== false) {
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
            ? ": leave freeProxyPorts on (CLI: --free-ports) to move the seed's ports to free ones, or a seed with other ports"
            : ''
        }`,
      );
  } catch (err) {
    await Promise.allSettled([account.close(), manager.close(), traffic.close()]);
    throw err;
  }
  const near = loopbackFor(host);
  const urlHost = near.includes(':') ? `[${near}]` : near;

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
    clock: clockOf(store),
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
