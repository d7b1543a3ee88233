import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { Readable } from 'node:stream';
import { type PrepareRequestFunctionOpts, RequestError } from 'proxy-chain';
import { bill } from '../domain/billing.js';
import { ipInList } from '../domain/net.js';
import { PORT_DEFAULTS } from '../domain/port-defaults.js';
import type { Store } from '../domain/state.js';
import type { ZoneState } from '../domain/types.js';
import { boundRequestTimes, capConnections } from '../router/connections.js';
import { headerBrand, NETWORK_REALM } from '../shared/brand.js';
import { counted, PREREAD, StreamedBody } from './body.js';
import type { SandboxCa } from './ca.js';
import { egressAllowed, egressMessage, loopbackRefused, remoteLoopbackMessage } from './egress.js';
import {
  type Forwarded,
  type ForwardOptions,
  forward,
  metered,
  passOn,
  requestBytes,
  requestSize,
  responseHeadBytes,
  writeAnswerHead,
} from './forward.js';
import type { Inflight } from './inflight.js';
import { refuse } from './network-refusals.js';
import { answeredHere, type Exit, testHostAnswer } from './test-host.js';
import { acceptTls } from './tls-accept.js';
import { connectHead, dial, relay, respond, TunnelServer, tunnel, type UpstreamTunnel } from './tunnel.js';
import { parseUsername } from './username.js';

// The emulated proxy network (the provider's super proxy): an HTTP proxy (absolute-URI requests and
// CONNECT, by proxy-chain; in the clear or over TLS on the same port, tls-accept.ts) that authenticates the provider's username and a Zone password, enforces
// the account's state, picks an exit peer from the Zone's own IPs, forwards, and bills the Zone.
// Its refusals are each a distinct error, named in `x-<brand>-error` / `x-<brand>-err-code` and in an
// RFC 9209 `Proxy-Status`.

/** The upstream's port, as the provider's (a port's default `proxy_port`). */
export const DEFAULT_NETWORK_PORT = PORT_DEFAULTS.proxy_port;
const STICKY_LIMIT = 10_000;

export interface NetworkOptions {
  store: Store;
  host: string;
  port: number;
  /** Targets beyond loopback that traffic may reach: `*`, host names, `.suffix` domains, IPs, ranges, subnets. */
  egressAllow: readonly string[];
  /** Refuse username options the network does not know (default: ignore them, as the provider does). */
  strict?: boolean;
  /** CA certificates (PEM) trusted for HTTPS targets beside the system's. */
  targetCa?: readonly string[];
  /** The sandbox's CA, whose certificate the network presents to a client that speaks TLS to it. */
  ca: () => Promise<SandboxCa>;
  /** Called after a request changed the state (its usage), to persist it. */
  changed: () => void;
  now: () => number;
  /** Counts each request and tunnel until it is billed (sandbox.settled()). */
  inflight?: Inflight;
  /** The state of another account of the sandbox (sandbox.createAccount()), by customer; `store` is the first. */
  storeOf?: (customer: string) => Store | undefined;
}

/** What the network reads of a request to admit it: the credential, where it comes from, where it goes. */
export interface Admission {
  username: string;
  password: string;
  clientIp: string;
  hostname: string;
  port: number;
  ua: string;
}

export interface ProxyNetwork {
  port: number;
  url: string;
  /** A CONNECT as a port of this sandbox sends it, without the loopback hop: the answer, and the target's socket when it is 200. */
  openTunnel(r: Admission): Promise<UpstreamTunnel>;
  /** A plain request as a port of this sandbox sends it, without the loopback hop: the network's answer (its refusals too). */
  request(r: Admission, req: Omit<ForwardOptions, 'ca' | 'via'>): Promise<Forwarded>;
  close(): Promise<void>;
}

const matchesDomain = (host: string, domain: string) => host === domain || host.endsWith(`.${domain}`);

