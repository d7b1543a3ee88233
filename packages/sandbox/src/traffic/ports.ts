import { type PrepareRequestFunctionOpts, RequestError } from 'proxy-chain';
import { type Exchange, successful } from '../domain/har.js';
import { ipInList } from '../domain/net.js';
import type { ProxyPortConfig } from '../domain/types.js';
import { listenHost, loopbackFor } from '../host/free-ports.js';
import { boundRequestTimes, capConnections } from '../router/connections.js';
import { PORT_ERROR_HEADER, PORT_REALM, UPSTREAM_BRAND } from '../shared/brand.js';
import { acceptConnections, closedForInactivity } from './connections.js';
import { takeControlHeaders } from './control-headers.js';
import { egressAllowed, loopbackRefused, remoteLoopbackMessage } from './egress.js';
import { listenPortOf } from './listen-port.js';
import { checkRemoteName } from './lookup.js';
import type { PortRequest, PortTrafficOptions, RequestControl } from './port-context.js';
import { newExchange } from './port-exchange.js';
import { portError } from './port-failure.js';
import { loopOf } from './port-loop.js';
import { servePortRequest } from './port-request.js';
import { servePortTunnel } from './port-tunnel.js';
import { analyzeSsl } from './ssl-analyzing.js';
import { statusCheck } from './status-check.js';
import { respond, TunnelServer, tunnel } from './tunnel.js';
import { EXT_PROXY_NOT_TEXT, extProxy, Gate } from './upstream.js';
import { portCustomer, portUsername } from './username.js';

// Manager proxy ports that listen: each port of the state is an HTTP proxy (proxy-chain) on its
// `iface` (loopback by default) that forwards to its external proxies, else to the manager-wide
// upstream (the sandbox's proxy network by default; a port's own `proxy`:`proxy_port` is stored, not
// followed, as by the real manager) with the username built from its configuration, applies its headers,
// client whitelist, sessions and bans (port-request.ts), and logs each request into the HAR log
// (the Store's logs, domain/logs.ts). Its client connections are taken as the real manager takes them (connections.ts: the
// inactivity timeout, the `smtp` relay); an `ssl: true` port analyzes its tunnels (ssl-analyzing.ts).

export class PortTraffic {
  /** Each listening port by its `port`: its server, interface and the number it listens on (`at`: its `listen_port`, listen-port.ts). */
  private readonly servers = new Map<number, { server: TunnelServer; iface: string; at: number }>();
  private readonly gates = new Map<number, Gate>();
  private rotation = 0;
  private extTurn = 0;
  /** Ports whose shared session is in use: a request's own session (`x-lpm-session`) ends it (lib/session.js 150-159). */
  private readonly sessionInUse = new Set<number>();

  constructor(private readonly o: PortTrafficOptions) {}

  /** Where a port listens: its `iface` as the real manager reads it, loopback when it names none (free-ports.ts). */
  private ifaceOf(cfg: ProxyPortConfig): string {
    return listenHost(cfg.iface);
  }

  /**
   * Starts listening for a port (`cfg.port` 0: a free one the system picks); resolves to the port it
   * is known by, rejects (EADDRINUSE, EACCES, …) when it cannot bind. A port with a `listen_port` listens
   * there instead, as the real manager's (listen-port.ts); where that cannot be (a value Node refuses, a
   * number in use or not allowed), the port listens nowhere and is kept, as the real one keeps it.
   */
  async open(cfg: ProxyPortConfig): Promise<number> {
    if (cfg.port !== 0 && this.servers.has(cfg.port)) await this.close(cfg.port);
    const iface = this.ifaceOf(cfg);
    const own = cfg.listen_port ? listenPortOf(cfg) : cfg.port;
    if (own === undefined) return cfg.port;
    let port = cfg.port;
    const server = new TunnelServer({
      port: own,
      host: iface,
      authRealm: PORT_REALM,
      prepareRequestFunction: (opts) => this.prepare(port, opts),
    });
    boundRequestTimes(server.server);
    if (own !== cfg.port) {
      const bound = await server.listen().then(
        () => true,
        () => false,
      );
      if (!bound) return cfg.port;
    } else await server.listen();
    if (port === 0) port = server.port;
    this.servers.set(port, { server, iface, at: server.port });
    acceptConnections(
      server,
      () => this.o.store.ports.get(port),
      () => void this.close(port),
    );
    capConnections(server.server);
    return port;
  }

