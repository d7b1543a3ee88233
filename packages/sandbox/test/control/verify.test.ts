import { describe, expect, it } from 'vitest';
import { createControlClient } from '../../src/control/client.js';
import type { FaultSpec } from '../../src/index.js';
import { bearer, C, RES, raw, STATIC, STATIC_PW, TOKEN, useSandbox } from '../helpers.js';

// Verify: the calls a sandbox received, per API, account and operation (in process and over HTTP),
// with no credential in them; faults that match by parameter, body, header and account, in sequence.

const t = useSandbox();
const zoneUrl = (zone = STATIC) => `/api/zone?customer=${C}&zone=${zone}`;
/** Arms a fault over HTTP through the control API's typed client: the status, and the error's text. */
async function arm(base: string, body: FaultSpec): Promise<{ status: number; text: string }> {
  const { response, error } = await createControlClient({ baseUrl: base }).addFault({ body });
  return { status: response.status, text: JSON.stringify(error ?? null) };
}

describe('sandbox.calls(): what the sandbox received', () => {
  it('records each call with its operation, account, method, path, params, body, status and time', async () => {
    t.sandbox.clearCalls();
    const before = Date.now();
    await t.account.getZone({ params: { query: { zone: STATIC } } });
    await raw(t.sandbox.accountUrl, 'GET', zoneUrl('no_such_zone'), { headers: bearer });
    await t.manager.createProxy({ body: { proxy: { port: 24070, zone: RES } } });
    const zones = t.sandbox.calls({ operationId: 'getZone', account: C });
    expect(zones).toHaveLength(2);
    expect(zones[0]).toMatchObject({ api: 'account', operationId: 'getZone', account: C, method: 'GET', path: '/api/zone', status: 200 });
    expect(zones[0]?.params).toMatchObject({ zone: STATIC });
    expect(zones[1]).toMatchObject({ params: { zone: 'no_such_zone' } });
    expect(zones[1]?.status).toBeGreaterThanOrEqual(400);
    expect(Date.parse(zones[0]?.time as string)).toBeGreaterThanOrEqual(before - 1000);
    const created = t.sandbox.calls({ api: 'manager', operationId: 'createProxy' });
    expect(created).toHaveLength(1);
    expect(created[0]).toMatchObject({ method: 'POST', path: '/api/proxies', body: { proxy: { port: 24070, zone: RES } }, status: 200 });
    // Other accounts and operations are left out by the filter; the order is the order of arrival.
    expect(t.sandbox.calls({ operationId: 'getZone', account: 'hl_someone_else' })).toEqual([]);
    const all = t.sandbox.calls();
    expect(all.map((c) => c.operationId)).toEqual(['getZone', 'getZone', 'createProxy']);
    expect(all.map((c) => c.seq)).toEqual([...all.map((c) => c.seq)].sort((a, b) => a - b));
    await t.manager.deleteProxy({ params: { path: { port: 24070 } } });
  });

  it('GET /__sandbox/calls filters the same way over HTTP, DELETE clears them', async () => {
    t.sandbox.clearCalls();
    await t.account.getBalance({ params: { query: {} } });
    await t.account.getZone({ params: { query: { zone: STATIC } } });
    const listed = await raw(t.sandbox.managerUrl, 'GET', `/__sandbox/calls?operationId=getBalance&account=${C}`);
    expect(listed.status).toBe(200);
    expect(listed.json().calls).toHaveLength(1);
    expect(listed.json().calls[0]).toMatchObject({ api: 'account', operationId: 'getBalance', status: 200 });
    const after = listed.json().calls[0].seq;
    expect(
      (await raw(t.sandbox.accountUrl, 'GET', `/__sandbox/calls?after=${after}`))
        .json()
        .calls.map((c: { operationId: string }) => c.operationId),
    ).toEqual(['getZone']);
    expect((await raw(t.sandbox.accountUrl, 'GET', '/__sandbox/calls?status=abc')).status).toBe(400);
    expect((await raw(t.sandbox.accountUrl, 'DELETE', '/__sandbox/calls')).json()).toEqual({ cleared: 2 });
    expect(t.sandbox.calls()).toEqual([]);
  });

  it('holds no credential: no headers, and secret fields of params and bodies are redacted', async () => {
    t.sandbox.clearCalls();
    await raw(t.sandbox.accountUrl, 'GET', '/api/zone', {
      headers: { 'X-Service-Auth': `service-customer-${C}-zone-${STATIC}-key-${STATIC_PW}` },
    });
    await raw(t.sandbox.managerUrl, 'POST', '/api/proxies', { body: { proxy: { port: 24071, zone: RES, password: 'my-port-secret' } } });
    const text = JSON.stringify(t.sandbox.calls()) + (await raw(t.sandbox.accountUrl, 'GET', '/__sandbox/calls')).text;
    for (const secret of [TOKEN, STATIC_PW, 'my-port-secret']) expect(text).not.toContain(secret);
    expect(t.sandbox.calls({ operationId: 'createProxy' })[0]?.body).toEqual({ proxy: { port: 24071, zone: RES, password: '[redacted]' } });
    expect(t.sandbox.calls({ operationId: 'getZone' })).toHaveLength(1);
    await raw(t.sandbox.managerUrl, 'DELETE', '/api/proxies/24071');
  });
});

