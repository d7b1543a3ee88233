import { recordingFetch } from '@zone-api/testkit';
import { describe, expect, it } from 'vitest';
import { createManagerClient, DEFAULT_MANAGER_URL, ZoneApiError } from '../../src/index.js';

// Injected fetch: the client runs for real; the fetch records each Request and answers from a script.
const observed = recordingFetch;

describe('manager client', () => {
  it('talks to http://127.0.0.1:22999 by default', async () => {
    const o = observed(() => Response.json({ version: '1.570.247', argv: '' }));
    await createManagerClient({ fetch: o.fetch }).getVersion();
    expect(DEFAULT_MANAGER_URL).toBe('http://127.0.0.1:22999');
    expect(o.last().url).toBe('http://127.0.0.1:22999/api/version');
  });

  it('sends the token as a raw Authorization header, only to add_wip', async () => {
    const o = observed(() => new Response('OK', { headers: { 'Content-Type': 'text/html' } }));
    const client = createManagerClient({ baseUrl: 'http://m.test', fetch: o.fetch, token: 'abcdefghij0123' });
    const { data } = await client.addWhitelistIp({ body: { ip: '1.2.3.4' } });
    expect(o.last().headers.get('Authorization')).toBe('abcdefghij0123');
    expect(data).toBe('OK');
    await client.addAdminWhitelistIp({ body: { ip: '1.2.3.4' } });
    expect(o.last().headers.get('Authorization')).toBeNull();
    await client.listProxies();
    expect(o.last().headers.get('Authorization')).toBeNull();
  });

  it('a per-call Authorization header wins over the configured token', async () => {
    const o = observed(() => new Response('OK', { headers: { 'Content-Type': 'text/html' } }));
    const client = createManagerClient({ baseUrl: 'http://m.test', fetch: o.fetch, token: 'old-token-0001' });
    await client.addWhitelistIp({ body: { ip: '1.2.3.4' }, headers: { Authorization: 'new-token-0002' } });
    expect(o.last().headers.get('Authorization')).toBe('new-token-0002');
  });

  it("returns text bodies as strings (text/plain and the real manager's text/html)", async () => {
    const o = observed(() => new Response('line 1\nline 2\n', { headers: { 'Content-Type': 'text/plain; charset=utf-8' } }));
    const { data } = await createManagerClient({ baseUrl: 'http://m.test', fetch: o.fetch }).getGeneralLogs({
      params: { query: { limit: 2 } },
    });
    expect(data).toBe('line 1\nline 2\n');
    expect(new URL(o.last().url).searchParams.get('limit')).toBe('2');
  });

  it('returns 204 as no data', async () => {
    const o = observed(() => new Response(null, { status: 204 }));
    const { data, error, response } = await createManagerClient({ baseUrl: 'http://m.test', fetch: o.fetch }).deleteProxy({
      params: { path: { port: 24000 } },
    });
    expect(response.status).toBe(204);
    expect(data).toBeUndefined();
    expect(error).toBeUndefined();
    expect(o.last().method).toBe('DELETE');
    expect(o.last().url).toBe('http://m.test/api/proxies/24000');
  });

  it('returns the observed port errors typed', async () => {
    const body = { errors: [{ msg: 'port 24000 in use by another proxy', field: 'port' }] };
    const o = observed(() => Response.json(body, { status: 400 }));
    const { error } = await createManagerClient({ baseUrl: 'http://m.test', fetch: o.fetch }).createProxy({
      body: { proxy: { port: 24000 } },
    });
    expect(error).toEqual(body);
    expect(await o.last().json()).toEqual({ proxy: { port: 24000 } });
  });

  it('does not retry a POST on 503, and keeps the token out of errors', async () => {
    let calls = 0;
    const fetch = (async () => {
      calls++;
      throw new Error('ECONNRESET while sending Authorization: tok-secret-1234');
    }) as typeof globalThis.fetch;
    const client = createManagerClient({ baseUrl: 'http://m.test', fetch, token: 'tok-secret-1234', retry: { baseDelayMs: 1 } });
    const err = await client.addWhitelistIp({ body: { ip: '1.2.3.4' } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ZoneApiError);
    expect(calls).toBe(1);
    expect((err as Error).message).not.toContain('tok-secret-1234');
  });
});