/**
 * The exit peers of a Zone, with what targeting reads of them: its datacenter IPs (country and city
 * from the pool), the peers of its gIPs (asn, and state and city from the gIP's id
 * `<country>_<asn>_<state>_<city>_<n>`), and its residential peers (country, asn).
 */
function exitsOf(store: Store, zone: ZoneState): Exit[] {
  const out = new Map<string, Exit>();
  for (const ip of zone.ips) {
    const p = store.pool.get(ip);
    out.set(ip, { ip, country: p?.country ?? '', ...(p?.city ? { city: p.city } : {}) });
  }
  for (const p of store.peers) {
    if (p.zone !== zone.name && !(p.vip !== undefined && zone.gips.includes(p.vip))) continue;
    const [, , state, city] = p.vip?.split('_') ?? [];
    out.set(p.ip, { ip: p.ip, country: p.country, asn: p.asn, ...(state ? { state } : {}), ...(city ? { city } : {}) });
  }
  return [...out.values()];
}

/** Targeting compares names without case, spaces or underscores (`New York`, `newyork`). */
const norm = (v: string | undefined) => (v ?? '').toLowerCase().replace(/[\s_]/g, '');

export async function startNetwork(o: NetworkOptions): Promise<ProxyNetwork> {
  /** `<zone>:<session>` -> exit IP: a session keeps its peer while the peer serves the Zone. */
  const sticky = new Map<string, string>();
  let turn = 0;

  function pickExit(store: Store, brand: string, zone: ZoneState, options: Record<string, string>): Exit {
    let exits = exitsOf(store, zone);
    if (options.ip) exits = exits.filter((e) => e.ip === options.ip);
    if (options.gip || options.vip) {
      const vip = options.gip ?? options.vip;
      const ips = new Set(store.peers.filter((p) => p.vip === vip && zone.gips.includes(vip as string)).map((p) => p.ip));
      exits = exits.filter((e) => ips.has(e.ip));
    }
    if (options.country) exits = exits.filter((e) => e.country === options.country?.toLowerCase());
    for (const key of ['state', 'city', 'asn'] as const) {
      if (options[key]) exits = exits.filter((e) => norm(e[key]) === norm(options[key]));
    }
    if (!exits.length) {
      const asked = Object.entries(options)
        .filter(([k]) => ['ip', 'gip', 'vip', 'country', 'state', 'city', 'asn'].includes(k))
        .map(([k, v]) => `${k} ${v}`);
      throw refuse(brand, 'no_peers', `No peer of Zone ${zone.name}${asked.length ? ` for ${asked.join(', ')}` : ''}`);
    }
    const key = options.session ? `${store.account.customer}:${zone.name}:${options.session}` : undefined;
    const kept = key ? sticky.get(key) : undefined;
    const keptExit = kept ? exits.find((e) => e.ip === kept) : undefined;
    if (keptExit) return keptExit;
    const exit = exits[turn++ % exits.length] as Exit;
    if (key) {
      if (sticky.size >= STICKY_LIMIT) sticky.delete(sticky.keys().next().value as string);
      sticky.set(key, exit.ip);
    }
    return exit;
  }

  /**
   * Who may send this request, and through which exit peer: the checks of the network, in order; a
   * refusal throws. `here`: the network answers the request itself (answeredHere), so egress does not apply.
   */
  function admit(r: Admission, here = false) {
    const { username, password, clientIp, hostname } = r;
    const user = username ? parseUsername(username, o.strict) : { error: 'no Proxy-Authorization: Basic credential was sent' };
    const brand = 'brand' in user ? user.brand : 'zone-api';
    if ('error' in user) throw refuse(brand, 'auth_failed', `Proxy authentication failed: ${user.error}`);
    // The account the username names: the sandbox's first, or one made by createAccount().
    const store = user.customer === o.store.account.customer ? o.store : o.storeOf?.(user.customer);
    const zone = store?.zones.get(user.zone);
    if (!store || !zone?.passwords.includes(password))
      throw refuse(brand, 'auth_failed', 'Proxy authentication failed: wrong customer, Zone or password');
    if (store.account.status !== 'active') throw refuse(brand, 'account_suspended', `The account is ${store.account.status}`);
    if (zone.disabled) throw refuse(brand, 'zone_disabled', `Zone ${zone.name} is disabled`);
    if (!ipInList(clientIp, zone.whitelist))
      throw refuse(brand, 'client_ip_forbidden', `Client IP ${clientIp} is not in the whitelist of Zone ${zone.name}`);
    const host = hostname.toLowerCase();
    const { whitelist, blacklist = [] } = zone.domains;
    if ((whitelist.length && !whitelist.some((d) => matchesDomain(host, d))) || blacklist.some((d) => matchesDomain(host, d)))
      throw refuse(brand, 'domain_forbidden', `Domain ${host} is not allowed for Zone ${zone.name}`);
    if (!here && !egressAllowed(host, o.egressAllow))
      throw refuse(brand, 'egress_refused', `The sandbox sends traffic only to loopback targets; allow ${host} with --egress-allow`);
    if (loopbackRefused(host, clientIp, o.egressAllow)) throw refuse(brand, 'egress_refused', remoteLoopbackMessage(clientIp, host));
    const exit = pickExit(store, brand, zone, user.options);
    const usage = { zone, clientIp, session: user.options.session ?? '', ua: r.ua, host };
    return { store, brand, exit, usage, peerHeader: { [`x-${headerBrand(brand)}-ip`]: exit.ip } };
  }

  /**
   * The exit of a tunnel: the target dialled (a target that refuses is billed and refused), billed
   * with the bytes each way when it closes. The answer to the CONNECT names the exit peer, as the
   * provider's super proxy does.
   */
  async function openExit(r: Admission): Promise<{ target: Socket; headers: Record<string, string> }> {
    const { store, brand, usage, peerHeader } = admit(r);
    const billed = { ...usage, url: `${usage.host}:${r.port}` };
    // In flight from its admission until it is billed, when it closes (sandbox.settled()).
    const settle = o.inflight?.start() ?? (() => {});
    let target: Socket;
    try {
      target = await dial(r.hostname, r.port, { clientIp: r.clientIp, allow: o.egressAllow });
    } catch (err) {
      bill(store, { ...billed, status: 502, message: 'Target unreachable', up: 0, down: 0 }, store.clock.now());
      o.changed();
      settle();
      const code = (err as NodeJS.ErrnoException).code ?? 'error';
      if (code === 'EGRESS_REFUSED') throw refuse(brand, 'egress_refused', egressMessage(err as Error));
      throw refuse(brand, 'target_unreachable', `The target ${billed.url} cannot be reached (${code})`);
    }
    target.once('close', () => {
      bill(
        store,
        { ...billed, status: 200, message: 'Connection established', up: target.bytesWritten, down: target.bytesRead },
        store.clock.now(),
      );
      o.changed();
      settle();
    });
    return { target, headers: peerHeader };
  }

  async function prepare({ request, username, password, hostname, port, isHttp }: PrepareRequestFunctionOpts) {
    const admission = {
      username,
      password,
      hostname,
      port,
      clientIp: request.socket.remoteAddress ?? '',
      ua: String(request.headers['user-agent'] ?? ''),
    };
    if (!isHttp) {
      return {
        customTag: tunnel(async (socket, head) => {
          const { target, headers } = await openExit(admission);
          socket.write(connectHead(200, 'Connection established', headers));
          await relay(socket, target, head);
        }),
      };
    }
    const url = new URL(request.url as string);
    const admitted = admit(admission, answeredHere(url));
    return {
      customTag: respond(async (response) => {
        // Streamed on as it arrives (the network keeps none of it, and sends it once).
        const body = new StreamedBody(request, 0, PREREAD);
        await body.start();
        const res = await exchange(admitted, { method: request.method as string, url, headers: request.headers, body: body.open() }, () =>
          requestBytes(request, body.bytes),
        );
        writeAnswerHead(response, res);
        await passOn(res.body, response, 0);
        body.finish();
      }),
    };
  }

  /**
   * A plain request forwarded to its target through the exit peer, its answer naming the peer. The
   * answer's body is handed on as it arrives and billed, with its head, once it ended or was let go of.
   */
  async function exchange(a: ReturnType<typeof admit>, req: Omit<ForwardOptions, 'ca'>, up: () => number): Promise<Forwarded> {
    // In flight until it is billed (sandbox.settled()).
    const settle = o.inflight?.start() ?? (() => {});
    let res: Forwarded;
    try {
      res = answeredHere(req.url)
        ? testHostAnswer(a.exit, req)
        : await forward({ ...req, ca: o.targetCa, remote: { clientIp: a.usage.clientIp, allow: o.egressAllow } });
    } catch (err) {
      settle();
      const code = (err as NodeJS.ErrnoException).code ?? 'error';
      if (code === 'EGRESS_REFUSED') throw refuse(a.brand, 'egress_refused', egressMessage(err as Error));
      throw refuse(a.brand, 'target_unreachable', `The target ${req.url.host} cannot be reached (${code})`);
    }
    const head = responseHeadBytes(res);
    const body = metered(res.body, (bytes) => {
      const usage = { ...a.usage, url: req.url.href, status: res.status, message: res.statusText, up: up(), down: head + bytes };
      bill(a.store, usage, a.store.clock.now());
      o.changed();
      settle();
    });
    return { ...res, body, headers: { ...res.headers, ...a.peerHeader } };
  }

  /**
   * A refusal of the network as the answer a client reads: the headers proxy-chain writes with it over
   * TCP, so that a port reaching the network in process hands on the same answer.
   */
  function refusal(err: RequestError): { status: number; statusText: string; headers: Record<string, string>; body: string } {
    const headers = {
      ...(err.headers as Record<string, string>),
      date: new Date().toUTCString(),
      server: NETWORK_REALM,
      'content-type': 'text/plain; charset=utf-8',
    };
    return { status: err.statusCode, statusText: STATUS_CODES[err.statusCode] ?? '', headers, body: err.message };
  }

  /** A plain request as a port of this sandbox sends it, without the loopback hop: the network's answer. */
  async function request(r: Admission, req: Omit<ForwardOptions, 'ca' | 'via'>): Promise<Forwarded> {
    try {
      const admitted = admit(r, answeredHere(req.url));
      const body = counted(req.body);
      return await exchange(admitted, { ...req, body: body.body }, () => requestSize(req.method, req.url.href, req.headers, body.bytes()));
    } catch (err) {
      if (!(err instanceof RequestError)) throw err;
      const { body, ...refused } = refusal(err);
      // Its length, as proxy-chain writes it over TCP (the client gets no chunked refusal).
      const answer = { ...refused, headers: { ...refused.headers, 'content-length': String(Buffer.byteLength(body)) } };
      return { ...answer, rawHeaders: Object.entries(answer.headers).flat(), body: Readable.from([Buffer.from(body)]) };
    }
  }

  /** A tunnel opened in process (a port of this sandbox whose upstream is this network): the network's answer, and the target. */
  async function openTunnel(r: Admission): Promise<UpstreamTunnel> {
    try {
      const { target, headers } = await openExit(r);
      return { status: 200, statusText: 'Connection established', headers, socket: target, head: Buffer.alloc(0) };
    } catch (err) {
      if (!(err instanceof RequestError)) throw err;
      return { ...refusal(err), head: Buffer.alloc(0) };
    }
  }

  const server = new TunnelServer({
    port: o.port,
    host: o.host,
    prepareRequestFunction: prepare,
    authRealm: NETWORK_REALM,
  });
  boundRequestTimes(server.server);
  await server.listen();
  const endTls = acceptTls(server, o.ca, o.host);
  capConnections(server.server);
  const port = server.port;
  return {
    port,
    url: `http://${o.host.includes(':') ? `[${o.host}]` : o.host}:${port}`,
    openTunnel,
    request,
    close: () => {
      endTls();
      return server.close(true);
    },
  };
}