describe('a body is recorded as sent', () => {
  it('a field the sandbox ignored stays in the record (the checker removed it before the handler read the body)', async () => {
    t.sandbox.clearCalls();
    const r = await raw(t.sandbox.accountUrl, 'POST', '/api/zone/switch_100uptime', {
      headers: bearer,
      body: { zone: STATIC, active: 1, color: 'red', token: 'a-secret-field' },
    });
    expect(r.status, r.text).toBe(200);
    expect(r.headers.get('x-sandbox-ignored-fields')).toBe('body.color, body.token');
    const [call] = t.sandbox.calls({ operationId: 'switchZoneUptime' });
    expect(call?.body).toEqual({ zone: STATIC, active: 1, color: 'red', token: '[redacted]' });
    expect(call?.body_size).toBe(Buffer.byteLength(JSON.stringify({ zone: STATIC, active: 1, color: 'red', token: 'a-secret-field' })));
  });

  it("a port's configuration as sent, JSON or form, without what the port stored with it (its password, price, whitelist)", async () => {
    t.sandbox.clearCalls();
    const json = await raw(t.sandbox.managerUrl, 'POST', '/api/proxies', { body: { proxy: { port: 24074, zone: RES, users: ['Bob'] } } });
    expect(json.status, json.text).toBe(200);
    const form = await raw(t.sandbox.managerUrl, 'POST', '/api/proxies', {
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      text: `proxy[port]=24075&proxy[zone]=${RES}&proxy[password]=form-secret`,
    });
    expect(form.status, form.text).toBe(200);
    const bodies = t.sandbox.calls({ operationId: 'createProxy' }).map((c) => c.body);
    expect(bodies).toEqual([
      { proxy: { port: 24074, zone: RES, users: ['Bob'] } },
      { proxy: { port: '24075', zone: RES, password: '[redacted]' } },
    ]);
    // The stored ports have what the manager adds (and the users as it lowers them).
    const stored = t.sandbox.state().manager.ports.filter((p) => p.port === 24074 || p.port === 24075);
    expect(stored.map((p) => [p.port, typeof (p as Record<string, unknown>).gb_cost, p.users ?? null])).toEqual([
      [24074, 'number', ['bob']],
      [24075, 'number', null],
    ]);
    for (const port of [24074, 24075]) await raw(t.sandbox.managerUrl, 'DELETE', `/api/proxies/${port}`);
  });
});