  async close(port: number): Promise<void> {
    const s = this.servers.get(port);
    if (!s) return;
    this.servers.delete(port);
    this.gates.delete(port);
    await s.server.close(true);
  }

  /**
   * The port's status check, as the real manager makes it (status-check.ts): `test_url` asked for
   * through the port itself, on loopback, logged and counted as the port's request with the context
   * `STATUS CHECK`. The status the real manager reads from the answer: `ok`, or why not.
   */
  check(cfg: ProxyPortConfig, testUrl: string, userAgent: string): Promise<string> {
    const s = this.servers.get(cfg.port);
    if (!s) return Promise.resolve('error');
    const checked = statusCheck(loopbackFor(s.iface), cfg.port, testUrl, userAgent);
    return this.o.inflight?.track(checked) ?? checked;
  }

  /** Listens on exactly the ports of the state (after a reset or a load); returns the ports that could not bind. */
  async sync(): Promise<{ port: number; error: string }[]> {
    const failed: { port: number; error: string }[] = [];
    for (const port of [...this.servers.keys()]) if (!this.o.store.ports.has(port)) await this.close(port);
    for (const cfg of this.o.store.ports.values()) {
      const s = this.servers.get(cfg.port);
      if (s && s.iface === this.ifaceOf(cfg)) continue;
      try {
        await this.open(cfg);
      } catch (err) {
        failed.push({ port: cfg.port, error: (err as NodeJS.ErrnoException).code ?? (err as Error).message });
      }
    }
    return failed;
  }

  async closeAll(): Promise<void> {
    for (const port of [...this.servers.keys()]) await this.close(port);
  }

  listening(): number[] {
    return [...this.servers.keys()];
  }

  /** The session of a port's next request: its own, a new one per request, per client host, or the refreshed counter's. */
  private session(cfg: ProxyPortConfig, clientIp: string, own?: string): string {
    const c = cfg;
    if (own) {
      // A request's own session (`x-lpm-session`, lib/session.js 150-159 and 181-187) is used as given, and
      // the port's shared session, if it had one, is let go: its next request takes a new one. A sticky
      // port keeps its sessions per client.
      if (this.sessionInUse.delete(cfg.port)) this.o.store.nextSession(cfg.port);
      return own;
    }
    if (typeof c.session === 'string' && c.session) return c.session;
    // Named after the number the port listens on (lib/session.js 53 and 204: the server's `port`, its
    // `listen_port`), a sticky one after its `port` and the client's address, dots as `_` (lib/session.js
    // 191-197: `<port>_<ip>` and the counter).
    const at = this.listenedAt(cfg);
    if (c.rotate_session) return `${at}_r${++this.rotation}`;
    const n = this.o.store.manager.sessions[String(cfg.port)] ?? 0;
    if (c.sticky_ip) return `${cfg.port}_${clientIp.replace(/^::ffff:/, '').replace(/[.:]/g, '_')}_${n}`;
    this.sessionInUse.add(cfg.port);
    return `${at}_${n}`;
  }

  /** The number a port listens on: its `listen_port` where that is where it listens (listen-port.ts). */
  private listenedAt(cfg: ProxyPortConfig): number {
    return this.servers.get(cfg.port)?.at ?? cfg.port;
  }

