import { createAccountClient } from '@zone-api/account-client';
import { describe, expect, it } from 'vitest';
import { bearer, C, raw, STATIC, useSandbox } from '../helpers.js';

// The control endpoints under /__sandbox/ (outside the specs): faults, reset, state dump.
const t = useSandbox();
const fault = (base: string, body: unknown) => raw(base, 'POST', '/__sandbox/faults', { body });
const zoneUrl = `/api/zone?customer=${C}&zone=${STATIC}`;

describe('faults', () => {
  it('a status for the next N requests of any operation, then normal answers', async () => {
    const base = t.sandbox.accountUrl;
    const added = await fault(base, { status: 503, count: 2 });
    expect(added.status).toBe(200);
    expect(added.json().fault).toMatchObject({ status: 503, remaining: 2 });
    const first = await raw(base, 'GET', zoneUrl, { headers: bearer });
    expect(first.status).toBe(503);
    expect(first.headers.get('retry-after')).toBe('1');
    expect(first.json().error).toMatch(/Injected fault/);
    expect((await raw(base, 'GET', '/api/customer/balance', { headers: bearer })).status).toBe(503);
    expect((await raw(base, 'GET', zoneUrl, { headers: bearer })).status).toBe(200);
    expect((await raw(base, 'GET', '/__sandbox/faults')).json()).toEqual({ faults: [] });
  });

  it('a fault for one operationId stays until cleared and leaves other operations alone; a custom body', async () => {
    const base = t.sandbox.managerUrl;
    await fault(base, { operationId: 'listProxies', status: 500, body: 'Server Error' });
    for (let i = 0; i < 3; i++) {
      const r = await raw(base, 'GET', '/api/proxies');
      expect(r.status).toBe(500);
      expect(r.text).toBe('Server Error');
      expect(r.headers.get('content-type')).toMatch(/^text\/html/);
      expect(r.headers.get('deprecation')).toBe('true');
    }
    expect((await raw(base, 'GET', '/api/proxies_running')).status).toBe(200);
    // The account API has faults of its own.
    expect((await raw(t.sandbox.accountUrl, 'GET', zoneUrl, { headers: bearer })).status).toBe(200);
    expect((await raw(base, 'DELETE', '/__sandbox/faults')).json()).toEqual({ cleared: 1 });
    expect((await raw(base, 'GET', '/api/proxies')).status).toBe(200);
  });

  it('latency delays the answer, and the operation still runs', async () => {
    const base = t.sandbox.managerUrl;
    await fault(base, { operationId: 'getVersion', latency_ms: 300, count: 1 });
    const start = Date.now();
    const r = await raw(base, 'GET', '/api/version');
    expect(Date.now() - start).toBeGreaterThanOrEqual(280);
    expect(r.status).toBe(200);
    const fast = Date.now();
    await raw(base, 'GET', '/api/version');
    expect(Date.now() - fast).toBeLessThan(250);
  });

  it('a dropped connection gives no answer at all; a retrying client gets through on the next try', async () => {
    await fault(t.sandbox.accountUrl, { drop: true, count: 1 });
    await expect(fetch(`${t.sandbox.accountUrl}${zoneUrl}`, { headers: bearer })).rejects.toThrow();
    expect((await raw(t.sandbox.accountUrl, 'GET', '/__sandbox/faults')).json()).toEqual({ faults: [] });
    expect((await raw(t.sandbox.accountUrl, 'GET', zoneUrl, { headers: bearer })).status).toBe(200);

    await fault(t.sandbox.accountUrl, { operationId: 'getZone', drop: true, count: 1 });
    // The typed client's own retry (GET is idempotent) rides over one dropped connection: two attempts,
    // the first of which the fault dropped (it is used up), the second answered.
    const attempts: Array<'answered' | 'dropped'> = [];
    const client = createAccountClient({
      baseUrl: t.sandbox.accountUrl,
      auth: { token: t.sandbox.credentials.token },
      retry: { retries: 2, baseDelayMs: 1 },
      fetch: async (input, init) => {
        try {
          const res = await fetch(input, init);
          attempts.push('answered');
          return res;
        } catch (err) {
          attempts.push('dropped');
          throw err;
        }
      },
    });
    expect((await client.getZone({ params: { query: { zone: STATIC } } })).response.status).toBe(200);
    expect(attempts).toEqual(['dropped', 'answered']);
    expect((await raw(t.sandbox.accountUrl, 'GET', '/__sandbox/faults')).json()).toEqual({ faults: [] });
  });

  it('refuses a fault that is not one', async () => {
    for (const body of [{ count: 2 }, { status: 99 }, { status: 500, colour: 'red' }, { operationId: 'noSuchOp', status: 500 }]) {
      const r = await fault(t.sandbox.accountUrl, body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.json().error).toBeTypeOf('string');
    }
    expect((await raw(t.sandbox.accountUrl, 'GET', '/__sandbox/faults')).json()).toEqual({ faults: [] });
  });
});