describe('faults that match, in sequence', () => {
  it('by a parameter: only the request for that Zone fails', async () => {
    await arm(t.sandbox.accountUrl, { operationId: 'getZone', when: { params: { zone: RES } }, status: 503, count: 1 });
    expect((await raw(t.sandbox.accountUrl, 'GET', zoneUrl(STATIC), { headers: bearer })).status).toBe(200);
    expect((await raw(t.sandbox.accountUrl, 'GET', zoneUrl(RES), { headers: bearer })).status).toBe(503);
    expect((await raw(t.sandbox.accountUrl, 'GET', zoneUrl(RES), { headers: bearer })).status).toBe(200);
  });

  it('by a part of the body, a header and the account', async () => {
    const m = t.sandbox.managerUrl;
    await arm(m, { operationId: 'createProxy', when: { body: { proxy: { zone: 'static_zone' } } }, status: 500, body: 'no', count: 1 });
    expect((await raw(m, 'POST', '/api/proxies', { body: { proxy: { port: 24072, zone: RES } } })).status).toBe(200);
    const refused = await raw(m, 'POST', '/api/proxies', { body: { proxy: { port: 24073, zone: STATIC } } });
    expect([refused.status, refused.text]).toEqual([500, 'no']);
    expect(t.sandbox.state().manager.ports.map((p) => p.port)).not.toContain(24073);
    await raw(m, 'DELETE', '/api/proxies/24072');

    const a = t.sandbox.accountUrl;
    await arm(a, { operationId: 'getBalance', when: { headers: { 'X-Test-Case': 'slow-path' } }, status: 429, count: 1 });
    expect((await raw(a, 'GET', '/api/customer/balance', { headers: bearer })).status).toBe(200);
    expect((await raw(a, 'GET', '/api/customer/balance', { headers: { ...bearer, 'x-test-case': 'slow-path' } })).status).toBe(429);

    await arm(a, { operationId: 'getBalance', when: { account: 'hl_other' }, status: 500 });
    expect((await raw(a, 'GET', '/api/customer/balance', { headers: bearer })).status).toBe(200);
    await arm(a, { operationId: 'getBalance', when: { account: C }, status: 502, count: 1 });
    const mine = await raw(a, 'GET', '/api/customer/balance', { headers: bearer });
    expect(mine.status).toBe(502);
    expect(t.sandbox.calls({ operationId: 'getBalance', status: 502 }).at(-1)?.fault).toBeTypeOf('number');
    t.sandbox.faults.account.clear();
  });

  it('a sequence: fail the first two, succeed once, then answer slowly until cleared', async () => {
    const a = t.sandbox.accountUrl;
    const armed = await arm(a, {
      operationId: 'getBalance',
      sequence: [{ status: 503, count: 2 }, { pass: true }, { latency_ms: 50 }],
    });
    expect(armed.status, armed.text).toBe(200);
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await raw(a, 'GET', '/api/customer/balance', { headers: bearer })).status);
    expect(statuses).toEqual([503, 503, 200, 200, 200]);
    const [left] = t.sandbox.faults.account.list();
    expect(left).toMatchObject({ step: 2, remaining: undefined });
    expect(t.sandbox.faults.account.clear()).toBe(1);
  });

  it('a sequence that ends: the fault is gone after its last step', () => {
    const f = t.sandbox.faults.manager;
    f.arm({ operationId: 'getVersion', sequence: [{ status: 500 }, { status: 503, count: 2 }] });
    expect(f.list()).toHaveLength(1);
    expect(f.list()[0]).toMatchObject({ step: 0, remaining: 1 });
  });

  it('refuses a fault with both an action and a sequence, or a step without an action, naming it', async () => {
    const both = await arm(t.sandbox.accountUrl, { status: 500, sequence: [{ status: 503 }] });
    expect(both.status).toBe(400);
    const empty = await arm(t.sandbox.accountUrl, { operationId: 'getBalance', sequence: [{ count: 2 }] });
    expect(empty.status).toBe(400);
    expect(() => t.sandbox.faults.account.arm({ operationId: 'getBalance', sequence: [{ count: 2 }] })).toThrow(
      /faults\.account\.arm: spec/,
    );
    expect(t.sandbox.faults.account.list()).toEqual([]);
  });
});
