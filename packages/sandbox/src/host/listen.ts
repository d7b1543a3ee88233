import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { Store } from '../domain/state.js';
import type { Accounts } from '../tenancy/accounts.js';
import { startTraffic, type Traffic } from '../traffic/index.js';
import { freePort, portInUse, renumberPorts } from './free-ports.js';
import type { SandboxOptions } from './sandbox-types.js';

/** The proxy network and the proxy ports' traffic, as the options ask (a network port taken fails the start). */
export function startSandboxTraffic(options: SandboxOptions, store: Store, host: string, accounts: Accounts, persist: () => Promise<void>) {
  return startTraffic({
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
}

/** What starts listening: both APIs, and the proxy ports of the state. */
export interface ListenParts {
  options: SandboxOptions;
  host: string;
  account: FastifyInstance;
  manager: FastifyInstance;
  traffic: Traffic;
  store: Store;
  /** The ports of the seed and of the state. */
  seedPorts: readonly number[];
  /** Filled here: seed port -> the port it listens on, when the seed's ports move to free ones (freeProxyPorts). */
  moved: Map<number, number>;
  /** Filled here: the ports of the account and manager APIs (0 and 0 when they answer only in process). */
  listening: number[];
  persist: () => Promise<void>;
}

/** Both APIs and the proxy ports listening; on a failure, everything started is closed and the start fails. */
export async function listenAll(p: ListenParts): Promise<void> {
  const { options, host, account, manager, traffic, store, moved, listening } = p;
  const listen = async (app: FastifyInstance, port: number, what: string, option: string, flag: string) => {
    try {
      await app.listen({ host, port });
    } catch (err) {
      throw portInUse(what, port, host, option, flag, err);
    }
    return (app.server.address() as AddressInfo).port;
  };
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
      for (const port of p.seedPorts) if (!moved.has(port)) moved.set(port, await freePort(host));
      store.load(renumberPorts(store.toData(), moved));
      await p.persist();
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
}
