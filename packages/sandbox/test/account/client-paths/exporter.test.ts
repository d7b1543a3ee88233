import { describe, expect, it } from 'vitest';
import { seed } from '../../../src/control/seed-builder.js';
import { C, RES, STATIC, TOKEN, useSandbox } from '../../helpers.js';

// The calls of a Prometheus exporter of the live account API (danielgines/brightdata-exporter at dd5b463,
// src/brightdata_exporter/client.py), replayed as it makes them (paths without /api, Bearer token,
// query parameters as httpx sends them) against the sandbox, and read as it reads them: each `read`
// below restates the client's parsing of the answer at the cited lines.

const withHealth = seed()
  .with((d) => {
    const zone = d.account.zones.find((z) => z.name === STATIC);
    if (!zone) throw new Error('the built-in seed has no static Zone');
    zone.unavailable_ips = [zone.ips[0] as string];
    zone.pending_replacement = [{ due_date: '2024-06-01', ips: zone.ips.slice(1, 2) }];
  })
  .build();
const t = useSandbox({ seed: withHealth });

/** client.py:347-372 (_get): a GET with the token, query values as strings, a non-200 an error, JSON parsed. */
async function get(path: string, params: Record<string, string> = {}): Promise<unknown> {
  const url = new URL(path, `${t.sandbox.accountUrl}/`);
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  const r = await fetch(url, { headers: { Authorization: `Bearer ${TOKEN}`, Accept: 'application/json' } });
  const text = await r.text();
  if (r.status !== 200) throw new Error(`${path} -> HTTP ${r.status}: ${text.slice(0, 200)}`);
  return JSON.parse(text);
}
const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

describe('brightdata-exporter: every call of a scrape cycle, read as the exporter reads it', () => {
  it('get_all_zones (client.py:388-412): name, type, status of every Zone', async () => {
    const raw = await get('zone/get_all_zones');
    expect(Array.isArray(raw)).toBe(true);
    const zones = (raw as Record<string, unknown>[]).filter((z) => isObj(z) && z.name).map((z) => [z.name, z.type, z.status]);
    expect(zones).toContainEqual([STATIC, 'dc', 'active']);
    expect(zones).toContainEqual([RES, 'res_rotating', 'active']);
  });

  it('zone info (client.py:436-478): ips as a list, plan.product and plan.type', async () => {
    const raw = await get('zone', { zone: RES });
    if (!isObj(raw)) throw new Error('not an object');
    const plan = isObj(raw.plan) ? raw.plan : {};
    const ips = Array.isArray(raw.ips) ? raw.ips : [];
    expect(ips.length).toBeGreaterThan(0);
    expect(plan.product).toBe('res_rotating');
    expect(plan.type).toBe('resident');
  });

  it('zone cost and customer bandwidth with from/to (client.py:480-610): the custom bucket of each', async () => {
    const period = { from: '2020-01-01', to: new Date().toISOString().slice(0, 10) };
    const cost = await get('zone/cost', { zone: STATIC, ...period });
    let usd = 0;
    let bw = 0;
    for (const user of Object.values(cost as Record<string, unknown>)) {
      const custom = isObj(user) && isObj(user.custom) ? user.custom : {};
      if (typeof custom.cost === 'number') usd += custom.cost;
      if (typeof custom.bw === 'number') bw += custom.bw;
    }
    expect(bw).toBeGreaterThan(0);
    expect(usd).toBeGreaterThan(0);
    const all = await get('customer/bw', period);
    const byZone: Record<string, number> = {};
    for (const cust of Object.values(all as Record<string, unknown>)) {
      const sums = isObj(cust) && isObj(cust.sums) ? cust.sums : {};
      for (const [zone, zsum] of Object.entries(sums)) {
        const custom = isObj(zsum) && isObj(zsum.custom) ? zsum.custom : {};
        byZone[zone] = Number(custom.bw_sum ?? 0);
      }
    }
    // zone/cost's `to` is exclusive (observed), the bandwidth's inclusive: at least the cost's bytes.
    expect(byZone[STATIC]).toBeGreaterThanOrEqual(bw);
  });

  it('status and network_status/all (client.py:646-678)', async () => {
    const status = (await get('status')) as Record<string, unknown>;
    expect([status.status, status.customer, Boolean(status.can_make_requests)]).toEqual(['active', C, true]);
    expect(Boolean(((await get('network_status/all')) as Record<string, unknown>).status)).toBe(true);
  });

  it('ips/unavailable, proxies_pending_replacement, recent_ips without zones (client.py:680-714)', async () => {
    const unavailable = (await get('zone/ips/unavailable')) as Record<string, unknown>;
    const counts = Object.fromEntries(
      Object.entries(unavailable)
        .filter(([, ips]) => Array.isArray(ips))
        .map(([z, ips]) => [z, (ips as unknown[]).length]),
    );
    expect(counts).toEqual({ [STATIC]: 1 });
    // collector.py:621-640: a dict payload counts as payload.count or its number of keys.
    const pending = (await get('zone/proxies_pending_replacement')) as Record<string, unknown>;
    expect(Object.keys(pending)).toEqual([STATIC]);
    expect(isObj(pending[STATIC])).toBe(true);
    const recent = (await get('zone/recent_ips')) as Record<string, unknown>;
    expect(Object.keys(recent)).toEqual(expect.arrayContaining([STATIC, RES]));
    expect(Object.values(recent).every(Array.isArray)).toBe(true);
  });

  it('zone/ips?ip_per_country=true and route_vips (client.py:717-750): counts by country, gIP ids', async () => {
    const raw = (await get('zone/ips', { zone: STATIC, ip_per_country: 'true' })) as Record<string, unknown>;
    const counts = Object.fromEntries(Object.entries(raw).filter(([, v]) => Number.isInteger(v)));
    expect(Object.keys(counts).length).toBeGreaterThan(0);
    expect(Object.values(counts).reduce((a, b) => (a as number) + (b as number), 0)).toBe(
      t.sandbox.state().account.zones.find((z) => z.name === STATIC)?.ips.length,
    );
    const vips = await get('zone/route_vips', { zone: RES });
    expect(Array.isArray(vips) && vips.length).toBeGreaterThan(0);
  });

  it('domains/bw and domains/req with zones=a,b (client.py:752-790): Zone -> domain -> number', async () => {
    const period = { from: '2020-01-01', to: new Date().toISOString().slice(0, 10), zones: `${STATIC},${RES}` };
    for (const metric of ['bw', 'req']) {
      const raw = (await get(`domains/${metric}`, period)) as Record<string, unknown>;
      const byZone = Object.fromEntries(
        Object.entries(raw)
          .filter(([, b]) => isObj(b))
          .map(([z, b]) => [z, Object.fromEntries(Object.entries(b as object).filter(([, v]) => typeof v === 'number'))]),
      );
      expect(Object.keys(byZone[STATIC] ?? {}).length, metric).toBeGreaterThan(0);
    }
  });
});
