import { createServer as createHttpsServer } from 'node:https';
import { isIP, type Socket } from 'node:net';
import { type PrepareRequestFunctionOpts, RequestError } from 'proxy-chain';
import { PORT_ERROR_HEADER, PORT_REALM, UPSTREAM_BRAND } from '../brand.js';
import { type Exchange, HAR_LIMITS, harEntry, harEntryWeight, successful } from '../domain/har.js';
import { ipInList, isLoopback } from '../domain/net.js';
import { PORT_DEFAULTS } from '../domain/port-defaults.js';
import type { Store } from '../domain/state.js';
import type { HarEntry, ProxyPortConfig } from '../domain/types.js';
import { listenHost, loopbackFor } from '../free-ports.js';
import type { SandboxCa } from './ca.js';
import { egressAllowed, loopbackRefused, remoteLoopbackMessage } from './egress.js';
import { passHeaders } from './forward.js';
import type { Inflight } from './inflight.js';
import { checkRemoteName } from './lookup.js';
import type { ProxyNetwork } from './network.js';
import { type PortRequest, portError, servePortRequest, servePortTunnel } from './port-request.js';
import { statusCheck } from './status-check.js';
import { connectHead, respond, smtpSockets, TunnelServer, tunnel } from './tunnel.js';
import { EXT_PROXY_NOT_TEXT, extProxy, Gate } from './upstream.js';
import { portCustomer, portUsername } from './username.js';

// Manager proxy ports that listen: each port of the state is an HTTP proxy (proxy-chain) on its
// `iface` (loopback by default) that forwards to its external proxies, else to the manager-wide
// upstream (the sandbox's proxy network by default; a port's own `proxy`:`proxy_port` is stored, not
// followed, as by the real manager) with the username built from its configuration, applies its headers,
// client whitelist, sessions and bans, and logs each request into the HAR log (port-request.ts).

const sumWeights = (har: readonly HarEntry[]) => har.reduce((n, e) => n + harEntryWeight(e), 0);

/** Client connections a port ended for inactivity (accept()). */
const idleClosed = new WeakSet<Socket>();

/**
 * A port's inactivity timeout in ms (accept()): its `socket_inactivity_timeout`, the default (120 s)
 * when it has none (a create drops an empty value, lib/mixins/mgr_proxy.js 272); undefined for a value
 * Node's `socket.setTimeout` refuses (no number, or a negative one).
 */
function inactivityOf(cfg: ProxyPortConfig | undefined): number | undefined {
  const given: unknown = (cfg as { socket_inactivity_timeout?: unknown } | undefined)?.socket_inactivity_timeout;
  if (given === undefined || given === null || given === '') return PORT_DEFAULTS.socket_inactivity_timeout;
  return typeof given === 'number' && given >= 0 ? given : undefined;
}

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

export class PortTraffic {
  private readonly servers = new Map<number, { server: TunnelServer; iface: string }>();
  private readonly gates = new Map<number, Gate>();
  private rotation = 0;
  /** The HAR log's bytes (harEntryWeight) as last counted, and the array and length they were counted for. */
  private har: { of?: HarEntry[]; count: number; bytes: number } = { count: 0, bytes: 0 };
  private extTurn = 0;

  constructor(private readonly o: PortTrafficOptions) {}

  /** Where a port listens: its `iface` as the real manager reads it, loopback when it names none (free-ports.ts). */
  private ifaceOf(cfg: ProxyPortConfig): string {
    return listenHost(cfg.iface);
  }

  /**
   * Starts listening on a port (`cfg.port` 0: a free one the system picks); resolves to the port it
   * listens on, rejects (EADDRINUSE, EACCES, …) when it cannot bind.
   */
  async open(cfg: ProxyPortConfig): Promise<number> {
    if (cfg.port !== 0 && this.servers.has(cfg.port)) await this.close(cfg.port);
    const iface = this.ifaceOf(cfg);
    let port = cfg.port;
    const server = new TunnelServer({
      port,
      host: iface,
      authRealm: PORT_REALM,
      prepareRequestFunction: (opts) => this.prepare(port, opts),
    });
    await server.listen();
    port = server.port;
    this.servers.set(port, { server, iface });
    this.accept(port, server);
    return port;
  }

