import type { Socket } from 'node:net';
import { createServer as createTlsServer, type TLSSocket, type Server as TlsServer } from 'node:tls';
import { HEADERS_MS } from '../router/connections.js';
import { type SandboxCa, sniFrom } from './ca.js';
import type { TunnelServer } from './tunnel.js';

// The proxy network's one listener takes plain HTTP and TLS alike, as the provider's super proxy does
// on its port: the real manager sends a port's traffic to the same `proxy`:`proxy_port` in the clear
// or, with `proxy_connection_type: "https"`, over TLS (lib/requester.js 14-29: both requesters reach
// `ctx.host`:`ctx.proxy_port`; lib/mixins/mgr_config.js 407-414 turns every port to `https` for users
// in China without changing the port), and the provider documents both connection kinds to the super
// proxy (Proxy Manager FAQ, "How to connect to superproxy via HTTPS?"). A connection whose first byte
// opens a TLS handshake (a record of type 22) is handed to a TLS server that presents a certificate
// of the sandbox's CA (ca.ts) for the name the client asked for (its SNI), else for the listener's
// host; the HTTP it carries then reaches the same proxy as a plain connection's.

/** TLS handshakes the network runs at once (the others wait their turn). */
export const TLS_HANDSHAKES = 4;
/** The first byte of a TLS record that carries a handshake (RFC 8446 5.1, ContentType handshake). */
const TLS_HANDSHAKE = 0x16;

/**
 * Makes `server` (listening) take TLS connections beside plain ones. `ca` gives the sandbox's CA when a
 * TLS connection first comes; `host` names the certificate for a client that sends no SNI. Returns what
 * ends, before the server closes, the connections it does not track itself: those whose first byte has
 * not come yet, and those under TLS (the server tracks the TLS socket, not the connection beneath).
 */
export function acceptTls(server: TunnelServer, ca: () => Promise<SandboxCa>, host: string): () => void {
  const http = server.server;
  const accept = http.listeners('connection') as Array<(socket: Socket) => void>;
  http.removeAllListeners('connection');
  const handOn = (socket: Socket) => {
    for (const listener of accept) listener.call(http, socket);
  };
  let tls: Promise<TlsServer> | undefined;
  const tlsServer = () => {
    tls ??= ca().then(async (authority) => {
      const t = createTlsServer({
        ...(await authority.pemFor(host)),
        handshakeTimeout: HEADERS_MS,
        SNICallback: sniFrom(authority),
      });
      t.on('secureConnection', (socket: TLSSocket) => {
        handshakeDone();
        handOn(socket);
      });
      // A handshake that fails (a client that does not trust the certificate, or that is no TLS client,
      // or one that went away or took longer than HEADERS_MS) ends its connection.
      t.on('tlsClientError', (_err, socket) => {
        handshakeDone();
        socket.destroy();
      });
      return t;
    });
    return tls;
  };
  // Handshakes at once: each costs the event loop a private-key operation (and a certificate for a new
  // name); past TLS_HANDSHAKES a connection waits its turn, so that the APIs' requests are served between.
  let shaking = 0;
  const waiting: Array<() => void> = [];
  const handshakeDone = () => {
    shaking--;
    const next = waiting.shift();
    if (next) next();
  };
  const handshake = (start: () => void) => {
    const go = () => {
      shaking++;
      start();
    };
    if (shaking < TLS_HANDSHAKES) go();
    else waiting.push(go);
  };
  /** Connections not handed on in the clear: those still sniffed and those under TLS. */
  const untracked = new Set<Socket>();
  http.on('connection', (socket: Socket) => {
    untracked.add(socket);
    // Until its first byte: a peer that ends is ended (the HTTP server, which would, has not got it yet),
    // and one that sends nothing for as long as a head may take is let go of.
    const quiet = setTimeout(() => socket.destroy(), HEADERS_MS).unref();
    const ended = () => socket.destroy();
    socket.once('end', ended);
    socket.once('close', () => {
      clearTimeout(quiet);
      untracked.delete(socket);
    });
    socket.once('error', () => socket.destroy());
    socket.once('data', (first: Buffer) => {
      clearTimeout(quiet);
      socket.removeListener('end', ended);
      socket.pause();
      socket.unshift(first);
      if (first[0] !== TLS_HANDSHAKE) {
        untracked.delete(socket);
        handOn(socket);
        socket.resume();
        return;
      }
      tlsServer().then(
        (t) =>
          handshake(() => {
            if (socket.destroyed) return handshakeDone();
            // TLS does not half-close: an end from the client ends the connection.
            socket.allowHalfOpen = false;
            t.emit('connection', socket);
          }),
        () => socket.destroy(),
      );
    });
  });
  return () => {
    for (const socket of untracked) socket.destroy();
  };
}
