import { connect } from 'node:net';
import { type PrepareRequestFunctionOpts, RequestError, Server } from 'proxy-chain';
import { ipInList } from '../domain/net.js';
import type { Store } from '../domain/state.js';
import type { ProxyPortConfig } from '../domain/types.js';
import { headBytes } from './billing.js';
import { forward, passHeaders, readBody } from './forward.js';
import { type Exchange, harEntry } from './har.js';
import { egressAllowed } from './network.js';
import { headerBrand, portUsername } from './username.js';

// Manager proxy ports that listen: each port of the state is an HTTP proxy (proxy-chain) on its
// `iface` (loopback by default) that forwards to its upstream (`proxy`:`proxy_port`, the sandbox's
// proxy network by default) with the username built from its configuration, applies its headers,
// client whitelist, sessions and bans, and logs each request into the HAR log.

const BODY_LIMIT = 64 * 1024 * 1024;
/** The brand word the real manager sends upstream, and reads its answers by (`x-luminati-ip`). */
const BRAND = 'lum';

export interface PortTrafficOptions {
  store: Store;
  /** The sandbox's proxy network: the upstream of a port that names none. */
  network: () => { host: string; port: number } | undefined;
  egressAllow: readonly string[];
  changed: () => void;
  now: () => number;
}

const portError = (status: number, message: string) => new RequestError(message, status, { 'x-lpm-error': message });

/** At most `limit` at once; the others wait their turn (a port's `throttle`). */
class Gate {
  private active = 0;
  private readonly waiting: (() => void)[] = [];
  async run<T>(limit: number, work: () => Promise<T>): Promise<T> {
    if (this.active >= limit) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.active++;
    try {
      return await work();
    } finally {
      this.active--;
      this.waiting.shift()?.();
    }
  }
}

interface ExtDefaults {
  ext_proxy_username?: string;
  ext_proxy_password?: string;
  ext_proxy_port?: number;
}

/** An external proxy of `ext_proxies` (`{proxy: "[username:password@]host[:port]"}`), with the port's defaults. */
function extProxy(entry: { proxy: string }, d: ExtDefaults): { host: string; port: number; authorization?: string } {
  const at = entry.proxy.lastIndexOf('@');
  const given = at >= 0 ? entry.proxy.slice(0, at) : undefined;
  const [host, port] = (at >= 0 ? entry.proxy.slice(at + 1) : entry.proxy).split(':');
  const cred = given ?? (d.ext_proxy_username !== undefined ? `${d.ext_proxy_username}:${d.ext_proxy_password ?? ''}` : undefined);
  return {
    host: host as string,
    port: Number(port) || d.ext_proxy_port || 24000,
    ...(cred ? { authorization: `Basic ${Buffer.from(cred).toString('base64')}` } : {}),
  };
}

export class PortTraffic {
  private readonly servers = new Map<number, { server: Server; iface: string }>();
  private readonly tunnels = new Map<string, Exchange>();
  private readonly gates = new Map<number, Gate>();
  private rotation = 0;
  private extTurn = 0;

  constructor(private readonly o: PortTrafficOptions) {}

  /** Where a port listens: its `iface`, loopback when it names none. */
  private ifaceOf(cfg: ProxyPortConfig): string {
    const iface = (cfg as { iface?: string }).iface;
    return iface && iface !== 'any' ? iface : '127.0.0.1';
  }

  /** Starts listening on a port; rejects (EADDRINUSE, EACCES, …) when it cannot bind. */
  async open(cfg: ProxyPortConfig): Promise<void> {
    if (this.servers.has(cfg.port)) await this.close(cfg.port);
    const iface = this.ifaceOf(cfg);
    const port = cfg.port;
    const server = new Server({
      port,
      host: iface,
      authRealm: 'Proxy Manager',
      prepareRequestFunction: (opts) => this.prepare(port, opts),
    });
    server.on(
      'connectionClosed',
      ({ connectionId, stats }: { connectionId: number; stats?: { trgRxBytes: number | null; trgTxBytes: number | null } }) =>
        this.tunnelClosed(port, connectionId, stats),
    );
    await server.listen();
    this.servers.set(port, { server, iface });
  }

  async close(port: number): Promise<void> {
    const s = this.servers.get(port);
    if (!s) return;
    this.servers.delete(port);
    this.gates.delete(port);
    await s.server.close(true);
  }

