import { loadBundle, schemaValidator } from '@zone-api/testkit';
import { describe, expect, it } from 'vitest';
import { call, type Reply, SHIFT, usePair } from './pair.js';

// Fields of a port and of the settings that the real local proxy manager 1.570.247 fills in or echoes,
// compared with the sandbox (default, not strict) value by value: a port's `bw_limit` (its `start` and
// `renewable`), a port's `user_password`, the settings' `cloud_url_address`. Each case uses ports of its
// own (the sandbox's are + SHIFT).

const s = usePair();

type Config = Record<string, unknown>;

/** A port's stored configuration (GET /api/proxies) on each side. */
async function stored(port: number): Promise<[Config | undefined, Config | undefined]> {
  const [real, sbx] = await s.both(() => ['GET', '/api/proxies']);
  const find = (r: Reply, p: number) => (r.body as Config[]).find((c) => c.port === p);
  return [find(real, port), find(sbx, port + SHIFT)];
}

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
/** A `bw_limit` with its `start` named by what it is: given (kept as is) or set by the manager (a time). */
const startNamed = (limit: unknown, given?: string) => {
  const l = { ...(limit as Config) };
  if (typeof l.start === 'string' && l.start !== given && ISO.test(l.start)) l.start = '<a time the manager set>';
  return l;
};

describe("a port's bw_limit", () => {
  it('a create keeps its known fields only, `renewable` a boolean, `th_webhook_value` only when set, `start` as given', async () => {
    const port = 26200;
    const start = '2020-01-01T00:00:00.000Z';
    const bw_limit = { bytes: 1000, days: 1, renewable: 'yes', start, th_webhook_value: 0, use_limit_webhook: true, extra: 1 };
    const [realMade, sbxMade] = await s.both((at) => ['POST', '/api/proxies', { proxy: { port: at(port), zone: 'res_zone', bw_limit } }]);
    expect(realMade.status).toBe(200);
    const expected = { bytes: 1000, days: 1, renewable: true, start, use_limit_webhook: true };
    expect((realMade.body as { data: Config }).data.bw_limit).toEqual(expected);
    expect((sbxMade.body as { data: Config }).data.bw_limit).toEqual(expected);
    const [real, sbx] = await stored(port);
    expect(real?.bw_limit).toEqual(expected);
    expect(sbx?.bw_limit).toEqual(expected);
  });

  it('a create without `start` or `renewable`: `renewable: false` and `start` the time of the create; an update in place keeps that start and takes the new fields over the old', async () => {
    const port = 26210;
    const [realMade, sbxMade] = await s.both((at) => [
      'POST',
      '/api/proxies',
      { proxy: { port: at(port), zone: 'res_zone', bw_limit: { bytes: 1000, days: 1 } } },
    ]);
    const made = (r: Reply) => startNamed((r.body as { data: Config }).data.bw_limit);
    expect(made(realMade)).toEqual({ bytes: 1000, days: 1, renewable: false, start: '<a time the manager set>' });
    expect(made(sbxMade)).toEqual(made(realMade));
    const [realBefore, sbxBefore] = await stored(port);
    await s.same(
      (at) => ['PUT', `/api/proxies/${at(port)}`, { proxy: { bw_limit: { bytes: 2000, days: 2, th_webhook_value: 50 } } }],
      { status: 200 },
      (r) => r.status,
    );
    const [real, sbx] = await stored(port);
    const before = (c: Config | undefined) => (c?.bw_limit as Config | undefined)?.start;
    // The start of each side's create, kept by its update.
    expect(real?.bw_limit).toEqual({ bytes: 2000, days: 2, renewable: false, th_webhook_value: 50, start: before(realBefore) });
    expect(sbx?.bw_limit).toEqual({ bytes: 2000, days: 2, renewable: false, th_webhook_value: 50, start: before(sbxBefore) });
  });
});

describe("a port's user_password", () => {
  it('is stored and answered as given, by both; the sandbox writes it in neither its general log nor its record of calls', async () => {
    const port = 26220;
    const secret = 'pw-not-for-logs-7319';
    const proxy = (at: (p: number) => number) => ({ proxy: { port: at(port), zone: 'res_zone', user: 'u1', user_password: secret } });
    const [real, sbx] = await s.both((at) => ['POST', '/api/proxies', proxy(at)]);
    for (const r of [real, sbx]) expect((r.body as { data: Config }).data).toMatchObject({ user: 'u1', user_password: secret });
    const [realStored, sbxStored] = await stored(port);
    expect(realStored).toMatchObject({ user_password: secret });
    expect(sbxStored).toMatchObject({ user_password: secret });
    const log = await call(s.sandbox.managerUrl, 'GET', '/api/general_logs?limit=0');
    expect(String(log.body)).toContain(String(port + SHIFT));
    expect(String(log.body)).not.toContain(secret);
    const calls = await call(s.sandbox.managerUrl, 'GET', '/__sandbox/calls?operationId=createProxy');
    expect(JSON.stringify(calls.body)).toContain('user_password');
    expect(JSON.stringify(calls.body)).not.toContain(secret);
  });
});

describe("the settings' cloud_url_address", () => {
  it("is the real manager's rule, pmgr-customer-<id>.brd.superproxy.io, the id after the customer's `_`; offline the real one has no id from its cloud", async () => {
    const [real, sbx] = await s.both(() => ['GET', '/api/settings']);
    const address = (r: Reply) => (r.body as Config).cloud_url_address;
    // lib/manager.js 820-825: `customer_id||account_id`, which only the cloud's login gives (none here).
    expect(address(real)).toBe('pmgr-customer-undefined.brd.superproxy.io');
    const customer = (sbx.body as Config).customer as string;
    expect(address(sbx)).toBe(`pmgr-customer-${customer.split('_')[1]}.brd.superproxy.io`);
    const [realPut, sbxPut] = await s.both(() => ['PUT', '/api/settings', {}]);
    expect(address(realPut)).toBe(address(real));
    expect(address(sbxPut)).toBe(address(sbx));
  });
});

describe('a port check with more than 100 problems', () => {
  it('every problem is named, by both, in the same order, and the spec declares the answer', async () => {
    const port = 26230;
    await s.createBoth(port);
    const long = 'x'.repeat(301);
    const proxy = Object.fromEntries(Array.from({ length: 150 }, (_, i) => [`f${i}`, long]));
    const [real, sbx] = await s.both((at) => ['PUT', `/api/proxies/${at(port)}`, { proxy }]);
    expect(real.status).toBe(400);
    expect((real.body as { errors: unknown[] }).errors).toHaveLength(150);
    expect((real.body as { errors: unknown[] }).errors[149]).toEqual({ msg: 'Maximum string length exceeded', field: 'f149' });
    expect(sbx).toEqual(real);
    expect(schemaValidator(loadBundle('manager')).validate('#/components/schemas/ProxyErrors', real.body)).toBeNull();
  });
});
