import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { deflateSync, gzipSync } from 'node:zlib';
import type { FastifyReply, FastifyRequest } from 'fastify';

// What the real manager 1.570.247's web server adds to each answer of its API, as the manager API's own
// hook (the account API sends none of it): helmet's security headers (lib/middleware.js 57-71, used by
// every API route, lib/mixins/web_api.js 71), Express's weak ETag with a 304 for a fresh GET (express
// 4.22.3 lib/response.js 174-213), `Vary: Accept-Encoding` and gzip from `compression()`
// (lib/mixins/web_server.js 165; compression 1.7.4 index.js 140-205: bodies of 1 KiB or more, only for
// a client that accepts gzip or deflate, chunked with no Content-Length). Compared side by side in
// test/real-manager/api-headers.test.ts. Its rate limit's headers are not sent: parity.yaml says why.

/** helmet 8.1.0's headers with the real manager's options (HL_TRANSPORT_MAX_AGE 31536000, its CSP directives), as observed. */
export const HELMET_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy':
    "default-src 'self';base-uri 'self';font-src 'self' https: data:;form-action 'self';frame-ancestors 'self';img-src 'self' data:;object-src 'none';script-src 'self';script-src-attr 'none';style-src 'self'",
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  'origin-agent-cluster': '?1',
  'referrer-policy': 'no-referrer',
  'strict-transport-security': 'max-age=31536000; includeSubDomains',
  'x-content-type-options': 'nosniff',
  'x-dns-prefetch-control': 'off',
  'x-download-options': 'noopen',
  'x-frame-options': 'SAMEORIGIN',
  'x-permitted-cross-domain-policies': 'none',
  'x-xss-protection': '0',
};

/** compression's threshold (its default, 1kb). */
const COMPRESS_FROM = 1024;

/** Express's weak ETag of a body (the etag package 1.8.1: its length in hex and 27 characters of its SHA-1 in base64). */
export function weakEtag(body: Buffer): string {
  if (body.length === 0) return 'W/"0-2jmj7l5rSw0yVb/vlWAYkK/YBwk"';
  return `W/"${body.length.toString(16)}-${createHash('sha1').update(body).digest('base64').slice(0, 27)}"`;
}

/** The q-value a client's Accept-Encoding gives `coding` (an explicit entry, else `*`); 0 when none. */
function accepted(header: string | undefined, coding: string): number {
  let star = 0;
  for (const part of (header ?? '').split(',')) {
    const [name = '', ...params] = part.trim().split(';');
    const q = params.map((p) => p.trim().match(/^q=([\d.]+)$/)?.[1]).find(Boolean);
    const value = q === undefined ? 1 : Number(q) || 0;
    if (name.trim().toLowerCase() === coding) return value;
    if (name.trim() === '*') star = value;
  }
  return star;
}

/** Whether Express finds the client's copy fresh: a GET or HEAD with an If-None-Match naming this ETag (or `*`). */
function fresh(req: FastifyRequest, status: number, etag: string): boolean {
  if (req.method !== 'GET' && req.method !== 'HEAD') return false;
  if (!((status >= 200 && status < 300) || status === 304)) return false;
  const none = req.headers['if-none-match'];
  if (!none) return false;
  if (none.trim() === '*') return true;
  const plain = (t: string) => t.trim().replace(/^W\//, '');
  return none.split(',').some((t) => plain(t) === plain(etag));
}

/**
 * The manager API's onSend hook: the headers above on every `/api` answer (in any case, as the real
 * manager's mount), its body's ETag, and the body compressed only when the client asked for it.
 */
export function managerAnswer(req: FastifyRequest, reply: FastifyReply, payload: unknown): unknown {
  if (!/^\/api(\/|$|\?)/i.test(req.url)) return payload;
  reply.headers(HELMET_HEADERS);
  const body = typeof payload === 'string' ? Buffer.from(payload) : Buffer.isBuffer(payload) ? payload : undefined;
  // A 204 has no body to tag (the real manager's `end()`; its sendStatus(204) is in parity.yaml).
  if (!body || reply.statusCode === 204) return payload;
  const etag = weakEtag(body);
  if (!reply.hasHeader('etag')) reply.header('etag', etag);
  if (fresh(req, reply.statusCode, etag)) {
    reply.code(304);
    reply.removeHeader('content-type');
    reply.removeHeader('content-length');
    return '';
  }
  const type = String(reply.getHeader('content-type') ?? '');
  if (!/json|text\/|javascript|xml/i.test(type)) return payload;
  reply.header('vary', 'Accept-Encoding');
  if (body.length < COMPRESS_FROM || req.method === 'HEAD' || reply.hasHeader('content-encoding')) return payload;
  const accept = req.headers['accept-encoding'];
  const coding = accepted(accept, 'gzip') > 0 ? 'gzip' : accepted(accept, 'deflate') > 0 ? 'deflate' : undefined;
  if (!coding) return payload;
  reply.header('content-encoding', coding);
  reply.removeHeader('content-length');
  // A stream, so that it goes chunked with no Content-Length, as compression's does.
  return Readable.from([coding === 'gzip' ? gzipSync(body) : deflateSync(body)]);
}
