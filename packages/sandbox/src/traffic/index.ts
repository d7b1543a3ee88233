import type { Store } from '../domain/state.js';
import { type ProxyNetwork, startNetwork } from './network.js';
import { PortTraffic } from './ports.js';

export { DEFAULT_NETWORK_PORT, egressAllowed } from './network.js';
export { PortTraffic } from './ports.js';

export interface TrafficOptions {
  store: Store;
  host: string;
  /** The proxy network's port (0: a free one); undefined: no network. */
  networkPort?: number;
  /** Whether manager proxy ports listen. */
  proxyPorts: boolean;
  egressAllow: readonly string[];
  strict?: boolean;
  /** Persists the state after traffic changed it (usage, logs); failures are reported, not thrown. */
  persist: () => Promise<void>;
  now?: () => number;
}

export interface Traffic {
  network?: ProxyNetwork;
  ports?: PortTraffic;
  close(): Promise<void>;
}

/** The sandbox's traffic: the proxy network and the listening proxy ports, as asked for. */
export async function startTraffic(o: TrafficOptions): Promise<Traffic> {
  const now = o.now ?? Date.now;
  const changed = () => {
    o.persist().catch((err: Error) => console.error(`[zone-api sandbox] usage could not be saved: ${err.message}`));
  };
  const network =
    o.networkPort === undefined
      ? undefined
      : await startNetwork({
          store: o.store,
          host: o.host,
          port: o.networkPort,
          egressAllow: o.egressAllow,
          strict: o.strict,
          changed,
          now,
        });
  // Ports reach the network on loopback when it listens on every interface.
  const networkHost = o.host === '0.0.0.0' ? '127.0.0.1' : o.host === '::' ? '::1' : o.host;
  const ports = o.proxyPorts
    ? new PortTraffic({
        store: o.store,
        network: () => (network ? { host: networkHost, port: network.port } : undefined),
        egressAllow: o.egressAllow,
        changed,
        now,
      })
    : undefined;
  return {
    network,
    ports,
    async close() {
      await Promise.allSettled([ports?.closeAll(), network?.close()]);
    },
  };
}
