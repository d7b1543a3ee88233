import { request as httpRequest } from 'node:http';
import { describe, expect, it } from 'vitest';
import { HELMET_HEADERS } from '../../src/manager/api-headers.js';
import { usePair } from './pair.js';

// The manager API's answer headers on the real manager 1.570.247 and the sandbox side by side (pair.ts):
// helmet's security headers (lib/middleware.js 57-71), Express's weak ETag and its 304 for a fresh GET,
// `Vary: Accept-Encoding` and gzip only for a client that asks for it (compression(), lib/mixins/
// web_server.js 165). The values that follow from a body (ETag, Content-Length) are compared by
// presence, the rate limit's headers are left out (parity.yaml), the date is not compared.

const pair = usePair();
type Side = 'real' | 'sandbox';

interface Raw {
  status: number;
  headers: Record<string, string>;
  bytes: number;
}

function raw(side: Side, path: string, headers: Record<string, string> = {}, method = 'GET', body?: string): Promise<Raw> {
  const u = new URL(path, side === 'real' ? pair.manager.url : pair.sandbox.managerUrl);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: u.hostname, port: u.port, path: u.pathname + u.search, method, headers, agent: false }, (res) => {
      let bytes = 0;
      res.on('data', (c: Buffer) => {
        bytes += c.length;
      });
      res.on('end', () => {
        const h: Record<string, string> = {};
        for (let i = 0; i + 1 < res.rawHeaders.length; i += 2)
          h[(res.rawHeaders[i] as string).toLowerCase()] = res.rawHeaders[i + 1] as string;
        resolve({ status: res.statusCode ?? 0, headers: h, bytes });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** An answer's headers as compared: the rate limit's and the date left out, what follows from the body by presence. */
const compared = (r: Raw) => ({
  status: r.status,
  headers: Object.fromEntries(
    Object.entries(r.headers)
      .filter(([k]) => !['date', 'ratelimit', 'ratelimit-policy'].includes(k))
      .map(([k, v]) => [k, ['etag', 'content-length'].includes(k) ? '<present>' : v]),
  ),
});

async function both(path: string, headers: Record<string, string> = {}): Promise<Record<Side, Raw>> {
  return { real: await raw('real', path, headers), sandbox: await raw('sandbox', path, headers) };
}

describe('the manager API’s answer headers', () => {
  it('helmet’s headers, the ETag and Vary on every API answer; no gzip for a client that does not ask for it', async () => {
    const r = await both('/api/consts');
    expect(r.real.status).toBe(200);
    expect(r.real.bytes).toBeGreaterThan(1024);
    expect(r.real.headers).toMatchObject({
      'x-frame-options': 'SAMEORIGIN',
      'strict-transport-security': 'max-age=31536000; includeSubDomains',
      vary: 'Accept-Encoding',
      etag: expect.stringMatching(/^W\/"/),
    });
    expect(r.real.headers).not.toHaveProperty('content-encoding');
    expect(compared(r.sandbox)).toEqual(compared(r.real));
  });

  it('gzip for a client that asks, on a body of 1 KiB or more: chunked, no Content-Length; a smaller body as it is', async () => {
    const big = await both('/api/consts', { 'accept-encoding': 'gzip, deflate' });
    expect(big.real.headers).toMatchObject({ 'content-encoding': 'gzip', 'transfer-encoding': 'chunked' });
    expect(big.real.headers).not.toHaveProperty('content-length');
    expect(compared(big.sandbox)).toEqual(compared(big.real));
    const small = await both('/api/version', { 'accept-encoding': 'gzip' });
    expect(small.real.headers).not.toHaveProperty('content-encoding');
    expect(compared(small.sandbox)).toEqual(compared(small.real));
  });

  it('the coding as compression negotiates it: q-values weighed, identity preferred when it weighs more, deflate only without gzip', async () => {
    const cases = ['gzip;q=0.5, identity', 'deflate, gzip;q=0.1', 'gzip;q=0, deflate', '*;q=0.2, identity;q=0.1', 'identity;q=0, *'];
    for (const accept of cases) {
      const r = await both('/api/consts', { 'accept-encoding': accept });
      expect({ accept, ...compared(r.sandbox) }).toEqual({ accept, ...compared(r.real) });
    }
    const codings = new Set(
      await Promise.all(
        cases.map(async (accept) => (await raw('real', '/api/consts', { 'accept-encoding': accept })).headers['content-encoding']),
      ),
    );
    expect(codings.size).toBeGreaterThan(1);
  });

  it('a body the parsers cannot read: the app’s 500, before the /api mount, so without helmet’s headers', async () => {
    const send = (side: Side) => raw(side, '/api/settings', { 'content-type': 'application/json' }, 'PUT', '{"zone":');
    const r = { real: await send('real'), sandbox: await send('sandbox') };
    expect(r.real.status).toBe(500);
    expect(r.real.headers).not.toHaveProperty('x-frame-options');
    expect(compared(r.sandbox)).toEqual(compared(r.real));
  });

  it('a GET whose If-None-Match names the answer’s ETag: 304 with no body; another ETag: 200', async () => {
    for (const side of ['real', 'sandbox'] as const) {
      const first = await raw(side, '/api/version');
      const etag = first.headers.etag as string;
      const again = await raw(side, '/api/version', { 'if-none-match': etag });
      expect({ side, status: again.status, bytes: again.bytes, type: again.headers['content-type'] }).toEqual({
        side,
        status: 304,
        bytes: 0,
        type: undefined,
      });
      const other = await raw(side, '/api/version', { 'if-none-match': 'W/"0-x"' });
      expect({ side, status: other.status }).toEqual({ side, status: 200 });
      // fresh's rule: a client that asks for no cache gets the answer whatever its ETag.
      const noCache = await raw(side, '/api/version', { 'if-none-match': etag, 'cache-control': 'no-cache' });
      expect({ side, status: noCache.status }).toEqual({ side, status: 200 });
    }
  });

  it('an answer to a path the sandbox does not serve carries them too (its body aside: the routes beyond the spec, parity.yaml)', async () => {
    const r = await both('/api/proxies/65000');
    const web = (x: Raw) => {
      const h = compared(x).headers;
      return Object.fromEntries(
        Object.keys(HELMET_HEADERS)
          .concat('etag', 'vary')
          .map((k) => [k, h[k]]),
      );
    };
    expect(web(r.real)['x-frame-options']).toBe('SAMEORIGIN');
    expect(web(r.sandbox)).toEqual(web(r.real));
  });
});
