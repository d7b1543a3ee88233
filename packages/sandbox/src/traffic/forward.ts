import { request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import { pipeline, type Readable, Transform, type Writable } from 'node:stream';
import { rootCertificates, type TLSSocket, connect as tlsConnect } from 'node:tls';
import { lookupFor, type Remote } from './lookup.js';
import { type ProxyHop, requestUpstream } from './upstream.js';

// One HTTP request forwarded, directly to its target (the proxy network's exit) or through an
// upstream HTTP proxy (a proxy port). Its answer is handed on as it arrives (passOn): the sandbox
// bans on its head, and logs and bills it from the bytes that passed, keeping only the first ones the
// HAR log holds, as the real manager does (lib/mixins/server_handle.js 18-27: a counting stream that
// keeps `har_limit` bytes). A target that never ends costs no more memory than one that does.

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
  /** The answer's body as it arrives: read it on (passOn), or let go of it with `destroy()`. */
  body: Readable;
  /** The headers of the upstream's answer to the CONNECT an HTTPS request went through (the exit peer's among them). */
  connectHeaders?: IncomingMessage['headers'];
}

export interface ForwardOptions {
  method: string;
  url: URL;
  /** The client's headers (hop-by-hop ones are dropped here). */
  headers: IncomingMessage['headers'];
  /** The body: whole (sent with its length), or a stream of it (sent with the client's length, else chunked). */
  body: Buffer | Readable;
  /** An upstream HTTP proxy to send the request through (over TLS when it says so), with its `Proxy-Authorization`. */
  via?: ProxyHop & { authorization: string };
  /** CA certificates (PEM) trusted for an HTTPS target beside the system's. */
  ca?: readonly string[];
  /** Accept an HTTPS target's certificate unchecked (a port's `insecure`). */
  insecure?: boolean;
  timeoutMs?: number;
  /** The client when it is beyond loopback: a target name must not lead it to loopback (lookup.ts). */
  remote?: Remote;
}

/** The bytes a request or response head takes on the wire (status or request line and headers). */
function headBytes(firstLine: string, rawHeaders: readonly string[]): number {
  let n = firstLine.length + 2 + 2;
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) n += (rawHeaders[i] as string).length + 2 + (rawHeaders[i + 1] as string).length + 2;
  return n;
}

/** Bytes of a request as sent: its request line, headers and `bodyBytes` of body. */
export function requestSize(method: string, url: string, headers: IncomingMessage['headers'], bodyBytes: number): number {
  const raw = Object.entries(passHeaders(headers)).flatMap(([k, v]) => [v].flat().flatMap((x) => [k, String(x)]));
  return headBytes(`${method} ${url} HTTP/1.1`, raw) + bodyBytes;
}

/** Bytes the client sent: its request's head and `bodyBytes` of body. */
export const requestBytes = (req: IncomingMessage, bodyBytes: number): number =>
  headBytes(`${req.method} ${req.url} HTTP/1.1`, req.rawHeaders) + bodyBytes;

/** Bytes of a forwarded answer's head (its status line and headers). */
export const responseHeadBytes = (res: Pick<Forwarded, 'status' | 'statusText' | 'rawHeaders'>): number =>
  headBytes(`HTTP/1.1 ${res.status} ${res.statusText}`, res.rawHeaders);

/** Writes an answer's head (status, reason, headers) on the client's response. */
export function writeAnswerHead(to: ServerResponse, a: Pick<Forwarded, 'status' | 'statusText' | 'headers'>): void {
  if (a.statusText) to.writeHead(a.status, a.statusText, a.headers);
  else to.writeHead(a.status, a.headers);
}

/** What of a body passed on: its bytes, the first ones kept (for the log), and whether it passed whole. */
export interface Passed {
  bytes: number;
  kept: Buffer;
  complete: boolean;
}

/**
 * Passes `from` on to `to` as it arrives, no faster than `to` takes it, counting its bytes and keeping
 * copies of the first `keep` of them; `to` is ended with it. A side that fails or goes away ends the
 * other (the target's socket is let go of when the client leaves): `complete` is then false. Never rejects.
 */
export function passOn(from: Readable, to: Writable, keep: number): Promise<Passed> {
  const kept: Buffer[] = [];
  let keptBytes = 0;
  let bytes = 0;
  const meter = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      bytes += chunk.length;
      if (keptBytes < keep) {
        // A copy: a slice would hold the whole chunk (and the pool it was read into) for the log.
        const part = Buffer.from(chunk.subarray(0, keep - keptBytes));
        kept.push(part);
        keptBytes += part.length;
      }
      done(null, chunk);
    },
  });
  return new Promise((resolve) => pipeline(from, meter, to, (err) => resolve({ bytes, kept: Buffer.concat(kept), complete: !err })));
}

/** `from` read through a counter: `done` gets the bytes that passed once it ends, fails or is let go of. */
export function metered(from: Readable, done: (bytes: number, complete: boolean) => void): Readable {
  let bytes = 0;
  const meter = new Transform({
    transform(chunk: Buffer, _encoding, next) {
      bytes += chunk.length;
      next(null, chunk);
    },
  });
  let called = false;
  const once = (complete: boolean) => {
    if (called) return;
    called = true;
    done(bytes, complete);
  };
  pipeline(from, meter, (err) => {
    if (err) once(false);
  });
  meter.once('end', () => once(true));
  meter.once('close', () => once(meter.readableEnded));
  return meter;
}

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
    const req = requestUpstream(o.via, {
      method: 'CONNECT',
      path: authority,
      headers: { host: authority, 'proxy-authorization': o.via.authorization },
      ...lookupFor(o.via.host),
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
    const whole = Buffer.isBuffer(o.body) ? o.body : undefined;
    if (whole) headers['content-length'] = String(whole.length);
    else if (headers['content-length'] === undefined) headers['transfer-encoding'] = 'chunked';
    let req: ReturnType<typeof httpRequest>;
    if (socket) {
      headers.host = o.url.host;
      req = httpRequest({ method: o.method, path: `${o.url.pathname}${o.url.search}`, headers, createConnection: () => socket });
    } else if (o.via) {
      headers['proxy-authorization'] = o.via.authorization;
      headers.host = o.url.host;
      req = requestUpstream(o.via, { method: o.method, path: o.url.href, headers, ...lookupFor(o.via.host) });
    } else {
      req =
        o.url.protocol === 'https:'
          ? httpsRequest(o.url, {
              method: o.method,
              headers,
              ...lookupFor(o.url.hostname, o.remote),
              ...(o.ca?.length ? { ca: [...rootCertificates, ...o.ca] } : {}),
            })
          : httpRequest(o.url, { method: o.method, headers, ...lookupFor(o.url.hostname, o.remote) });
    }
    req.setTimeout(o.timeoutMs ?? 30_000, () =>
      req.destroy(Object.assign(new Error('the target did not answer in time'), { code: 'ETIMEDOUT' })),
    );
    req.on('error', reject);
    req.on('response', (res) => {
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
        body: res,
        ...(tunnelled ? { connectHeaders: tunnelled.headers } : {}),
      });
    });
    if (whole) req.end(whole);
    // A body that fails (its client went away) ends the request (pipeline destroys it).
    else pipeline(o.body as Readable, req, () => {});
  });
}