  /**
   * The state of a port's upstream, checked for real: a TCP connection to it (the proxy it names, an
   * external proxy, or the sandbox's network). Undefined when it answers.
   */
  async upstreamProblem(cfg: ProxyPortConfig): Promise<string | undefined> {
    let up: { host: string; port: number };
    try {
      up = this.upstreamOf(cfg);
    } catch (err) {
      return (err as Error).message;
    }
    return new Promise((resolve) => {
      const socket = connect({ host: up.host, port: up.port });
      socket.setTimeout(3000, () => socket.destroy(Object.assign(new Error('timeout'), { code: 'ETIMEDOUT' })));
      socket.once('connect', () => {
        socket.destroy();
        resolve(undefined);
      });
      socket.once('error', (err: NodeJS.ErrnoException) =>
        resolve(`Upstream ${up.host}:${up.port} unreachable (${err.code ?? err.message})`),
      );
    });
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
    const c = cfg as { session?: string | boolean; rotate_session?: boolean; sticky_ip?: boolean };
    if (typeof c.session === 'string' && c.session) return c.session;
    if (c.rotate_session) return `${cfg.port}_r${++this.rotation}`;
    const n = this.o.store.manager.sessions[String(cfg.port)] ?? 0;
    return c.sticky_ip ? `${cfg.port}_${n}_${clientIp.replace(/[^0-9a-f]/gi, '')}` : `${cfg.port}_${n}`;
  }

  /** The port's upstream: the proxy it names (which egress must allow), else the sandbox's network. */
  private upstreamOf(cfg: ProxyPortConfig): { host: string; port: number; authorization?: string } {
    const c = cfg as { proxy?: string; proxy_port?: number; ext_proxies?: { proxy: string }[] } & ExtDefaults;
    if (c.ext_proxies?.length) {
      // External proxies take turns, each request the next; egress must allow each.
      const ext = extProxy(c.ext_proxies[this.extTurn++ % c.ext_proxies.length] as { proxy: string }, c);
      if (!egressAllowed(ext.host, this.o.egressAllow))
        throw portError(502, `The sandbox sends traffic only to loopback; allow the external proxy ${ext.host} with --egress-allow`);
      return ext;
    }
    if (c.proxy) {
      if (!egressAllowed(c.proxy, this.o.egressAllow))
        throw portError(502, `The sandbox sends traffic only to loopback; allow the upstream ${c.proxy} with --egress-allow`);
      return { host: c.proxy, port: c.proxy_port ?? 22225 };
    }
    const net = this.o.network();
    if (!net) throw portError(502, 'This port has no upstream: the sandbox runs without its proxy network and the port names no proxy');
    return { host: net.host, port: c.proxy_port ?? net.port };
  }

