import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import { rootCertificates, type TLSSocket, connect as tlsConnect } from 'node:tls';
import { RequestError } from 'proxy-chain';
import { PORT_ERROR_HEADER } from '../brand.js';

// One HTTP request forwarded, directly to its target (the proxy network's exit) or through an
// upstream HTTP proxy (a proxy port), its answer read whole: the sandbox logs, bills and bans on it.

/** Headers of one hop that a proxy does not pass on (RFC 9110 7.6.1), with the proxy's own credential. */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-authorization',
  'proxy-authenticate',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

export interface Forwarded {
  status: number;
  statusText: string;
  /** Response headers as received, names in lower case (hop-by-hop ones left out). */
  headers: Record<string, string>;
  rawHeaders: string[];
  body: Buffer;
  /** The headers of the upstream's answer to the CONNECT an HTTPS request went through (the exit peer's among them). */
  connectHeaders?: IncomingMessage['headers'];
}

export interface ForwardOptions {
  method: string;
  url: URL;
  /** The client's headers (hop-by-hop ones are dropped here). */
  headers: IncomingMessage['headers'];
  body: Buffer;
  /** An upstream HTTP proxy to send the request through, with its `Proxy-Authorization`. */
  via?: { host: string; port: number; authorization: string };
  /** CA certificates (PEM) trusted for an HTTPS target beside the system's. */
  ca?: readonly string[];
  /** Accept an HTTPS target's certificate unchecked (a port's `insecure`). */
  insecure?: boolean;
  timeoutMs?: number;
}

/** The largest request body a proxy reads (the network and the ports alike). */
export const BODY_LIMIT = 64 * 1024 * 1024;
/** The largest answer a proxy reads from its target or upstream (past it: 502 naming the limit). */
export const RESPONSE_LIMIT = 64 * 1024 * 1024;

/**
 * The client's request body, read whole. Past `limit` the rest is read and dropped (the connection stays
 * whole, so that the client gets the answer) and the read fails with a 413 that proxy-chain writes. A
 * client that goes away mid-body fails the read too; nothing of either is fatal.
 */
export function readBody(req: IncomingMessage, limit = BODY_LIMIT): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) {
        chunks.push(chunk);
        return;
      }
      chunks.length = 0;
      req.removeListener('data', onData);
      req.resume();
      reject(new RequestError(`The request body is larger than ${limit} bytes`, 413, { [PORT_ERROR_HEADER]: 'body_too_large' }));
    };
    req.on('data', onData);
    req.once('end', () => resolve(Buffer.concat(chunks)));
    req.once('error', reject);
    req.once('close', () => {
      if (!req.complete) reject(Object.assign(new Error('the client went away before its body ended'), { code: 'ECONNRESET' }));
    });
  });
}

/** The bytes a request or response head takes on the wire (status or request line and headers). */
function headBytes(firstLine: string, rawHeaders: readonly string[]): number {
  let n = firstLine.length + 2 + 2;
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) n += (rawHeaders[i] as string).length + 2 + (rawHeaders[i + 1] as string).length + 2;
  return n;
}

/** Bytes of a request as sent: its request line, headers and body. */
export function requestSize(method: string, url: string, headers: IncomingMessage['headers'], body: Buffer): number {
  const raw = Object.entries(passHeaders(headers)).flatMap(([k, v]) => [v].flat().flatMap((x) => [k, String(x)]));
  return headBytes(`${method} ${url} HTTP/1.1`, raw) + body.length;
}

/** Bytes the client sent: its request's head and body. */
export const requestBytes = (req: IncomingMessage, body: Buffer): number =>
  headBytes(`${req.method} ${req.url} HTTP/1.1`, req.rawHeaders) + body.length;

/** Bytes of a forwarded answer: its head and body. */
export const responseBytes = (res: Forwarded): number =>
  headBytes(`HTTP/1.1 ${res.status} ${res.statusText}`, res.rawHeaders) + res.body.length;

export function passHeaders(headers: IncomingMessage['headers']): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(headers)) if (v !== undefined && !HOP_BY_HOP.has(k)) out[k] = v;
  return out;
}