  /**
   * The port's upstream: its external proxies in turn (`take` moves the turn on), else the manager-wide
   * upstream (which egress must allow). A port's own `proxy` and `proxy_port` are not followed: the
   * real manager gives every port its own upstream port and hosts (lib/mixins/mgr_proxy.js 45-57:
   * `proxy_port` and `hosts` set over the port's, lib/server.js 140-142 and 713-721: each request
   * goes to the next of those hosts).
   */
  private upstreamOf(
    cfg: ProxyPortConfig,
    take = true,
  ): { host: string; port: number; tls?: boolean; authorization?: string; network?: boolean; ext?: boolean; unusable?: string } {
    const c = cfg;
    // `proxy_connection_type: "https"`: TLS to whichever upstream the request goes to, its external proxies
    // too (lib/server.js 175: the port's one requester, lib/requester.js 14-29).
    const tls = c.proxy_connection_type === 'https' ? { tls: true } : {};
    // External proxies take turns, each request the next; egress must allow each. An entry the real
    // manager skips (an empty one) leaves the request to the port's own upstream.
    const turn = take ? this.extTurn++ : this.extTurn;
    const entry: unknown = c.ext_proxies?.length ? c.ext_proxies[turn % c.ext_proxies.length] : undefined;
    if (entry) {
      const ext = extProxy(entry, c);
      // Read when the request is sent: the port's own 502 (port-failure.ts UpstreamFailure), logged.
      if (!ext) return { host: '', port: 0, ext: true, unusable: EXT_PROXY_NOT_TEXT };
      if (!egressAllowed(ext.host, this.o.egressAllow))
        throw portError(502, `The sandbox sends traffic only to loopback; allow the external proxy ${ext.host} with --egress-allow`);
      return { ...ext, ...tls, ext: true };
    }
    const up = this.o.network();
    if (!up)
      throw portError(502, 'This port has no upstream: the sandbox runs without its proxy network and without an upstream (--proxy)');
    if (!up.network && !egressAllowed(up.host, this.o.egressAllow))
      throw portError(502, `The sandbox sends traffic only to loopback; allow the upstream ${up.host} with --egress-allow`);
    return { host: up.host, port: up.port, ...tls, ...(up.network ? { network: true } : {}) };
  }

  private async prepare(port: number, { request, hostname, port: targetPort, isHttp }: PrepareRequestFunctionOpts) {
    const store = this.o.store;
    const cfg = store.ports.get(port);
    if (!cfg) throw portError(502, `No proxy at port ${port}`);
    const s = store.manager.settings;
    const clientIp = request.socket.remoteAddress ?? '';
    const allowed = [...(cfg.whitelist_ips ?? s.whitelist_ips), ...s.fixed_whitelist_ips];
    // 127.0.0.1 is always let through, whatever the whitelists (lib/server.js 590-592 of the real manager).
    if (clientIp.replace(/^::ffff:/, '') !== '127.0.0.1' && !ipInList(clientIp, allowed))
      throw new RequestError(`Client IP ${clientIp} is not in the whitelist of port ${port}`, 407, {
        'proxy-authenticate': `Basic realm="${PORT_REALM}"`,
        [PORT_ERROR_HEADER]: 'ip_forbidden',
      });
    // A port on another interface is no gateway to this machine's loopback for the clients it lets in.
    if (loopbackRefused(hostname, clientIp, this.o.egressAllow)) throw portError(403, remoteLoopbackMessage(clientIp, hostname));
    // A name that resolves to loopback leads there too; the network sees the port as its client, so the port checks it.
    await checkRemoteName(hostname, { clientIp, allow: this.o.egressAllow }).catch((err: Error) => {
      throw portError(403, err.message);
    });
    const byAt = new Map<number, number>();
    for (const [p, at] of this.servers) byAt.set(at.at, p);
    const loop = loopOf(cfg, { byAt, ports: store.ports, network: this.o.network });
    if (loop)
      throw portError(502, `Proxy loop: port ${loop.join(' -> ')} comes back to itself; start the sandbox with another upstream (--proxy)`);
    // The real manager's own headers: read into the request's context, neither passed on nor logged (control-headers.ts).
    const control = takeControlHeaders(request.headers);
    const context = control.context;
    const ctx = this.requestOn(port, cfg, { request, clientIp, isHttp, context, control, started: this.o.now() });
    const track = <T>(work: Promise<T>) => this.o.inflight?.track(work) ?? work;
    if (!isHttp && cfg.ssl === true) return analyzeSsl(ctx, hostname, targetPort, await this.o.ca(), this.o.inflight);
    if (!isHttp) return { customTag: tunnel((socket, head) => track(servePortTunnel(ctx, request, socket, head, hostname, targetPort))) };
    return { customTag: respond((response) => track(servePortRequest(ctx, request, new URL(request.url as string), response))) };
  }

