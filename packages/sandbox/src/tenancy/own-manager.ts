import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { Store } from '../domain/state.js';
import { renumberPorts } from '../host/free-ports.js';
import { SandboxCa } from '../traffic/ca.js';
import { PortTraffic, type Traffic } from '../traffic/index.js';
import { Inflight } from '../traffic/inflight.js';
import type { AccountEntry } from './accounts.js';

// A created account's own manager (createAccount(seed, { manager: true })): its manager API on a free
// port, and its seed's proxy ports on free ones, forwarding to the sandbox's network with its own Zone
// passwords. Its ports, bans, logs and settings are its own.

/** An account's own manager, as the sandbox keeps it. */
export interface OwnManager {
  url: string;
  port: number;
  proxy: Record<string, number>;
  listening(): number[];
  /** After the account's state went back to its seed: the seed's ports mapped again, and listening. */
  reset(): Promise<void>;
  settled(): Promise<void>;
  close(): Promise<void>;
}

/** What an own manager takes from the sandbox it runs in. */
export interface OwnManagerHost {
  traffic: Traffic;
  egressAllow: string[];
  targetCa: string[];
  /** The interface it listens on, and the host its URL names. */
  host: string;
  urlHost: string;
  /** A manager API over the account's store and ports; `reserved` lists the ports its created ports must not take. */
  managerApi(own: Store, ports: PortTraffic | undefined, reserved: () => number[]): FastifyInstance;
  /** The ports the sandbox's own APIs listen on. */
  listening: readonly number[];
}

/**
 * A manager of the account's own: its API on a free port, and its proxy ports listening on free
 * ports when the sandbox's ports listen (the seed's numbers are mapped, as with freeProxyPorts), each
 * forwarding to the sandbox's network with the account's Zone passwords, so that its traffic is
 * billed and logged to it alone.
 */
export async function startOwnManager(entry: AccountEntry, sandbox: OwnManagerHost): Promise<OwnManager> {
  const { traffic } = sandbox;
  const own = entry.store;
  const inflight = new Inflight();
  let ca: Promise<SandboxCa> | undefined;
  const ports = traffic.ports
    ? new PortTraffic({
        store: own,
        network: () => traffic.upstream,
        egressAllow: sandbox.egressAllow,
        changed: () => {},
        now: () => own.clock.now(),
        ca: () => {
          ca ??= SandboxCa.create(own.clock.now());
          return ca;
        },
        targetCa: sandbox.targetCa,
        inflight,
        ...(traffic.network ? { inProcess: traffic.network } : {}),
      })
    : undefined;
  const moved = new Map<number, number>();
  const mine: number[] = [];
  const app = sandbox.managerApi(own, ports, () => [...sandbox.listening, ...mine]);
  try {
    if (ports) {
      for (const cfg of [...own.ports.values()]) moved.set(cfg.port, await ports.open({ ...cfg, port: 0 }));
      own.load(renumberPorts(own.toData(), moved), undefined, true);
    }
    await app.listen({ host: sandbox.host, port: 0 });
  } catch (err) {
    await Promise.allSettled([app.close(), ports?.closeAll()]);
    throw err;
  }
  const port = (app.server.address() as AddressInfo).port;
  mine.push(port);
  return {
    url: `http://${sandbox.urlHost}:${port}`,
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
}
