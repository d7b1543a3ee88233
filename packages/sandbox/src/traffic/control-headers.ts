import type { IncomingHttpHeaders } from 'node:http';
import { Readable } from 'node:stream';
import type { Forwarded } from './forward.js';
import type { FakeRequest, RequestControl } from './port-context.js';
import { UpstreamFailure } from './port-failure.js';

// The real manager's per-request control headers on a proxy port (1.570.247): a client names the
// session, the country, state, city, ASN or exit IP of one request in `x-lpm-*` headers, or asks for a
// fake answer (`x-lpm-fake`) that runs the port's rules without sending anything upstream. The real
// manager reads its own headers into the request's context and removes them (lib/context.js 13-15 and
// 134-139), so they reach neither the target nor the log; the rest of the `x-lpm-*` family (`x-lpm-zip`,
// `x-lpm-fake-*`, `x-lpm-sleep`) stays on the request and is passed on as any header is.

/**
 * The headers the real manager takes off every request (lib/context.js 13-15: its `lpm_headers`; the route
 * header `x-lpm-route` is read on its own, port-request.ts). `x-lpm-zip` is not among them: it is passed on,
 * and the zip it names is never used (lib/context.js 204-205 reads a field nothing sets).
 */
export const CONTROL_HEADERS = [
  'x-hola-context',
  'x-hola-agent',
  'x-lpm-session',
  'x-lpm-reserved',
  'x-lpm-keep-alive',
  'x-lpm-ip',
  'x-lpm-country',
  'x-lpm-state',
  'x-lpm-city',
  'x-lpm-asn',
  'x-lpm-user',
  'x-lpm-ports',
] as const;

const first = (v: string | string[] | undefined): string | undefined => (Array.isArray(v) ? v[0] : v) || undefined;

/** Reads the control headers of a request and takes them off it (`headers` is changed), as the real manager does. */
export function takeControlHeaders(headers: IncomingHttpHeaders): RequestControl {
  const read = (name: string) => first(headers[name]);
  const user: RequestControl['user'] = {};
  for (const key of ['country', 'state', 'city', 'asn', 'ip'] as const) {
    const value = read(`x-lpm-${key}`);
    if (value) user[key] = value;
  }
  const context = read('x-hola-context');
  const session = read('x-lpm-session');
  // `x-lpm-fake` and its options are read where the request is sent (lib/router.js 13-15,
  // lib/mixins/server_send.js 213-262) and stay on the request.
  const fake = read('x-lpm-fake')
    ? {
        status: read('x-lpm-fake-status'),
        peerIp: read('x-lpm-fake-peer-ip'),
        headers: read('x-lpm-fake-headers'),
        data: read('x-lpm-fake-data'),
        sleep: read('x-lpm-sleep'),
      }
    : undefined;
  for (const name of CONTROL_HEADERS) delete headers[name];
  return { ...(context ? { context } : {}), ...(session ? { session } : {}), user, ...(fake ? { fake } : {}) };
}

/** A peer for a fake answer's session when the request names none: one fixed address per session (the real manager draws one at random). */
function peerFor(session: string): string {
  let h = 0;
  for (const c of session) h = (h * 31 + c.charCodeAt(0)) >>> 0;
  return `198.51.100.${(h % 254) + 1}`;
}

/**
 * The fake answer of a request with `x-lpm-fake` (lib/mixins/server_send.js 213-262): its status (200
 * unless `x-lpm-fake-status`), the exit peer of `x-lpm-fake-peer-ip` (else the port's `ip`, else one per
 * session) in both peer headers, the headers of `x-lpm-fake-headers` (JSON) over the real manager's own,
 * and a body of `x-lpm-fake-data` bytes of `S` (else the peer's address), after `x-lpm-sleep` ms (50 by
 * default). Nothing is sent upstream; the port's rules then run on it as on any answer. JSON that does not
 * parse fails the request as the port's own 502 with the parser's message (the real one's catch).
 */
export async function fakeAnswer(
  fake: FakeRequest,
  o: { session: string; portIp?: string; whitelist: readonly string[] },
): Promise<Forwarded & { loggedStatus: number | string }> {
  const ip = fake.peerIp || o.portIp || peerFor(o.session);
  const headers: Record<string, string> = {
    'x-brd-ip': ip,
    'x-luminati-ip': ip,
    'x-lpm-authorization': 'auth',
    'content-type': 'text/plain; charset=utf-8',
    'x-lpm-whitelist': o.whitelist.join(' '),
  };
  let extra: unknown;
  try {
    extra = JSON.parse(fake.headers ?? 'null');
  } catch (err) {
    throw new UpstreamFailure((err as Error).message);
  }
  if (extra && typeof extra === 'object') for (const [k, v] of Object.entries(extra)) headers[k] = String(v);
  const size = Number(fake.data);
  const body = size ? Buffer.alloc(size, 'S') : Buffer.from(ip);
  headers['content-length'] = String(size || ip.length);
  const sleep = Number(fake.sleep) || 50;
  await new Promise((resolve) => setTimeout(resolve, Math.min(sleep, 60_000)));
  const status = Number(fake.status) || 200;
  return {
    status,
    // Logged as the header gave it, a text (lib/mixins/server_send.js 229: the header's value is the status).
    loggedStatus: fake.status || 200,
    statusText: '',
    headers,
    rawHeaders: Object.entries(headers).flat(),
    body: Readable.from([body]),
  };
}