  private async prepare(port: number, { connectionId, request, hostname, port: targetPort, isHttp }: PrepareRequestFunctionOpts) {
    const store = this.o.store;
    const cfg = store.ports.get(port);
    if (!cfg) throw portError(502, `No proxy at port ${port}`);
    const s = store.manager.settings;
    const clientIp = request.socket.remoteAddress ?? '';
    const allowed = [...((cfg as { whitelist_ips?: string[] }).whitelist_ips ?? s.whitelist_ips), ...s.fixed_whitelist_ips];
    if (!ipInList(clientIp, allowed))
      throw new RequestError(`Client IP ${clientIp} is not in the whitelist of port ${port}`, 407, {
        'proxy-authenticate': 'Basic realm="Proxy Manager"',
        'x-lpm-error': 'ip_forbidden',
      });
    const upstream = this.upstreamOf(cfg);
    const zoneName = cfg.zone ?? s.zone;
    const zone = store.zones.get(zoneName);
    const password = (cfg as { password?: string }).password ?? zone?.passwords[0] ?? s.password ?? '';
    const credential = (session: string) =>
      `Basic ${Buffer.from(`${portUsername(cfg, s.customer, zoneName, session, BRAND)}:${password}`).toString('base64')}`;
    const session = this.session(cfg, clientIp);
    const started = this.o.now();
    if (!isHttp) {
      const user = portUsername(cfg, s.customer, zoneName, session, BRAND);
      this.tunnels.set(
        `${port}:${connectionId}`,
        this.exchange(cfg, started, 'CONNECT', `https://${hostname}:${targetPort}`, request, upstream, clientIp),
      );
      return { upstreamProxyUrl: `http://${encodeURIComponent(user)}:${encodeURIComponent(password)}@${upstream.host}:${upstream.port}` };
    }
    return {
      customResponseFunction: async () => {
        const url = new URL(request.url as string);
        const body = await readBody(request, BODY_LIMIT);
        const headers = { ...request.headers };
        for (const h of (cfg as { headers?: { name: string; value: string }[] }).headers ?? []) headers[h.name.toLowerCase()] = h.value;
        const host = url.hostname;
        const retries = (cfg as { max_ban_retries?: number }).max_ban_retries ?? 10;
        const upstreamRetries = (cfg as { proxy_retry?: number }).proxy_retry ?? 2;
        const throttle = Number((cfg as { throttle?: number | string }).throttle) || 0;
        const gate = throttle > 0 ? (this.gates.get(port) ?? this.gates.set(port, new Gate()).get(port)) : undefined;
        const send = (authorization: string) =>
          forward({
            method: request.method as string,
            url,
            headers,
            body,
            via: { ...upstream, authorization: upstream.authorization ?? authorization },
          });
        /** One attempt through the upstream, retried `proxy_retry` times when the upstream cannot be reached. */
        const attemptOnce = async (authorization: string) => {
          for (let tries = 0; ; tries++) {
            try {
              return await (gate ? gate.run(throttle, () => send(authorization)) : send(authorization));
            } catch (err) {
              if (tries >= upstreamRetries)
                throw portError(
                  502,
                  `The upstream ${upstream.host}:${upstream.port} cannot be reached (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
                );
            }
          }
        };
        let attempt = 0;
        let current = session;
        for (;;) {
          const res = await attemptOnce(credential(current));
          const peer = res.headers[`x-${headerBrand(BRAND)}-ip`] ?? null;
          const banned =
            peer !== null && store.activeBans(port, this.o.now()).some((b) => b.ip === peer && (b.domain === null || b.domain === host));
          if (banned && attempt < retries) {
            attempt++;
            current = `${session}_b${attempt}`;
            continue;
          }
          if (banned) throw portError(502, 'Too many banned IPs');
          const x = this.exchange(cfg, started, request.method as string, url.href, request, upstream, clientIp);
          x.requestHeaders = passHeaders(headers);
          x.requestBody = body;
          x.status = res.status;
          x.statusText = res.statusText;
          x.responseHeaders = res.headers;
          x.responseBody = res.body;
          x.peer = peer;
          x.outBw = headBytes(`${request.method} ${request.url} HTTP/1.1`, request.rawHeaders) + body.length;
          x.inBw = headBytes(`HTTP/1.1 ${res.status} ${res.statusText}`, res.rawHeaders) + res.body.length;
          x.time = this.o.now() - started;
          this.log(x);
          return { statusCode: res.status, headers: res.headers, body: res.body };
        }
      },
    };
  }

  private exchange(
    cfg: ProxyPortConfig,
    started: number,
    method: string,
    url: string,
    request: PrepareRequestFunctionOpts['request'],
    upstream: { host: string },
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
      upstream: upstream.host,
      clientIp,
      protocol: method === 'CONNECT' || url.startsWith('https:') ? 'https' : 'http',
      harLimit: this.o.store.manager.settings.har_limit,
    };
  }

  private tunnelClosed(port: number, connectionId: number, stats?: { trgRxBytes: number | null; trgTxBytes: number | null }): void {
    const x = this.tunnels.get(`${port}:${connectionId}`);
    if (!x) return;
    this.tunnels.delete(`${port}:${connectionId}`);
    x.inBw = stats?.trgRxBytes ?? 0;
    x.outBw = stats?.trgTxBytes ?? 0;
    x.time = this.o.now() - x.started;
    this.log(x);
  }

  /** One HAR entry, the log trimmed to the settings' `logs` entries (1000 by default). */
  private log(x: Exchange): void {
    const har = this.o.store.manager.har;
    har.push(harEntry(x));
    const keep = Math.max(0, this.o.store.manager.settings.logs || 1000);
    if (har.length > keep) har.splice(0, har.length - keep);
    this.o.changed();
  }
}