  /**
   * A request's context on a port: the port's configuration, session, upstream and login. `reroute` gives
   * the same request on another port that listens (a rule's `retry_port`, the route header: rules.ts), keyed
   * as the real manager keys its running servers, by the port's number as text (lib/worker.js 255-264).
   */
  private requestOn(
    port: number,
    cfg: ProxyPortConfig,
    r: {
      request: PrepareRequestFunctionOpts['request'];
      clientIp: string;
      isHttp: boolean;
      context: string | undefined;
      control: RequestControl;
      started: number;
    },
  ): PortRequest {
    const { request, clientIp, isHttp, context, control, started } = r;
    const store = this.o.store;
    const s = store.manager.settings;
    const upstream = this.upstreamOf(cfg);
    const zoneName = cfg.zone ?? s.zone;
    const zone = store.zones.get(zoneName);
    const password = cfg.password ?? zone?.passwords[0] ?? s.password ?? '';
    const userFor = (session: string) =>
      portUsername(cfg, portCustomer(cfg, s.customer), zoneName, session, UPSTREAM_BRAND, {
        perms: zone?.perms ?? [],
        request: control.user,
      });
    return {
      store,
      cfg,
      port,
      listensAt: this.listenedAt(cfg),
      clientIp,
      session: this.session(cfg, clientIp, control.session),
      // A request's own session is read again on each retry (lib/context.js 124-140: the saved headers).
      nextSession: () => this.session(cfg, clientIp, control.session),
      control,
      ua: String(request.headers['user-agent'] ?? ''),
      upstream,
      login: (session) => ({ username: userFor(session), password }),
      ...(upstream.network && this.o.inProcess ? { network: this.o.inProcess } : {}),
      started,
      now: this.o.now,
      gate: this.gateOf(cfg),
      targetCa: this.o.targetCa,
      ...(context ? { context } : {}),
      reroute: (key) => {
        const next = [...this.servers.keys()].find((p) => String(p) === key);
        const nextCfg = next === undefined ? undefined : store.ports.get(next);
        return next === undefined || !nextCfg ? undefined : this.requestOn(next, nextCfg, r);
      },
      exchange: (method, url) => ({
        ...newExchange({
          port: this.listenedAt(cfg),
          started,
          method,
          url,
          request,
          portHeaders: cfg.headers,
          upstream,
          clientIp,
          harLimit: this.o.store.manager.settings.har_limit,
        }),
        ...(context ? { context } : {}),
      }),
      // A plain request whose client connection was closed for inactivity before it was answered is not logged (connections.ts).
      log: (x) => (isHttp && closedForInactivity(request.socket) ? undefined : this.log(x)),
    };
  }

  private gateOf(cfg: ProxyPortConfig): Gate | undefined {
    const throttle = Number(cfg.throttle) || 0;
    if (throttle <= 0) return undefined;
    let gate = this.gates.get(cfg.port);
    if (!gate || gate.limit !== throttle) {
      gate = new Gate(throttle);
      this.gates.set(cfg.port, gate);
    }
    return gate;
  }

  /** Listeners told of each request through a port that succeeded (its port), as the real manager's usage report. */
  private readonly succeeded: ((port: number) => void)[] = [];

  /** Calls `listener` with the port of each request that succeeds through a port (the real manager then shows the port `ok`). */
  onSuccess(listener: (port: number) => void): void {
    this.succeeded.push(listener);
  }

  private log(x: Exchange): void {
    // Whatever is logged: the real manager marks the port `ok` from the request's usage report (lib/manager.js 322-326).
    if (successful(x.status)) for (const l of this.succeeded) l(x.port);
    if (this.o.store.logs.request(x)) this.o.changed();
  }
}
