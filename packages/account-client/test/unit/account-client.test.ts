import { recordingFetch } from '@zone-api/testkit';
import { describe, expect, it, vi } from 'vitest';
import { createAccountClient, ZoneApiError, zoneCredential } from '../../src/index.js';

// Unit tests with an injected fetch (openapi-fetch's createObservedClient pattern): the client runs
// for real; the fetch records the Request it was given and answers from a script.
const observed = recordingFetch;

const baseUrl = 'http://account.test';

describe('auth', () => {
  it('sends a bearer token', async () => {
    const o = observed();
    await createAccountClient({ baseUrl, fetch: o.fetch, auth: { token: 'tok-123' } }).getZone({ params: { query: { zone: 'z' } } });
    expect(o.last().headers.get('Authorization')).toBe('Bearer tok-123');
    expect(o.last().headers.get('X-Service-Auth')).toBeNull();
  });

  it('sends HTTP basic and warns once per process that it is deprecated', async () => {
    const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => {});
    const o = observed();
    const a = createAccountClient({ baseUrl, fetch: o.fetch, auth: { basic: { username: 'u', password: 'p' } } });
    createAccountClient({ baseUrl, fetch: o.fetch, auth: { basic: { username: 'u2', password: 'p2' } } });
    await a.getZone({ params: { query: { zone: 'z' } } });
    expect(o.last().headers.get('Authorization')).toBe(`Basic ${Buffer.from('u:p').toString('base64')}`);
    expect(warn).toHaveBeenCalledTimes(1);
    expect(String(warn.mock.calls[0]?.[0])).toMatch(/deprecated since 01-Jan-2021/);
    warn.mockRestore();
  });

  it('builds the X-Service-Auth header from a Zone credential, with the country suffix only on route_ips', async () => {
    const o = observed(() => new Response('1.2.3.0/24', { headers: { 'Content-Type': 'text/plain' } }));
    const client = createAccountClient({
      baseUrl,
      fetch: o.fetch,
      auth: { zone: { customer: 'c1', zone: 'z1', password: 'pw', country: 'us' } },
    });
    await client.getZone();
    expect(o.last().headers.get('X-Service-Auth')).toBe('service-customer-c1-zone-z1-key-pw');
    expect(o.last().headers.get('Authorization')).toBeNull();
    await client.getRouteIps();
    expect(o.last().headers.get('X-Service-Auth')).toBe('service-customer-c1-zone-z1-key-pw-country-us');
  });

  it('zoneCredential formats the documented layout', () => {
    expect(zoneCredential({ customer: 'hl_1', zone: 'static', password: 'k' })).toBe('service-customer-hl_1-zone-static-key-k');
  });

  it("zoneCredential writes the country in lower case, as the layout and the provider's CLI do", () => {
    const zone = { customer: 'hl_1', zone: 'static', password: 'k', country: 'US' };
    expect(zoneCredential(zone, true)).toBe('service-customer-hl_1-zone-static-key-k-country-us');
    expect(zoneCredential(zone)).toBe('service-customer-hl_1-zone-static-key-k');
  });
});

