import type { Exchange } from '../domain/har.js';
import type { Store } from '../domain/state.js';
import type { ProxyPortConfig } from '../domain/types.js';
import type { SandboxCa } from './ca.js';
import type { Inflight } from './inflight.js';
import type { ProxyNetwork } from './network.js';
import type { Gate, ProxyHop } from './upstream.js';

// What the listening ports are given (PortTrafficOptions), and what one request through a proxy port
// carries (its port, session, upstream, log; what its control headers asked for): apart from
// port-request.ts, which serves it, so that the modules it uses (rules.ts, port-failure.ts) name it
// without importing the module that imports them.

export interface PortRequest {
  store: Store;
  cfg: ProxyPortConfig;
  port: number;
  /** The number the port listens on, which its requests are logged under: its `listen_port` where it listens there (listen-port.ts). */
  listensAt?: number;
  clientIp: string;
  /** The client's User-Agent (the network's request log records it). */
  ua: string;
  session: string;
  /** The port's session for its next request (after a rule took a new one). */
  nextSession?: () => string;
  /** Where the request goes (over TLS when `tls`); `unusable`: an upstream the real manager cannot read. */
  upstream: ProxyHop & { authorization?: string; unusable?: string };
  /** The upstream username for a session, and the password beside it. */
  login: (session: string) => { username: string; password: string };
  /** The sandbox's own network when it is the port's upstream: requests and tunnels reach it in process, without the loopback hop. */
  network?: Pick<ProxyNetwork, 'openTunnel' | 'request'>;
  started: number;
  now: () => number;
  gate?: Gate;
  /** CA certificates trusted for HTTPS targets beside the system's (SSL analyzing talks TLS to the target itself). */
  targetCa?: readonly string[];
  /**
   * The request's context, as the client named it in `x-hola-context` (the real manager reads the
   * header into the request's context and does not pass it on, lib/context.js 13-15 and 134-139): the
   * status check's `STATUS CHECK` skips the port's rules (lib/rules.js 60, 111, 132). None: `RESPONSE`.
   */
  context?: string;
  /** What the request's control headers asked for (`x-lpm-session`, `x-lpm-country`, `x-lpm-fake`, …: control-headers.ts). */
  control?: RequestControl;
  /**
   * The same request on another port of the manager, named as the real manager's table of running
   * servers is keyed (the port's number as text; lib/worker.js 255-264): that port's configuration,
   * session, upstream and login. Undefined when no port of that name listens.
   */
  reroute?: (port: string) => PortRequest | undefined;
  /** A new HAR exchange of this request. */
  exchange: (method: string, url: string) => Exchange;
  log: (x: Exchange) => void;
}

/** What a request's control headers ask for. */
export interface RequestControl {
  /** `x-hola-context`: the request's context (the status check's `STATUS CHECK`). */
  context?: string;
  /** `x-lpm-session`: the request's session, a new one for the port's next request (lib/session.js 150-159, 181-187). */
  session?: string;
  /** Username options for this request over the port's (lib/context.js 196-221): country, state, city, asn, ip. */
  user: Partial<Record<'country' | 'state' | 'city' | 'asn' | 'ip', string>>;
  /** `x-lpm-fake` and its options: answered in place of the upstream (fakeAnswer). */
  fake?: FakeRequest;
}

export interface FakeRequest {
  status?: string;
  peerIp?: string;
  headers?: string;
  data?: string;
  sleep?: string;
}

/** What the listening ports are given (PortTraffic, ports.ts). */
export interface PortTrafficOptions {
  store: Store;
  /** The manager-wide upstream of every port without external proxies (`network`: the sandbox's own network). */
  network: () => { host: string; port: number; network?: boolean } | undefined;
  egressAllow: readonly string[];
  changed: () => void;
  now: () => number;
  /** The sandbox's CA, for SSL analyzing (`ssl: true` ports). */
  ca: () => Promise<SandboxCa>;
  /** CA certificates trusted for HTTPS targets beside the system's. */
  targetCa?: readonly string[];
  /** The sandbox's network in process: ports whose upstream it is reach it without the loopback hop. */
  inProcess?: Pick<ProxyNetwork, 'openTunnel' | 'request'>;
  /** Counts each request and tunnel until its HAR entry is written (sandbox.settled()). */
  inflight?: Inflight;
}