/**
 * A tunnel to `url`'s host through the proxy `via` (CONNECT), with TLS to the target on top: how an
 * HTTPS request reaches its target through an HTTP proxy.
 */
function tunnel(
  o: ForwardOptions & { via: NonNullable<ForwardOptions['via']> },
): Promise<{ tls: TLSSocket; headers: IncomingMessage['headers'] }> {
  return new Promise((resolve, reject) => {
    const authority = `${o.url.hostname}:${o.url.port || 443}`;
    const req = httpRequest({
      host: o.via.host,
      port: o.via.port,
      method: 'CONNECT',
      path: authority,
      headers: { host: authority, 'proxy-authorization': o.via.authorization },
    });
    req.setTimeout(o.timeoutMs ?? 30_000, () =>
      req.destroy(Object.assign(new Error('the proxy did not answer in time'), { code: 'ETIMEDOUT' })),
    );
    req.on('error', reject);
    req.on('connect', (res, socket) => {
      if (res.statusCode !== 200) {
        socket.destroy();
        reject(Object.assign(new Error(`the proxy refused the tunnel: ${res.statusCode}`), { code: 'ETUNNEL', status: res.statusCode }));
        return;
      }
      const name = o.url.hostname.replace(/^\[|\]$/g, '');
      const tls = tlsConnect({
        socket,
        host: name,
        ...(isIP(name) ? {} : { servername: name }),
        ...(o.ca?.length ? { ca: [...rootCertificates, ...o.ca] } : {}),
        rejectUnauthorized: o.insecure !== true,
      });
      tls.once('secureConnect', () => resolve({ tls, headers: res.headers }));
      tls.once('error', reject);
    });
    req.end();
  });
}

export async function forward(o: ForwardOptions): Promise<Forwarded> {
  const tunnelled = o.via && o.url.protocol === 'https:' ? await tunnel({ ...o, via: o.via }) : undefined;
  const socket = tunnelled?.tls;
  return new Promise((resolve, reject) => {
    const headers = passHeaders(o.headers);
    headers['content-length'] = String(o.body.length);
    let req: ReturnType<typeof httpRequest>;
    if (socket) {
      headers.host = o.url.host;
      req = httpRequest({ method: o.method, path: `${o.url.pathname}${o.url.search}`, headers, createConnection: () => socket });
    } else if (o.via) {
      headers['proxy-authorization'] = o.via.authorization;
      headers.host = o.url.host;
      req = httpRequest({ host: o.via.host, port: o.via.port, method: o.method, path: o.url.href, headers });
    } else {
      req =
        o.url.protocol === 'https:'
          ? httpsRequest(o.url, { method: o.method, headers, ...(o.ca?.length ? { ca: [...rootCertificates, ...o.ca] } : {}) })
          : httpRequest(o.url, { method: o.method, headers });
    }
    req.setTimeout(o.timeoutMs ?? 30_000, () =>
      req.destroy(Object.assign(new Error('the target did not answer in time'), { code: 'ETIMEDOUT' })),
    );
    req.on('error', reject);
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size > RESPONSE_LIMIT) {
          // An answer is read whole to be logged and billed: one that never ends would take all memory.
          chunks.length = 0;
          req.destroy(Object.assign(new Error(`the answer is larger than ${RESPONSE_LIMIT} bytes`), { code: 'ETOOLARGE' }));
          return;
        }
        chunks.push(c);
      });
      res.on('error', reject);
      res.on('end', () => {
        const out: Record<string, string> = {};
        for (const [k, v] of Object.entries(res.headers)) {
          if (v === undefined || HOP_BY_HOP.has(k)) continue;
          out[k] = Array.isArray(v) ? v.join(', ') : v;
        }
        resolve({
          status: res.statusCode ?? 502,
          statusText: res.statusMessage ?? '',
          headers: out,
          rawHeaders: res.rawHeaders,
          body: Buffer.concat(chunks),
          ...(tunnelled ? { connectHeaders: tunnelled.headers } : {}),
        });
      });
    });
    req.end(o.body);
  });
}