describe('default customer', () => {
  it('is added to the query of GETs that leave it out, and not over one that gives it', async () => {
    const o = observed();
    const client = createAccountClient({ baseUrl, fetch: o.fetch, auth: { token: 't' }, customer: 'c_default' });
    await client.getZone({ params: { query: { zone: 'z' } } });
    expect(new URL(o.last().url).searchParams.get('customer')).toBe('c_default');
    await client.getZone({ params: { query: { zone: 'z', customer: 'c_other' } } });
    expect(new URL(o.last().url).searchParams.getAll('customer')).toEqual(['c_other']);
  });

  it('is added to JSON bodies of other methods', async () => {
    const o = observed();
    const client = createAccountClient({ baseUrl, fetch: o.fetch, auth: { token: 't' }, customer: 'c_default' });
    await client.deleteZone({ body: { zone: 'z' } });
    expect(await o.last().json()).toEqual({ customer: 'c_default', zone: 'z' });
    await client.deleteZone({ body: { zone: 'z', customer: 'mine' } });
    expect(await o.last().json()).toEqual({ zone: 'z', customer: 'mine' });
  });

  it('counts a customer of null or undefined as left out, and leaves a body the call serializes itself alone', async () => {
    const o = observed();
    const client = createAccountClient({ baseUrl, fetch: o.fetch, auth: { token: 't' }, customer: 'c_default' });
    await client.getZone({ params: { query: { zone: 'z', customer: undefined } } });
    expect(new URL(o.last().url).searchParams.getAll('customer')).toEqual(['c_default']);
    await client.deleteZone({ body: { zone: 'z', customer: undefined } });
    expect(await o.last().json()).toEqual({ customer: 'c_default', zone: 'z' });
    await client.deleteZone({ body: { zone: 'z' }, bodySerializer: (b: unknown) => `raw:${JSON.stringify(b)}` });
    expect(await o.last().text()).toBe('raw:{"zone":"z"}');
  });

  it('path-based calls get the credential and the default customer too', async () => {
    const o = observed();
    const client = createAccountClient({ baseUrl, fetch: o.fetch, auth: { token: 'tok-9' }, customer: 'c_default' });
    await client.GET('/api/zone', { params: { query: { zone: 'z' } } });
    expect(o.last().headers.get('Authorization')).toBe('Bearer tok-9');
    expect(new URL(o.last().url).searchParams.get('customer')).toBe('c_default');
    await client.DELETE('/api/zone', { body: { zone: 'z' } });
    expect(o.last().headers.get('Authorization')).toBe('Bearer tok-9');
    expect(await o.last().json()).toEqual({ customer: 'c_default', zone: 'z' });
  });

  it('is not added with the Zone credential header, which names the account', async () => {
    const o = observed();
    const client = createAccountClient({
      baseUrl,
      fetch: o.fetch,
      auth: { zone: { customer: 'c', zone: 'z', password: 'p' } },
      customer: 'c',
    });
    await client.getZone();
    expect(new URL(o.last().url).searchParams.has('customer')).toBe(false);
  });
});

