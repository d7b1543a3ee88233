import { type ServerResponse, STATUS_CODES } from 'node:http';
import { connect, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { Server } from 'proxy-chain';
import { lookupFor, type Remote } from './lookup.js';
import { type ProxyHop, requestUpstream } from './upstream.js';

// CONNECT tunnels that the sandbox opens itself, so that the answer to the CONNECT carries headers (the
// network names the exit peer in it, as the provider's super proxy does, and a port reads it to log the
// tunnel's peer) and so that a port answers its client with the upstream's own answer. proxy-chain
// still reads the request and its credentials; a prepare function hands back `customTag: tunnel(…)`.

/** Opens the tunnel on the client's socket; throwing a proxy-chain RequestError before anything was written answers it. */
export type OpenTunnel = (socket: Socket, head: Buffer) => Promise<void>;
const TUNNEL = Symbol('tunnel');
export interface TunnelTag {
  [TUNNEL]: OpenTunnel;
}

/** The `customTag` of a prepare function's answer that makes the server open the tunnel with `open`. */
export const tunnel = (open: OpenTunnel): TunnelTag => ({ [TUNNEL]: open });

/**
 * Answers a plain request on the client's response as the answer arrives (proxy-chain's own
 * `customResponseFunction` wants a body read whole); throwing before anything was written answers
 * with the error (a proxy-chain RequestError: its status and headers).
 */
export type Respond = (response: ServerResponse) => Promise<void>;
const RESPOND = Symbol('respond');
interface RespondTag {
  [RESPOND]: Respond;
}

/** The `customTag` of a prepare function's answer that makes the server answer a plain request with `serve`. */
export const respond = (serve: Respond): RespondTag => ({ [RESPOND]: serve });

/**
 * The connections of a port that relays SMTP (ports.ts): the CONNECT in front of what the client sent
 * is the port's own, so its answer is not the client's to read. The tunnel relays from the start; a
 * CONNECT that fails ends the connection with nothing written (lib/smtp.js 25-36).
 */
export const smtpSockets = new WeakSet<Socket>();

/**
 * A proxy-chain server whose CONNECTs are opened by the `tunnel(…)` their prepare function returns,
 * and whose plain requests are answered by the `respond(…)` it returns.
 */
export class TunnelServer extends Server {
  /**
   * proxy-chain answers a failed request on its socket; a client that went away left none (its
   * `request.socket` is null), which proxy-chain would turn into a TypeError that ends the process.
   */
  override failRequest(request: Parameters<Server['failRequest']>[0], error: Parameters<Server['failRequest']>[1]): void {
    const socket = request.socket as Socket | null;
    if (!socket || socket.destroyed) return;
    super.failRequest(request, error);
  }

  override async onRequest(request: Parameters<Server['onRequest']>[0], response: ServerResponse): Promise<void> {
    try {
      const opts = await this.prepareRequestHandling(request);
      const serve = (opts.customTag as RespondTag | undefined)?.[RESPOND];
      if (!serve) throw new Error('a request was prepared without a responder');
      await serve(response);
    } catch (error) {
      // Once the answer's head is out, a failure can only cut it short.
      if (!response.headersSent) this.failRequest(request, this.normalizeHandlerError(error as NodeJS.ErrnoException));
      else response.destroy();
    }
  }

  override async onConnect(request: Parameters<Server['onConnect']>[0], socket: Socket, head: Buffer): Promise<void> {
    try {
      const opts = await this.prepareRequestHandling(request);
      const open = (opts.customTag as TunnelTag | undefined)?.[TUNNEL];
      if (!open) throw new Error('a CONNECT was prepared without a tunnel');
      await open(socket, head);
    } catch (error) {
      if (smtpSockets.has(socket)) socket.end();
      else if (socket.writable && socket.bytesWritten === 0) this.failRequest(request, error as NodeJS.ErrnoException);
      else socket.destroy();
    }
  }
}

/** The head of an answer to a CONNECT: its status line and headers. */
export function connectHead(status: number, message: string, headers: Record<string, string | string[] | undefined> = {}): string {
  let head = `HTTP/1.1 ${status} ${message || STATUS_CODES[status] || ''}\r\n`;
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    for (const v of [value].flat()) head += `${name}: ${v}\r\n`;
  }
  return `${head}\r\n`;
}

/**
 * How much a tunnel reads from its target at once. A relay's cost is per read and per write far more
 * than per byte: reading a download in 1 MB reads instead of a stream's 64 KB chunks, and writing
 * from the read buffer, cut the sandbox's CPU time per relayed 50 MB from 48 ms to 16 ms (`pnpm
 * bench`). The buffer is allocated uninitialised, so the pages a tunnel with little traffic never
 * reads into cost no memory. (The client's side is a socket the HTTP server accepted, which cannot be
 * given a buffer of its own: uploads are piped.)
 */
const TARGET_READ = 1024 * 1024;

