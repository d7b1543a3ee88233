import type { IncomingMessage } from 'node:http';
import type { Exchange } from '../domain/har.js';
import { loggedRequestHeaders } from './logged-headers.js';

// A request's HAR exchange as a port starts it (ports.ts), before it is sent: filled in as it goes
// (port-request.ts, port-tunnel.ts) and logged once answered.

/** A new exchange of a request through a port: `port` is the number the port listens on. */
export function newExchange(o: {
  port: number;
  started: number;
  method: string;
  url: string;
  /** The client's request, its control headers taken off (control-headers.ts), and the port's own `headers`. */
  request: Pick<IncomingMessage, 'headers' | 'rawHeaders' | 'method'>;
  portHeaders: readonly { name: string; value: string }[] | undefined;
  upstream: { host: string; port: number };
  clientIp: string;
  harLimit: Exchange['harLimit'];
}): Exchange {
  return {
    // Logged and counted under the number it listens on (lib/server.js 328, 352, 451).
    port: o.port,
    started: o.started,
    time: 0,
    method: o.method,
    url: o.url,
    requestHeaders: loggedRequestHeaders(o.request, o.portHeaders),
    requestBody: Buffer.alloc(0),
    status: 0,
    statusText: 'unknown',
    responseHeaders: {},
    responseBody: undefined,
    inBw: 0,
    outBw: 0,
    peer: null,
    upstream: `${o.upstream.host}:${o.upstream.port}`,
    username: '',
    session: '',
    answered: 0,
    clientIp: o.clientIp,
    // As the real manager: a tunnel (its URL is its `host:port`) is `https` when its port is 443.
    protocol: (o.method === 'CONNECT' ? o.url.endsWith(':443') : o.url.startsWith('https:')) ? 'https' : 'http',
    harLimit: o.harLimit,
  };
}
