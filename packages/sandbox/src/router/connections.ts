import { readFileSync } from 'node:fs';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

// What a client connection may hold of any listener of the sandbox (both APIs, the network, every
// port): time before its request's head is whole, time its body may stall or drip, and a share of the
// process's file descriptors. Without these a peer that said nothing, or dripped a byte now and then,
// kept its socket (and what it had sent) for as long as it liked, and enough of them took every fd of
// the process: then every listener reset every connection (issue 39).

/** A request's head (from a connection's first byte, or from the last request's end) must be whole within this. */
export const HEADERS_MS = 10_000;
/** How often Node's HTTP server looks for connections past `HEADERS_MS` or `API_REQUEST_MS` (its default is 30 s). */
const CHECK_EVERY_MS = 1_000;
/** A whole request of either API (head and body, 2 MB at most) within this. */
export const API_REQUEST_MS = 30_000;
/**
 * A body being read must bring at least `BODY_MIN_BYTES` in each `BODY_WINDOW_MS` (counted only while
 * the sandbox reads it: a body held back because its target reads slowly is not the client's delay).
 */
export const BODY_WINDOW_MS = 10_000;
export const BODY_MIN_BYTES = 16 * 1024;
/** Client connections one listener holds at most (fewer when the process may open few files, `connectionCap`). */
export const CONNECTIONS_PER_LISTENER = 1024;
/** File descriptors kept for what is not a client connection (data file, targets, upstreams, the other listeners). */
const FD_RESERVE = 128;
/** A peer refused or timed out is let go of this long after it was answered, whether it read the answer or not. */
const LINGER_MS = 1_000;

/** The soft limit on open files of this process (Linux: /proc/self/limits), undefined where unknown. */
function openFileLimit(): number | undefined {
  try {
    const line = readFileSync('/proc/self/limits', 'utf8')
      .split('\n')
      .find((l) => l.startsWith('Max open files'));
    const soft = Number(line?.split(/\s{2,}/)[1]);
    return Number.isFinite(soft) && soft > 0 ? soft : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Connections one listener takes: `CONNECTIONS_PER_LISTENER`, or a quarter of the files this process may
 * open beyond `FD_RESERVE` when that is less (a proxied connection takes a second descriptor for where it
 * goes), so that one listener filled leaves the others theirs.
 */
export function connectionCap(): number {
  const limit = openFileLimit();
  if (limit === undefined) return CONNECTIONS_PER_LISTENER;
  return Math.max(8, Math.min(CONNECTIONS_PER_LISTENER, Math.floor((limit - FD_RESERVE) / 4)));
}

const REFUSED_BODY = 'The sandbox holds as many connections on this port as it takes; try again once one has closed.\n';
const REFUSED = `HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nRetry-After: 1\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(REFUSED_BODY)}\r\n\r\n${REFUSED_BODY}`;
const TIMED_OUT = 'HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Length: 0\r\n\r\n';

/** Writes `answer` (when given) and ends the socket; it is destroyed once the peer ends too, or `LINGER_MS` later. */
export function endWith(socket: Socket, answer?: string): void {
  socket.on('error', () => socket.destroy());
  if (socket.destroyed) return;
  if (answer && socket.writable) socket.end(answer);
  else socket.end();
  // What the peer still sends is read and dropped, so that its close does not meet unread bytes (a reset
  // that could lose the answer on its side).
  socket.resume();
  socket.once('end', () => socket.destroy());
  setTimeout(() => socket.destroy(), LINGER_MS).unref();
}

/**
 * Ends a request whose body stalls or drips (under `BODY_MIN_BYTES` in a `BODY_WINDOW_MS` while it is
 * read): a 408 when nothing was answered yet, else the connection alone.
 */
function watchBody(req: IncomingMessage, res: ServerResponse): void {
  if (req.complete) return;
  const socket = req.socket;
  let seen = socket.bytesRead;
  const timer = setInterval(() => {
    if (req.complete || socket.destroyed) return clearInterval(timer);
    const now = socket.bytesRead;
    const held = req.isPaused() || req.readableLength > 0;
    if (!held && now - seen < BODY_MIN_BYTES) {
      clearInterval(timer);
      endWith(socket, res.headersSent ? undefined : TIMED_OUT);
      return;
    }
    seen = now;
  }, BODY_WINDOW_MS).unref();
  req.once('end', () => clearInterval(timer));
  req.once('close', () => clearInterval(timer));
}

/**
 * Bounds the time of `server`'s requests: `HEADERS_MS` for a head, a body's pace (watchBody), and for
 * the APIs (`whole`) the whole request within `API_REQUEST_MS`. Called before the server listens (Node
 * reads its checking interval then).
 */
export function boundRequestTimes(server: Server, whole = false): void {
  server.headersTimeout = HEADERS_MS;
  server.requestTimeout = whole ? API_REQUEST_MS : 0;
  // An option of createServer that Node reads from the server when it starts listening (not in @types/node).
  (server as Server & { connectionsCheckingInterval: number }).connectionsCheckingInterval = CHECK_EVERY_MS;
  server.on('request', watchBody);
}

/**
 * Caps the client connections of `server` at `connectionCap()`: one past it is answered a 503 at once
 * and closed, as an answer rather than a reset. Called once every other handler of its `connection`
 * event is in place (it goes in front of them). A peer that ends its side before a handler took the
 * connection over (one whose first byte never came) is ended too.
 */
export function capConnections(server: Server, cap = connectionCap()): { count: () => number } {
  const accept = server.listeners('connection') as Array<(socket: Socket) => void>;
  server.removeAllListeners('connection');
  let open = 0;
  server.on('connection', (socket: Socket) => {
    if (open >= cap) {
      endWith(socket, REFUSED);
      return;
    }
    open++;
    socket.once('close', () => open--);
    for (const listener of accept) listener.call(server, socket);
  });
  return { count: () => open };
}