/** Where a dialled target's bytes go: the client of the relay that took it over. */
interface Sink {
  to?: Socket;
}
const sinks = new WeakMap<Socket, Sink>();

/**
 * Hands bytes read from a dialled target to its client without copying them. The read buffer is used
 * again for the next read, so while the client's socket still holds some of them (the kernel did not
 * take the write whole) the target is not read: reading stops (false) until the client drains. A client
 * that went away gets nothing; the target is read on until it closes.
 */
function deliver(target: Socket, sink: Sink, bytes: Buffer): boolean {
  const to = sink.to;
  if (!to || to.destroyed || to.writableEnded) return true;
  to.write(bytes);
  if (to.writableLength === 0) return true;
  to.once('drain', () => target.resume());
  return false;
}

/** A TCP connection to a target, resolved once connected; it is not read until `relay` takes it over. */
export function dial(host: string, port: number, remote?: Remote, timeoutMs = 30_000): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const sink: Sink = {};
    const buffer = Buffer.allocUnsafe(TARGET_READ);
    const socket: Socket = connect({
      host: host.replace(/^\[|\]$/g, ''),
      port,
      ...lookupFor(host, remote),
      onread: { buffer, callback: (n) => deliver(socket, sink, buffer.subarray(0, n)) },
    });
    socket.pause();
    sinks.set(socket, sink);
    socket.setTimeout(timeoutMs, () =>
      socket.destroy(Object.assign(new Error('the target did not answer in time'), { code: 'ETIMEDOUT' })),
    );
    socket.once('error', reject);
    socket.once('connect', () => {
      socket.setTimeout(0);
      socket.removeListener('error', reject);
      // Until the relay takes it over, an error only closes it.
      socket.on('error', () => socket.destroy());
      resolve(socket);
    });
  });
}

export interface UpstreamTunnel {
  status: number;
  statusText: string;
  headers: Record<string, string | string[] | undefined>;
  /** The tunnel (or what follows a refusal's head, up to its end); none when `body` holds the refusal. */
  socket?: Socket;
  /** A refusal's text, when there is no socket to read it from. */
  body?: string;
  /** Bytes the upstream sent after its answer's head, already read. */
  head: Buffer;
}

/** A CONNECT to `authority` through the HTTP proxy `via` (over TLS when it says so): its answer, and the socket of the tunnel. */
export function connectVia(via: ProxyHop, authority: string, authorization: string, timeoutMs = 30_000) {
  return new Promise<UpstreamTunnel>((resolve, reject) => {
    const req = requestUpstream(via, {
      method: 'CONNECT',
      path: authority,
      headers: { host: authority, 'proxy-authorization': authorization },
      agent: false,
      ...lookupFor(via.host),
    });
    req.setTimeout(timeoutMs, () => req.destroy(Object.assign(new Error('the proxy did not answer in time'), { code: 'ETIMEDOUT' })));
    req.once('error', reject);
    req.once('connect', (res, socket, head) => {
      socket.setTimeout(0);
      socket.on('error', () => socket.destroy());
      resolve({ status: res.statusCode ?? 502, statusText: res.statusMessage ?? '', headers: res.headers, socket, head });
    });
    req.end();
  });
}

/**
 * Relays a tunnel both ways until both ends have closed: `client` (whose first bytes, `head`, were
 * read with the CONNECT) and `target`; a half-close is passed on, an error ends both. Resolves with
 * the bytes sent to the target (`up`) and received from it (`down`), read off the sockets' counters.
 */
export function relay(client: Socket, target: Socket, head: Buffer, targetHead?: Buffer): Promise<{ up: number; down: number }> {
  // An end that went away while the tunnel was being opened: nothing to relay.
  if (client.destroyed || target.destroyed) {
    client.destroy();
    target.destroy();
    return Promise.resolve({ up: 0, down: 0 });
  }
  const upAtStart = target.bytesWritten;
  const downAtStart = target.bytesRead - (targetHead?.length ?? 0);
  client.setNoDelay(true);
  target.setNoDelay(true);
  if (head.length) target.write(head);
  if (targetHead?.length) client.write(targetHead);
  const pipe = (from: Duplex, to: Duplex) => {
    from.pipe(to);
    from.once('error', () => to.destroy());
  };
  pipe(client, target);
  const sink = sinks.get(target);
  if (sink) {
    // A dialled target: its reads go straight to the client (see deliver); its end is passed on.
    sink.to = client;
    target.once('end', () => client.end());
    target.once('error', () => client.destroy());
    target.resume();
  } else pipe(target, client);
  let open = 2;
  return new Promise((resolve) => {
    const closed = () => {
      if (--open > 0) return;
      resolve({ up: target.bytesWritten - upAtStart, down: target.bytesRead - downAtStart });
    };
    // One side gone for good takes the other with it once it has flushed what it was sent.
    for (const [a, b] of [
      [client, target],
      [target, client],
    ] as const) {
      a.once('close', () => {
        if (!b.destroyed) b.end();
        b.resume();
        closed();
      });
    }
  });
}