  /**
   * Each client connection of a port, as the real manager's connection handler takes it (lib/server.js
   * 241-252, lib/worker.js 99 and 202):
   * - The port's `socket_inactivity_timeout` first (`socket.setTimeout(opt.socket_inactivity_timeout)`),
   *   read as the connection comes: a connection idle that long is ended (lib/util.js 347-363,
   *   ensure_socket_close), whatever it carries. A plain request still waiting for its answer is then
   *   answered and logged nowhere: its client gets `socket hang up`, and neither the log nor the recent
   *   statistics hold it (observed in 6 runs of 7; in the other the real manager's upstream request, which
   *   has the same timeout, lib/mixins/server_handle.js 121, fired first and the request was logged as a
   *   502). `0` keeps a connection however long it is idle.
   * - A value Node's setTimeout refuses (a text, as a create's form body gives it, a boolean, a negative
   *   number) makes the real manager's worker throw on every connection of the port: the connection is
   *   reset, nothing is logged, and the worker starts again with the ports (observed). The sandbox resets
   *   each such connection; it does not cut the other ports' connections, as the worker's restart does.
   * - A port with an `smtp` list is an SMTP relay (lib/server.js 185-189 and 244-252, lib/smtp.js): each
   *   connection, whatever it carries, becomes a tunnel to one of the list's entries picked at random
   *   (`host[:port]`, port 25 by default): a `CONNECT host:port` is put in front of what the client sends,
   *   and the port opens that tunnel as any other (logged so), without answering the CONNECT itself
   *   (port-request.ts). An entry that is no text makes the real manager's connection handler throw
   *   (`address.split is not a function`): the client's connection is reset and the port no longer
   *   accepts any (observed: ECONNRESET, then ECONNREFUSED; it is still listed).
   */
  private accept(port: number, server: TunnelServer): void {
    const http = server.server;
    const accept = http.listeners('connection') as Array<(socket: Socket) => void>;
    http.removeAllListeners('connection');
    http.on('connection', (socket: Socket) => {
      const cfg = this.o.store.ports.get(port);
      const idle = inactivityOf(cfg);
      if (idle === undefined) {
        // Reset once the client has sent its request, as the worker's end resets it (read ECONNRESET).
        socket.once('data', () => socket.resetAndDestroy());
        socket.once('error', () => undefined);
        return;
      }
      const list = (cfg as { smtp?: unknown } | undefined)?.smtp as ArrayLike<unknown> | undefined;
      if (list?.length) {
        const address = list[Math.floor(Math.random() * list.length)];
        if (typeof address !== 'string') {
          socket.resetAndDestroy();
          void this.close(port);
          return;
        }
        const [ip, to] = address.split(':');
        socket.unshift(Buffer.from(`CONNECT ${ip}:${Number(to) || 25} HTTP/1.1\r\n\r\n`, 'utf8'));
        smtpSockets.add(socket);
      }
      for (const listener of accept) listener.call(http, socket);
      if (!idle) return;
      socket.setTimeout(idle);
      socket.once('timeout', () => {
        idleClosed.add(socket);
        socket.end();
        socket.destroy();
      });
    });
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
  private session(cfg: ProxyPortConfig, clientIp: string): string {
    const c = cfg;
    if (typeof c.session === 'string' && c.session) return c.session;
    if (c.rotate_session) return `${cfg.port}_r${++this.rotation}`;
    const n = this.o.store.manager.sessions[String(cfg.port)] ?? 0;
    return c.sticky_ip ? `${cfg.port}_${n}_${clientIp.replace(/[^0-9a-f]/gi, '')}` : `${cfg.port}_${n}`;
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
  ): { host: string; port: number; authorization?: string; network?: boolean; ext?: boolean } {
    const c = cfg;
    // External proxies take turns, each request the next; egress must allow each. An entry the real
    // manager skips (an empty one) leaves the request to the port's own upstream.
    const turn = take ? this.extTurn++ : this.extTurn;
    const entry: unknown = c.ext_proxies?.length ? c.ext_proxies[turn % c.ext_proxies.length] : undefined;
    if (entry) {
      const ext = extProxy(entry, c);
      if (!ext) throw portError(502, EXT_PROXY_NOT_TEXT);
      if (!egressAllowed(ext.host, this.o.egressAllow))
        throw portError(502, `The sandbox sends traffic only to loopback; allow the external proxy ${ext.host} with --egress-allow`);
      return { ...ext, ext: true };
    }
    const up = this.o.network();
    if (!up)
      throw portError(502, 'This port has no upstream: the sandbox runs without its proxy network and without an upstream (--proxy)');
    if (!up.network && !egressAllowed(up.host, this.o.egressAllow))
      throw portError(502, `The sandbox sends traffic only to loopback; allow the upstream ${up.host} with --egress-allow`);
    return { host: up.host, port: up.port, ...(up.network ? { network: true } : {}) };
  }

  /**
   * The ports of a chain that comes back to itself: the manager-wide upstream is a port of this sandbox
   * on loopback (without external proxies of its own), whose upstream is then itself; undefined when
   * the chain ends elsewhere. One request through such a chain once took 512 sockets and filled the log.
   */
  private loopOf(cfg: ProxyPortConfig): number[] | undefined {
    if (cfg.ext_proxies?.length) return undefined;
    const up = this.o.network();
    if (!up || up.network) return undefined;
    const host = up.host.replace(/^\[|\]$/g, '').toLowerCase();
    if (host !== 'localhost' && !(isIP(host) && isLoopback(host))) return undefined;
    const next = this.o.store.ports.get(up.port);
    if (!next || !this.servers.has(next.port) || next.ext_proxies?.length) return undefined;
    return next.port === cfg.port ? [cfg.port, cfg.port] : [cfg.port, next.port, next.port];
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
    const loop = this.loopOf(cfg);
    if (loop)
      throw portError(502, `Proxy loop: port ${loop.join(' -> ')} comes back to itself; start the sandbox with another upstream (--proxy)`);
    const upstream = this.upstreamOf(cfg);
    const zoneName = cfg.zone ?? s.zone;
    const zone = store.zones.get(zoneName);
    const password = cfg.password ?? zone?.passwords[0] ?? s.password ?? '';
    const userFor = (session: string) => portUsername(cfg, portCustomer(cfg, s.customer), zoneName, session, UPSTREAM_BRAND);
    const session = this.session(cfg, clientIp);
    const started = this.o.now();
    // The real manager's own headers: read into the request's context, neither passed on nor logged (lib/context.js 13-15, 134-139).
    const hola = request.headers['x-hola-context'];
    const context = Array.isArray(hola) ? hola[0] : hola;
    delete request.headers['x-hola-context'];
    delete request.headers['x-hola-agent'];
    const ctx: PortRequest = {
      store,
      cfg,
      port,
      clientIp,
      session,
      nextSession: () => this.session(cfg, clientIp),
      ua: String(request.headers['user-agent'] ?? ''),
      upstream,
      login: (session) => ({ username: userFor(session), password }),
      ...(upstream.network && this.o.inProcess ? { network: this.o.inProcess } : {}),
      started,
      now: this.o.now,
      gate: this.gateOf(cfg),
      targetCa: this.o.targetCa,
      ...(context ? { context } : {}),
      exchange: (method, url) => ({
        ...this.exchange(cfg, started, method, url, request, upstream, clientIp),
        ...(context ? { context } : {}),
      }),
      // A plain request whose client connection was closed for inactivity before it was answered is not logged (accept()).
      log: (x) => (isHttp && idleClosed.has(request.socket) ? undefined : this.log(x)),
    };
    const track = <T>(work: Promise<T>) => this.o.inflight?.track(work) ?? work;
    if (!isHttp && cfg.ssl === true) return this.mitm(ctx, hostname, targetPort);
    if (!isHttp) return { customTag: tunnel((socket, head) => track(servePortTunnel(ctx, request, socket, head, hostname, targetPort))) };
    return { customTag: respond((response) => track(servePortRequest(ctx, request, new URL(request.url as string), response))) };
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

  /**
   * SSL analyzing (`ssl: true`): the port answers the CONNECT itself, terminates TLS with a
   * certificate for the target signed by the sandbox's CA, and serves each request inside as an
   * HTTPS request, logged in full.
   */
  private async mitm(ctx: PortRequest, hostname: string, targetPort: number) {
    const ca = await this.o.ca();
    const origin = `https://${hostname.includes(':') ? `[${hostname}]` : hostname}${targetPort === 443 ? '' : `:${targetPort}`}`;
    const server = createHttpsServer(
      { ...ca.pemFor(hostname), SNICallback: (name, done) => done(null, ca.contextFor(name)) },
      (req, res) => {
        const served = servePortRequest(ctx, req, new URL(req.url ?? '/', origin), res);
        (this.o.inflight?.track(served) ?? served).catch((err: Error & { statusCode?: number; headers?: Record<string, string> }) => {
          // Once the answer's head is out, a failure can only cut it short.
          if (res.headersSent) return res.destroy();
          res.writeHead(err.statusCode ?? 502, { 'content-type': 'text/plain', ...(err.headers ?? {}) });
          res.end(err.message);
        });
      },
    );
    return {
      customTag: tunnel(async (socket, head) => {
        socket.unshift(head);
        socket.write(connectHead(200, 'Connection established'));
        server.emit('connection', socket);
        await new Promise((resolve) => socket.once('close', resolve));
      }),
    };
  }

  private exchange(
    cfg: ProxyPortConfig,
    started: number,
    method: string,
    url: string,
    request: PrepareRequestFunctionOpts['request'],
    upstream: { host: string; port: number },
    clientIp: string,
  ): Exchange {
    return {
      port: cfg.port,
      started,
      time: 0,
      method,
      url,
      requestHeaders: passHeaders(request.headers),
      requestBody: Buffer.alloc(0),
      status: 0,
      statusText: 'unknown',
      responseHeaders: {},
      responseBody: undefined,
      inBw: 0,
      outBw: 0,
      peer: null,
      upstream: `${upstream.host}:${upstream.port}`,
      username: '',
      session: '',
      answered: 0,
      clientIp,
      // As the real manager: a tunnel (its URL is its `host:port`) is `https` when its port is 443.
      protocol: (method === 'CONNECT' ? url.endsWith(':443') : url.startsWith('https:')) ? 'https' : 'http',
      harLimit: this.o.store.manager.settings.har_limit,
    };
  }

  /**
   * One HAR entry, the log trimmed to the settings' `logs` entries; with `logs: 0` nothing is logged
   * (as the real manager: lib/manager.js 360-367, lib/loki.js 91-99).
   */
  /** Listeners told of each request through a port that succeeded (its port), as the real manager's usage report. */
  private readonly succeeded: ((port: number) => void)[] = [];

  /** Calls `listener` with the port of each request that succeeds through a port (the real manager then shows the port `ok`). */
  onSuccess(listener: (port: number) => void): void {
    this.succeeded.push(listener);
  }

  private log(x: Exchange): void {
    // Whatever is logged: the real manager marks the port `ok` from the request's usage report (lib/manager.js 322-326).
    if (successful(x.status)) for (const l of this.succeeded) l(x.port);
    const keep = Math.min(Math.max(0, Number(this.o.store.manager.settings.logs) || 0), HAR_LIMITS.entries);
    if (!keep) return;
    const har = this.o.store.manager.har;
    // The bytes the log holds, counted as entries come and go; counted again when someone else changed it.
    if (har !== this.har.of || har.length !== this.har.count) this.har = { of: har, count: har.length, bytes: sumWeights(har) };
    const entry = harEntry(x);
    har.push(entry);
    this.har.bytes += harEntryWeight(entry);
    let drop = Math.max(0, har.length - keep);
    for (let i = 0; i < drop; i++) this.har.bytes -= harEntryWeight(har[i] as HarEntry);
    while (this.har.bytes > HAR_LIMITS.bytes && drop < har.length - 1) this.har.bytes -= harEntryWeight(har[drop++] as HarEntry);
    if (drop) har.splice(0, drop);
    this.har.count = har.length;
    this.o.store.touch('har');
    this.o.changed();
  }
}
