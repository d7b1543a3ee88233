import { Readable } from 'node:stream';
import { deflateSync, gzipSync } from 'node:zlib';
import etag from 'etag';
import type { FastifyReply, FastifyRequest } from 'fastify';
import fresh from 'fresh';
import Negotiator from 'negotiator';
import { answeredBeforeRoutes } from '../router/answers.js';

// What the real manager 1.570.247's web server adds to each answer of its API, as the manager API's own
// hook (the account API sends none of it): helmet's security headers (lib/middleware.js 57-71, used by
// every API route, lib/mixins/web_api.js 71), Express's weak ETag with a 304 for a fresh GET (express
// 4.22.3 lib/response.js 174-213; etag 1.8.1, fresh 0.5.2 and, through accepts, negotiator 0.6.3: the real one's), `Vary: Accept-Encoding` and gzip from `compression()`
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

/** Express's weak ETag of a body (its default `etag fn`: the etag package, weak). */
export function weakEtag(body: Buffer): string {
  return etag(body, { weak: true });
}

/** The coding compression 1.7.4 picks for the client (index.js 117-130: deflate only where gzip is not acceptable). */
function codingFor(req: FastifyRequest): 'gzip' | 'deflate' | undefined {
  const accept = new Negotiator(req);
  let coding = accept.encoding(['gzip', 'deflate', 'identity']);
  if (coding === 'deflate' && accept.encoding(['gzip'])) coding = accept.encoding(['gzip', 'identity']);
  return coding === 'gzip' || coding === 'deflate' ? coding : undefined;
}

/** Whether Express finds the client's copy fresh (express 4.22.3 lib/request.js 467-483). */
function isFresh(req: FastifyRequest, status: number, tag: string): boolean {
  if (req.method !== 'GET' && req.method !== 'HEAD' && req.method !== 'QUERY') return false;
  if (!((status >= 200 && status < 300) || status === 304)) return false;
  return fresh(req.headers, { etag: tag });
}

/**
 * The manager API's onSend hook: the headers above on every `/api` answer (in any case, as the real
 * manager's mount), its body's ETag, and the body compressed only when the client asked for it.
 */
export function managerAnswer(req: FastifyRequest, reply: FastifyReply, payload: unknown): unknown {
  if (!/^\/api(\/|$|\?)/i.test(req.url)) return payload;
  // helmet runs inside the /api mount: an answer of the body parsers, before it, has none of its headers.
  if (!answeredBeforeRoutes(req)) reply.headers(HELMET_HEADERS);
  const body = typeof payload === 'string' ? Buffer.from(payload) : Buffer.isBuffer(payload) ? payload : undefined;
  // A 204 has no body to tag (the real manager's `end()`; its sendStatus(204) is in parity.yaml).
  if (!body || reply.statusCode === 204) return payload;
  const tag = weakEtag(body);
  if (!reply.hasHeader('etag')) reply.header('etag', tag);
  if (isFresh(req, reply.statusCode, tag)) {
    reply.code(304);
    reply.removeHeader('content-type');
    reply.removeHeader('content-length');
    return '';
  }
  const type = String(reply.getHeader('content-type') ?? '');
  if (!/json|text\/|javascript|xml/i.test(type)) return payload;
  reply.header('vary', 'Accept-Encoding');
  if (body.length < COMPRESS_FROM || req.method === 'HEAD' || reply.hasHeader('content-encoding')) return payload;
  const coding = codingFor(req);
  if (!coding) return payload;
  reply.header('content-encoding', coding);
  reply.removeHeader('content-length');
  // A stream, so that it goes chunked with no Content-Length, as compression's does.
  return Readable.from([coding === 'gzip' ? gzipSync(body) : deflateSync(body)]);
}
