import type { FastifyInstance } from 'fastify';
import type { CallLog } from '../control/calls.js';
import type { Store } from '../domain/state.js';
import { answerInProcess } from '../in-process/in-process.js';
import { clockOf } from '../tenancy/account-handle.js';
import type { Traffic } from '../traffic/index.js';
import { credentialsOf } from './boot.js';
import type { Sandbox } from './sandbox-types.js';

/** The started sandbox's parts its handle reaches. */
export interface HandleParts {
  store: Store;
  traffic: Traffic;
  account: FastifyInstance;
  manager: FastifyInstance;
  /** The ports of the account and manager APIs (0 when they answer only in process). */
  listening: readonly number[];
  /** The host the URLs name. */
  urlHost: string;
  /** The ports of the seed and of the state, and where they moved to (freeProxyPorts). */
  seedPorts: readonly number[];
  moved: ReadonlyMap<number, number>;
  controlToken: string | undefined;
  calls: CallLog;
  createAccount: Sandbox['createAccount'];
  faults: Sandbox['faults'];
  dataFile: string | undefined;
  reset: () => Promise<void>;
  settled: () => Promise<void>;
  close: () => Promise<void>;
}

/** What startSandbox() hands back. */
export function sandboxHandle(p: HandleParts): Sandbox {
  const { store, traffic, listening, urlHost } = p;
  return {
    ports: {
      account: listening[0] as number,
      manager: listening[1] as number,
      ...(traffic.network ? { network: traffic.network.port } : {}),
      proxy: Object.fromEntries(p.seedPorts.map((port) => [String(port), p.moved.get(port) ?? port])),
    },
    controlToken: p.controlToken,
    calls: (filter) => p.calls.list(filter),
    clearCalls: (account) => p.calls.clear(account),
    createAccount: p.createAccount,
    faults: p.faults,
    accountUrl: listening[0] ? `http://${urlHost}:${listening[0]}` : '',
    managerUrl: listening[1] ? `http://${urlHost}:${listening[1]}` : '',
    ...(traffic.network ? { networkUrl: `http://${urlHost}:${traffic.network.port}` } : {}),
    listeningPorts: () => traffic.ports?.listening() ?? [],
    caCertificate: () => traffic.caCertificate(),
    clock: clockOf(store),
    credentials: credentialsOf(store),
    dataFile: p.dataFile,
    state: () => store.toData(),
    reset: p.reset,
    handle: (api, request) =>
      answerInProcess(api === 'account' ? p.account : p.manager, request, `${urlHost}:${api === 'account' ? listening[0] : listening[1]}`),
    settled: p.settled,
    close: p.close,
  };
}