describe('reset and state dump', () => {
  it('dumps the whole state (the shape of a seed) and resets it to the seed on either port', async () => {
    const { account } = t;
    await account.createZone({ body: { zone: { name: 'dump_me' }, plan: { type: 'static' } } });
    const dump = (await raw(t.sandbox.managerUrl, 'GET', '/__sandbox/state')).json();
    expect(dump.account.zones.map((z: { name: string }) => z.name)).toContain('dump_me');
    expect(dump.manager.ports.map((p: { port: number }) => p.port)).toEqual([24000, 24001]);
    expect((await raw(t.sandbox.accountUrl, 'POST', '/__sandbox/reset', { body: {} })).json()).toEqual({ reset: true });
    expect((await account.getZone({ params: { query: { zone: 'dump_me' } } })).response.status).toBe(404);
    const again = (await raw(t.sandbox.accountUrl, 'GET', '/__sandbox/state')).json();
    expect(again.account.zones.map((z: { name: string }) => z.name)).not.toContain('dump_me');
  });
});

describe('faults from startSandbox(), typed', () => {
  it('sandbox.faults.account.arm hits the named operation only, list shows it, clear disarms it', async () => {
    const base = t.sandbox.accountUrl;
    const armed = t.sandbox.faults.account.arm({ operationId: 'getZone', status: 503, count: 1 });
    expect(armed).toMatchObject({ operationId: 'getZone', status: 503, remaining: 1 });
    expect(t.sandbox.faults.account.list().map((f) => f.id)).toEqual([armed.id]);
    expect((await raw(base, 'GET', '/api/customer/balance', { headers: bearer })).status).toBe(200);
    expect((await raw(base, 'GET', zoneUrl, { headers: bearer })).status).toBe(503);
    expect((await raw(base, 'GET', zoneUrl, { headers: bearer })).status).toBe(200);
    t.sandbox.faults.manager.arm({ operationId: 'listProxies', status: 500 });
    expect((await raw(t.sandbox.managerUrl, 'GET', '/api/proxies')).status).toBe(500);
    expect(t.sandbox.faults.manager.clear()).toBe(1);
    expect((await raw(t.sandbox.managerUrl, 'GET', '/api/proxies')).status).toBe(200);
  });

  it('a bad fault throws a TypeError naming the field; an operationId of the other API is refused', () => {
    // @ts-expect-error listProxies is a manager operation: the account control does not take it.
    expect(() => t.sandbox.faults.account.arm({ operationId: 'listProxies', status: 500 })).toThrow(
      /spec\.operationId: the account API has no operation listProxies/,
    );
    expect(() => t.sandbox.faults.account.arm({ status: 99 })).toThrow(/spec\.status must be >= 100/);
    expect(() => t.sandbox.faults.account.arm({ operationId: 'getZone' })).toThrow(/needs status, latency_ms or drop/);
    expect(t.sandbox.faults.account.list()).toEqual([]);
  });
});