describe('wire format', () => {
  it('sends DELETE bodies as JSON', async () => {
    const o = observed(() => new Response(null, { status: 200 }));
    const { data, response } = await createAccountClient({ baseUrl, fetch: o.fetch, auth: { token: 't' } }).deleteZone({
      body: { customer: 'c', zone: 'gone' },
    });
    expect(o.last().method).toBe('DELETE');
    expect(o.last().headers.get('Content-Type')).toBe('application/json');
    expect(await o.last().json()).toEqual({ customer: 'c', zone: 'gone' });
    expect(response.status).toBe(200);
    expect(data).toBeUndefined();
  });

  it('a retried DELETE sends its body on every attempt; a timeout still ends a call', async () => {
    let n = 0;
    const o = observed(() => (n++ === 0 ? new Response('busy', { status: 503 }) : new Response(null, { status: 200 })));
    const client = createAccountClient({ baseUrl, fetch: o.fetch, auth: { token: 't' }, retry: { baseDelayMs: 1, maxDelayMs: 2 } });
    const { response } = await client.deleteZone({ body: { customer: 'c', zone: 'gone' } });
    expect(response.status).toBe(200);
    expect(await Promise.all(o.seen.map((r) => r.json()))).toEqual([
      { customer: 'c', zone: 'gone' },
      { customer: 'c', zone: 'gone' },
    ]);
    const hanging = observed(
      (req) => new Promise<Response>((_, reject) => req.signal.addEventListener('abort', () => reject(req.signal.reason))),
    );
    const slow = createAccountClient({ baseUrl, fetch: hanging.fetch, auth: { token: 't' }, timeoutMs: 20, retry: false });
    const err = await slow.getZone({ params: { query: { zone: 'z' } } }).catch((e: unknown) => e);
    expect(err).toMatchObject({ kind: 'timeout', message: 'GET /api/zone timed out after 20 ms' });
  });

  it('JSON-encodes the plan of count_available_ips into the query', async () => {
    const o = observed(() => Response.json({ count: 12 }));
    const plan = { ips_type: 'selective', country_city: 'us-newyork', city: true, geo_db: { maxmind: true } } as const;
    const { data } = await createAccountClient({ baseUrl, fetch: o.fetch, auth: { token: 't' } }).getAvailableIpCount({
      params: { query: { customer: 'c', zone: 'z', plan } },
    });
    const sent = new URL(o.last().url);
    expect(sent.pathname).toBe('/api/zone/count_available_ips');
    expect(JSON.parse(sent.searchParams.get('plan') ?? '')).toEqual(plan);
    expect(sent.search).toContain('plan=%7B%22ips_type%22%3A%22selective%22');
    expect(data?.count).toBe(12);
  });

  it('sends the dotted req_logs filters under their exact names', async () => {
    const o = observed(() => Response.json([]));
    await createAccountClient({ baseUrl, fetch: o.fetch, auth: { token: 't' } }).listRequestLogs({
      params: { query: { customer: 'c', 'status.code': '200', 'ts.from': '2024-05-01', 'dst.host': 'example.com', page: 2 } },
    });
    const q = new URL(o.last().url).searchParams;
    expect(Object.fromEntries(q)).toEqual({
      customer: 'c',
      'status.code': '200',
      'ts.from': '2024-05-01',
      'dst.host': 'example.com',
      page: '2',
    });
    expect(o.last().url).not.toMatch(/status%5B|status\[/);
  });

  it('returns route_ips text as a string', async () => {
    const o = observed(() => new Response('1.2.3.4-1.2.3.10', { headers: { 'Content-Type': 'text/plain; charset=utf-8' } }));
    const { data } = await createAccountClient({ baseUrl, fetch: o.fetch, auth: { token: 't' } }).getRouteIps({
      params: { query: { customer: 'c', zone: 'z', country: 'us', expand: 1 } },
    });
    expect(data).toBe('1.2.3.4-1.2.3.10');
    expect(new URL(o.last().url).search).toBe('?customer=c&zone=z&country=us&expand=1');
  });

  it('returns typed error bodies', async () => {
    const o = observed(() => Response.json({ error: 'Zone not found: nope' }, { status: 404 }));
    const { data, error } = await createAccountClient({ baseUrl, fetch: o.fetch, auth: { token: 't' } }).getZone({
      params: { query: { zone: 'nope' } },
    });
    expect(data).toBeUndefined();
    expect(error).toEqual({ error: 'Zone not found: nope' });
  });
});

describe('secrets stay out of errors', () => {
  it.each([
    ['token', { token: 'TOKEN_SECRET_1' }, 'TOKEN_SECRET_1'],
    ['basic', { basic: { username: 'u', password: 'BASIC_SECRET_2' } }, 'BASIC_SECRET_2'],
    ['zone', { zone: { customer: 'c', zone: 'z', password: 'ZONE_SECRET_3' } }, 'ZONE_SECRET_3'],
  ] as const)('%s: network error messages and error bodies are redacted', async (_name, auth, secret) => {
    vi.spyOn(process, 'emitWarning').mockImplementation(() => {});
    const failing = (async (input: Parameters<typeof globalThis.fetch>[0], init?: RequestInit) => {
      const req = new Request(input, init);
      throw new Error(`socket hang up; headers were ${[...req.headers].map(([k, v]) => `${k}=${v}`).join(' ')}`);
    }) as typeof globalThis.fetch;
    const client = createAccountClient({ baseUrl, fetch: failing, auth, retry: false });
    const err = await client.getZone({ params: { query: { zone: 'z' } } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ZoneApiError);
    expect((err as Error).message).not.toContain(secret);
    expect((err as Error).message).toContain('[REDACTED]');

    const echo = observed((req) =>
      Response.json({ error: `bad credential ${req.headers.get('Authorization') ?? req.headers.get('X-Service-Auth')}` }, { status: 401 }),
    );
    const { error } = await createAccountClient({ baseUrl, fetch: echo.fetch, auth }).getZone({ params: { query: { zone: 'z' } } });
    expect(JSON.stringify(error)).not.toContain(secret);
  });
});
