import { request as httpRequest, STATUS_CODES } from 'node:http';
import { connect, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { Server } from 'proxy-chain';

// CONNECT tunnels that the sandbox opens itself, so that the answer to the CONNECT carries headers (the
// network names the exit peer in it, as the provider's super proxy does, and a port reads it to log the
// tunnel's peer) and so that a port answers its client with the upstream's own answer. proxy-chain
// still reads the request and its credentials; a prepare function hands back `customTag: tunnel(…)`.

/** Opens the tunnel on the client's socket; throwing a proxy-chain RequestError before anything was written answers it. */
export type OpenTunnel = (socket: Socket, head: Buffer) => Promise<void>;
const TUNNEL = Symbol('tunnel');
interface TunnelTag {
  [TUNNEL]: OpenTunnel;
}

/** The `customTag` of a prepare function's answer that makes the server open the tunnel with `open`. */
export const tunnel = (open: OpenTunnel): TunnelTag => ({ [TUNNEL]: open });

/** A proxy-chain server whose CONNECTs are opened by the `tunnel(…)` their prepare function returns. */
export class TunnelServer extends Server {
  override async onConnect(request: Parameters<Server['onConnect']>[0], socket: Socket, head: Buffer): Promise<void> {
    try {
      const opts = await this.prepareRequestHandling(request);
      const open = (opts.customTag as TunnelTag | undefined)?.[TUNNEL];
      if (!open) throw new Error('a CONNECT was prepared without a tunnel');
      await open(socket, head);
    } catch (error) {
      if (socket.writable && socket.bytesWritten === 0) this.failRequest(request, error as NodeJS.ErrnoException);
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

/** A TCP connection to a target, resolved once connected. */
export function dial(host: string, port: number, timeoutMs = 30_000): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: host.replace(/^\[|\]$/g, ''), port });
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

/** A CONNECT to `authority` through the HTTP proxy `via`: its answer, and the socket of the tunnel. */
export function connectVia(via: { host: string; port: number }, authority: string, authorization: string, timeoutMs = 30_000) {
  return new Promise<UpstreamTunnel>((resolve, reject) => {
    const req = httpRequest({
      host: via.host,
      port: via.port,
      method: 'CONNECT',
      path: authority,
      headers: { host: authority, 'proxy-authorization': authorization },
      agent: false,
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
  pipe(target, client);
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
