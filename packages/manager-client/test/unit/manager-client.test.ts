import { recordingFetch } from '@zone-api/testkit';
import { describe, expect, it } from 'vitest';
import { createManagerClient, DEFAULT_MANAGER_URL, errorAt, ZoneApiError } from '../../src/index.js';

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

  it("returns the real manager's text/html bodies as strings; a media type the spec does not declare is an error", async () => {
    const o = observed(() => new Response('line 1\nline 2\n', { headers: { 'Content-Type': 'text/html; charset=utf-8' } }));
    const client = createManagerClient({ baseUrl: 'http://m.test', fetch: o.fetch });
    const { data } = await client.getGeneralLogs({ params: { query: { limit: 2 } } });
    expect(data).toBe('line 1\nline 2\n');
    expect(new URL(o.last().url).searchParams.get('limit')).toBe('2');
    const plain = observed(() => new Response('line 1\n', { headers: { 'Content-Type': 'application/octet-stream' } }));
    const other = await createManagerClient({ baseUrl: 'http://m.test', fetch: plain.fetch }).getGeneralLogs();
    expect(other.data).toBeUndefined();
    expect(other.error).toMatchObject({ kind: 'media-type', status: 200 });
  });

  it("user paths take the real program's brand prefix by default (lpm), the documentation's with brand: 'pm'", async () => {
    const o = observed(() => Response.json([{ email: 'a@example.com', password: 'x' }]));
    await createManagerClient({ baseUrl: 'http://m.test', fetch: o.fetch }).listUsers();
    expect(new URL(o.last().url).pathname).toBe('/api/lpm_users');
    await createManagerClient({ baseUrl: 'http://m.test', fetch: o.fetch }).addUser({ body: { email: 'b@example.com' } });
    expect(new URL(o.last().url).pathname).toBe('/api/lpm_user');
    await createManagerClient({ baseUrl: 'http://m.test', fetch: o.fetch, brand: 'pm' }).listUsers();
    expect(new URL(o.last().url).pathname).toBe('/api/pm_users');
  });

  it("the real manager's web page for a path it does not have (200 text/html) is an error, never data", async () => {
    const page = '<!DOCTYPE html><html><head><title>Proxy Manager</title></head><body><div id="app"></div></body></html>';
    const o = observed(() => new Response(page, { headers: { 'Content-Type': 'text/html; charset=UTF-8' } }));
    const { data, error, response } = await createManagerClient({ baseUrl: 'http://m.test', fetch: o.fetch, brand: 'pm' }).listUsers();
    expect(data).toBeUndefined();
    expect(error).toMatchObject({ kind: 'media-type', status: 200, contentType: 'text/html; charset=UTF-8' });
    expect(response.headers.get('Content-Type')).toBe('text/html; charset=UTF-8');
  });

  it('a 400 with no body and no Content-Type (refresh_sessions of an unknown port) is a truthy error', async () => {
    const o = observed(() => new Response(null, { status: 400 }));
    const { data, error } = await createManagerClient({ baseUrl: 'http://m.test', fetch: o.fetch }).refreshSessions({
      params: { path: { port: 24999 } },
    });
    expect(data).toBeUndefined();
    expect(error).toMatchObject({ kind: 'empty', status: 400, contentType: null });
  });

  it('getNewToken (a GET that rotates the token, 5 an hour) is never retried; an ordinary GET is', async () => {
    let calls = 0;
    const fetch = (async () => {
      calls++;
      return new Response('busy', { status: 503, headers: { 'Content-Type': 'text/html', 'Retry-After': '0' } });
    }) as typeof globalThis.fetch;
    const client = createManagerClient({ baseUrl: 'http://m.test', fetch, retry: { retries: 2, baseDelayMs: 1 } });
    await client.getNewToken();
    expect(calls).toBe(1);
    calls = 0;
    await client.getSettings();
    expect(calls).toBe(3);
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

describe('errorAt', () => {
  it('gives the error of the status asked for, and nothing for another answer', async () => {
    const { fetch } = observed((req) =>
      req.url.endsWith('/api/proxies')
        ? Response.json({ errors: [{ msg: 'port 24000 in use by another proxy', field: 'port' }] }, { status: 400 })
        : new Response('Server Error', { status: 500, headers: { 'Content-Type': 'text/html' } }),
    );
    const client = createManagerClient({ fetch, retry: false });
    const created = await client.createProxy({ body: { proxy: { port: 24000 } } });
    expect(errorAt(created, 400)?.errors[0]).toEqual({ msg: 'port 24000 in use by another proxy', field: 'port' });
    expect(errorAt(created, 500)).toBeUndefined();
    const deleted = await client.deleteProxy({ params: { path: { port: 24000 } } });
    expect(errorAt(deleted, 500)).toMatchObject({ kind: 'text', status: 500, error: 'Server Error' });
    expect(errorAt(deleted, 400)).toBeUndefined();
  });
});
