import type { Store } from '../domain/state.js';
import { loopbackFor } from '../host/free-ports.js';
import { SandboxCa } from './ca.js';
import { Inflight } from './inflight.js';
import { DEFAULT_NETWORK_PORT, type ProxyNetwork, startNetwork } from './network.js';
import { PortTraffic } from './ports.js';

export { DEFAULT_NETWORK_PORT } from './network.js';
export { PortTraffic } from './ports.js';

export interface TrafficOptions {
  store: Store;
  host: string;
  /** The proxy network's port (0: a free one); undefined: no network. */
  networkPort?: number;
  /** The ports' upstream (the real manager's `--proxy`, `--proxy_port`); default the network. */
  upstream?: { host: string; port?: number };
  /** Whether manager proxy ports listen. */
  proxyPorts: boolean;
  egressAllow: readonly string[];
  strict?: boolean;
  /** CA certificates (PEM) the network trusts for HTTPS targets, beside the system's (a test target's own CA). */
  targetCa?: string[];
  /** Persists the state after traffic changed it (usage, logs); failures are reported, not thrown. */
  persist: () => Promise<void>;
  now?: () => number;
  /** Other accounts of the sandbox (createAccount()), by customer: the network bills their Zones to them. */
  storeOf?: (customer: string) => Store | undefined;
}

/** The proxy ports' upstream (manager-wide, as the real manager's); `network`: the sandbox's own network. */
export interface Upstream {
  host: string;
  port: number;
  network?: boolean;
}

export interface Traffic {
  network?: ProxyNetwork;
  /** The ports' upstream: the one given, else the network as ports reach it (loopback when it listens on every interface, `network` true). */
  upstream?: Upstream;
  ports?: PortTraffic;
  /** The CA certificate (PEM) of SSL analyzing (which also signs the network's TLS certificate), when ports listen. */
  caCertificate(): Promise<string | undefined>;
  /** Resolves once every request and tunnel admitted so far is billed and logged. */
  settled(): Promise<void>;
  close(): Promise<void>;
}

/** The sandbox's traffic: the proxy network and the listening proxy ports, as asked for. */
export async function startTraffic(o: TrafficOptions): Promise<Traffic> {
  const now = o.now ?? Date.now;
  const inflight = new Inflight();
  const changed = () => {
    o.persist().catch((err: Error) => console.error(`[zone-api sandbox] usage could not be saved: ${err.message}`));
  };
  // The sandbox's CA: SSL analyzing of the ports, and the network's certificate for a client that speaks
  // TLS to it. Made once asked for, and at start when ports listen (about half a second of key
  // generation, in the background).
  let ca: Promise<SandboxCa> | undefined;
  const caOf = () => {
    if (!ca) {
      ca = SandboxCa.create(now());
      ca.catch(() => undefined);
    }
    return ca;
  };
  if (o.proxyPorts) caOf();
  const network =
    o.networkPort === undefined
      ? undefined
      : await startNetwork({
          store: o.store,
          host: o.host,
          port: o.networkPort,
          egressAllow: o.egressAllow,
          strict: o.strict,
          targetCa: o.targetCa ?? [],
          ca: caOf,
          changed,
          now,
          inflight,
          ...(o.storeOf ? { storeOf: o.storeOf } : {}),
        });
  // Ports reach the network on loopback when it listens on every interface; an upstream given is
  // reached over TCP, even when it is the network.
  const upstream: Upstream | undefined = o.upstream
    ? { host: o.upstream.host, port: o.upstream.port ?? DEFAULT_NETWORK_PORT }
    : network && { host: loopbackFor(o.host), port: network.port, network: true };
  const ports = o.proxyPorts
    ? new PortTraffic({
        store: o.store,
        network: () => upstream,
        egressAllow: o.egressAllow,
        changed,
        now,
        ca: caOf,
        targetCa: o.targetCa ?? [],
        inflight,
        ...(network ? { inProcess: network } : {}),
      })
    : undefined;
  return {
    network,
    ...(upstream ? { upstream } : {}),
    ports,
    caCertificate: async () => (o.proxyPorts ? (await caOf()).certificate : undefined),
    settled: () => inflight.idle(),
    async close() {
      await Promise.allSettled([ports?.closeAll(), network?.close()]);
    },
  };
}
