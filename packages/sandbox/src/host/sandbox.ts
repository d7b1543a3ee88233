import { CallLog } from '../control/calls.js';
import { controlRoutes, faultControl, hostAllowed, isLoopbackHost, newControlToken } from '../control/control.js';
import { lockDataFile } from '../domain/lock.js';
import { Store } from '../domain/state.js';
import type { StateData } from '../domain/types.js';
import { FaultRegistry } from '../router/faults.js';
import { type AccountOperationId, type ApiName, type ManagerOperationId, type OpenApiDoc, routesOf } from '../router/spec.js';
import { Accounts } from '../tenancy/accounts.js';
import { accountApi, managerApiOf } from './apis.js';
import { bundleOf, readSeed } from './boot.js';
import { createdAccounts } from './created-accounts.js';
import { loopbackFor, renumberPorts } from './free-ports.js';
import { sandboxHandle } from './handle.js';
import { listenAll, startSandboxTraffic } from './listen.js';
import type { Sandbox, SandboxOptions } from './sandbox-types.js';
import { savingTo, startingState } from './saving.js';

// The composition root: the state, the saving, the traffic, both APIs (each its own profile, wired
// in apis.ts), the created accounts, the control endpoints; then everything listens.

export const DEFAULT_ACCOUNT_PORT = 8787;
export const DEFAULT_MANAGER_PORT = 22999;
export const DEFAULT_HOST = '127.0.0.1';

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
  const near = loopbackFor(host);
  const urlHost = near.includes(':') ? `[${near}]` : near;
  const listening: number[] = [];
  const faults = { account: new FaultRegistry(), manager: new FaultRegistry() };
  const calls = new CallLog();
  const accounts = new Accounts(() => store, specs);
  // Beyond loopback, the control endpoints need a token (given, or made here and shown in the banner).
  const controlToken = isLoopbackHost(host) ? options.controlToken : (options.controlToken ?? newControlToken());
  const idsOf = (api: ApiName) => new Set(routesOf(specs[api]).map((o) => o.operationId));
  const operationIds = { account: idsOf('account'), manager: idsOf('manager') };
  const control = (api: ApiName) =>
    controlRoutes({
      api,
      store,
      specs,
      reset: () => reload(seed),
      caCertificate: () => traffic.caCertificate(),
      faults: faults[api],
      operationIds: operationIds[api],
      calls,
      accounts: {
        create: (accountSeed, opts) => created.create(accountSeed, opts),
        remove: (customer) => created.remove(customer),
        list: () => accounts.list().map((e) => e.customer),
        storeOf: (customer) => accounts.storeOf(customer),
      },
      settled: () => settled(),
      token: controlToken,
    });
  const traffic = await startSandboxTraffic(options, store, host, accounts, persist);
  /** Seed port -> the port it listens on, when the seed's ports move to free ones (freeProxyPorts). */
  const moved = new Map<number, number>();
  /** Back to `data` (the seed): the ports that listen follow the state. */
  const reload = async (data: StateData) => {
    store.load(moved.size ? renumberPorts(data, moved) : data);
    await syncPorts();
    await persist();
  };

  const core = { options, specs, store, accounts, faults, calls, listening, host, urlHost, persist };
  const apiHost = { ...core, traffic, control, allowHost: (h: string | undefined) => hostAllowed(host, h) };
  const account = accountApi(apiHost);
  const managerApi = managerApiOf(apiHost);
  const manager = managerApi(store, traffic.ports, () => listening, true);
  const accountFaults = faultControl<AccountOperationId>('account', faults.account, operationIds.account);
  const created = createdAccounts({ ...core, traffic, managerApi, accountFaults });
  const settled = async () => {
    await Promise.all([traffic.settled(), ...created.managers().map((m) => m.settled())]);
    await persist();
  };
  const seedPorts = [...new Set([...store.ports.keys(), ...seed.manager.ports.map((p) => p.port)])];
  await listenAll({ options, host, account, manager, traffic, store, seedPorts, moved, listening, persist });

  const close = async () => {
    await Promise.allSettled([account.close(), manager.close(), traffic.close(), ...created.managers().map((m) => m.close())]);
    try {
      await saver?.close();
    } finally {
      unlock();
    }
  };
  return sandboxHandle({
    store,
    traffic,
    account,
    manager,
    listening,
    urlHost,
    seedPorts,
    moved,
    controlToken,
    calls,
    createAccount: created.create,
    dataFile,
    settled,
    close,
    faults: { account: accountFaults, manager: faultControl<ManagerOperationId>('manager', faults.manager, operationIds.manager) },
    reset: () => reload(seed),
  });
}
