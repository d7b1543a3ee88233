import type { Socket } from 'node:net';
import { PORT_DEFAULTS } from '../domain/port-defaults.js';
import type { ProxyPortConfig } from '../domain/types.js';
import { smtpSockets, type TunnelServer } from './tunnel.js';

// A port's client connections as the real manager's connection handler takes them (ports.ts listens).

/** Client connections a port ended for inactivity (acceptConnections()). */
const idleClosed = new WeakSet<Socket>();

/**
 * A port's inactivity timeout in ms (acceptConnections()): its `socket_inactivity_timeout`, the default (120 s)
 * when it has none (a create drops an empty value, lib/mixins/mgr_proxy.js 272); undefined for a value
 * Node's `socket.setTimeout` refuses (no number, or a negative one).
 */
function inactivityOf(cfg: ProxyPortConfig | undefined): number | undefined {
  // The spec's number, or whatever a lenient create kept as sent.
  const given: unknown = cfg?.socket_inactivity_timeout;
  if (given === undefined || given === null || given === '') return PORT_DEFAULTS.socket_inactivity_timeout;
  return typeof given === 'number' && given >= 0 ? given : undefined;
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
 *   accepts any (observed: ECONNRESET, then ECONNREFUSED; it is still listed): `broken` closes it.
 */
export function acceptConnections(server: TunnelServer, cfgOf: () => ProxyPortConfig | undefined, broken: () => void): void {
  const http = server.server;
  const accept = http.listeners('connection') as Array<(socket: Socket) => void>;
  http.removeAllListeners('connection');
  http.on('connection', (socket: Socket) => {
    const cfg = cfgOf();
    const idle = inactivityOf(cfg);
    if (idle === undefined) {
      // Reset once the client has sent its request, as the worker's end resets it (read ECONNRESET).
      socket.once('data', () => socket.resetAndDestroy());
      socket.once('end', () => socket.destroy());
      socket.once('error', () => undefined);
      return;
    }
    const list: ArrayLike<unknown> | undefined = cfg?.smtp;
    if (list?.length) {
      const address = list[Math.floor(Math.random() * list.length)];
      if (typeof address !== 'string') {
        socket.resetAndDestroy();
        broken();
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

/** Whether a port ended this client connection for inactivity before its request was answered (then not logged). */
export const closedForInactivity = (socket: Socket): boolean => idleClosed.has(socket);
