import { describe, expect, it } from 'vitest';
import { seed } from '../../src/control/seed-builder.js';
import { bearer, C, RES, raw, STATIC, STATIC_PW, useSandbox } from '../helpers.js';

// The account API as the provider's public API reference and the clients of the live service show it
// (specs/account/README.md has the table, each operation its x-observed-source): the operations the
// seed documentation does not list, the answer forms where the seed and the reference disagree (the
// reference's by default, the seed's with answerForms: 'seed'), and the request forms clients send.

const withHealth = seed()
  .with((d) => {
    const zone = d.account.zones.find((z) => z.name === STATIC);
    if (!zone) throw new Error('the built-in seed has no static Zone');
    zone.unavailable_ips = [zone.ips[0] as string, '198.51.100.250'];
    zone.pending_replacement = [{ due_date: '2024-06-01', ips: zone.ips.slice(1, 3) }];
  })
  .build();

const t = useSandbox({ seed: withHealth });
const seedForms = useSandbox({ answerForms: 'seed' });
const builtSeedForms = useSandbox({ seed: seed().answerForms('seed') });
const strict = useSandbox({ strict: true });

const get = (sandbox: typeof t, path: string) => raw(sandbox.sandbox.accountUrl, 'GET', path, { headers: bearer });

describe('operations of the API reference the seed documentation does not list', () => {
  it('countrieslist: the countries per Zone type under zone_types (reference) and zone_type (n8n node)', async () => {
    const r = await get(t, '/countrieslist');
    expect(r.status, r.text).toBe(200);
    const body = r.json();
    expect(body.zone_type).toEqual(body.zone_types);
    const shared = body.zone_types.DC_shared.country_codes as string[];
    expect(shared.length).toBeGreaterThan(0);
    expect(shared).toEqual([...shared].sort());
    const pool = t.sandbox.state().pools.ips;
    expect(new Set(shared)).toEqual(new Set(pool.filter((p) => p.shared).map((p) => p.country)));
    expect(Object.keys(body.zone_types)).toEqual([
      'DC_shared',
      'DC_dedicated_ip',
      'DC_dedicated_host',
      'ISP_shared',
      'ISP_dedicated_ip',
      'ISP_dedicated_host',
    ]);
  });

  it('get_all_zones: every Zone with the provider words for its type and its status', async () => {
    await t.sandbox.reset();
    await t.account.changeZoneDisable({ body: { zone: RES, disable: 1 } });
    const all = (await t.account.listAllZones()).data ?? [];
    const byName = Object.fromEntries(all.map((z) => [z.name, z]));
    expect(byName[STATIC]).toEqual({ name: STATIC, type: 'dc', status: 'active' });
    expect(byName[RES]).toEqual({ name: RES, type: 'res_rotating', status: 'disabled' });
    expect(all).toHaveLength(t.sandbox.state().account.zones.length);
    // The active listing leaves the disabled Zone out and uses the same words.
    const active = (await t.account.listActiveZones()).data ?? [];
    expect(active.map((z) => z.name)).not.toContain(RES);
    expect(active.find((z) => z.name === STATIC)?.type).toBe('dc');
  });

  it('zone/ips/unavailable: the Zone IPs with connectivity problems, only allocated ones; {} when healthy', async () => {
    await t.sandbox.reset();
    const ips = t.sandbox.state().account.zones.find((z) => z.name === STATIC)?.ips ?? [];
    expect((await t.account.listUnavailableIps()).data).toEqual({ [STATIC]: [ips[0]] });
    const healthy = await get(builtSeedForms, '/zone/ips/unavailable');
    expect(healthy.json()).toEqual({});
  });

  it('zone/proxies_pending_replacement: per Zone, the count and the IPs with their country by due date', async () => {
    await t.sandbox.reset();
    const ips = t.sandbox.state().account.zones.find((z) => z.name === STATIC)?.ips ?? [];
    const r = (await t.account.listProxiesPendingReplacement()).data ?? {};
    expect(r).toEqual({
      [STATIC]: {
        type: 'dc',
        ips_to_replace: 2,
        ips_list: [{ due_date: '2024-06-01', ips: ips.slice(1, 3).map((ip) => ({ ip, country: 'us' })) }],
      },
    });
    expect((await t.account.listProxiesPendingReplacement({ params: { query: { zone: RES } } })).data).toEqual({});
  });

  it('domains/bw and domains/req: per Zone and target host, from the request logs of the period', async () => {
    const logs = t.sandbox.state().req_logs;
    const days = logs.map((l) => l.ts.slice(0, 10)).sort();
    const period = { from: days[0] as string, to: days.at(-1) as string };
    const bw = (await t.account.getDomainUsage({ params: { path: { metric: 'bw' }, query: { ...period, zones: `${STATIC},${RES}` } } }))
      .data;
    const req = (await t.account.getDomainUsage({ params: { path: { metric: 'req' }, query: period } })).data;
    const mine = logs.filter((l) => l.zone === STATIC);
    expect(mine.length).toBeGreaterThan(0);
    const host = mine[0]?.dst.host as string;
    const ofHost = mine.filter((l) => l.dst.host === host);
    expect(bw?.[STATIC]?.[host]).toBe(ofHost.reduce((n, l) => n + Number(l.bw), 0));
    expect(req?.[STATIC]?.[host]).toBe(ofHost.length);
    const none = await t.account.getDomainUsage({ params: { path: { metric: 'bw' }, query: { from: '2000-01-01', to: '2000-01-02' } } });
    expect(none.data).toEqual({});
  });
});

describe('answer forms: the reference form by default, the seed form one option away', () => {
  it('route_ips: one IP per line by default; the seed range with answerForms seed (option and seed builder)', async () => {
    const lines = (await get(t, `/zone/route_ips?zone=${STATIC}`)).text;
    expect(lines.split('\n').every((ip) => /^192\.0\.2\.\d+$/.test(ip))).toBe(true);
    expect(lines.split('\n').length).toBeGreaterThan(1);
    for (const s of [seedForms, builtSeedForms]) {
      const range = await get(s, `/zone/route_ips?zone=${STATIC}`);
      expect(range.text).toMatch(/^192\.0\.2\.\d+(-192\.0\.2\.\d+|\/\d+)$/);
      expect((await get(s, `/zone/route_ips?zone=${STATIC}&expand=1`)).text.split('\n')).toEqual(lines.split('\n'));
      // JSON with list_countries is the same in both forms (the seed shows none).
      expect((await get(s, `/zone/route_ips?zone=${STATIC}&list_countries=true`)).json()).toEqual(
        lines.split('\n').map((ip) => ({ ip, country: 'us' })),
      );
    }
  });

  it('GET /zone: ips as an array and plan.product by default; the seed summary string with answerForms seed', async () => {
    const live = (await get(t, `/zone?zone=${STATIC}`)).json();
    const whitelist = t.sandbox.state().account.zones.find((z) => z.name === STATIC)?.whitelist;
    expect(whitelist?.length).toBeGreaterThan(1);
    expect(live.ips).toEqual(whitelist);
    expect(live.plan).toMatchObject({ product: 'dc', type: 'static' });
    expect((await get(t, `/zone?zone=${RES}`)).json().plan.product).toBe('res_rotating');
    const seeded = (await get(seedForms, `/zone?zone=${STATIC}`)).json();
    expect(seeded.ips).toBe(whitelist?.join(','));
    expect(seeded.plans).toEqual(live.plans);
  });

  it('bandwidth: totals per Zone and period key, custom for a from-to period', async () => {
    const zone = (await get(t, `/zone/bw?zone=${STATIC}`)).json()[C];
    expect(zone.customer_id).toBe(C);
    expect(Object.keys(zone.sums[STATIC])).toEqual(['back_m1', 'back_m0', 'back_d2', 'back_d1', 'back_d0']);
    const from = String(zone.from).slice(0, 10);
    const to = String(zone.to).slice(0, 10);
    const all = (await get(t, `/customer/bw?from=${from}&to=${to}`)).json()[C];
    const series = zone.data[STATIC].bw_sum as number[];
    expect(all.sums[STATIC].custom.bw_sum).toBe(series.reduce((a, b) => a + b, 0));
    expect(all.sums[STATIC].custom.bw_sum).toBeGreaterThan(0);
    expect(Object.keys(all.sums).sort()).toEqual(Object.keys(all.data).sort());
  });

  it('POST /zone: 201, as the reference answers it', async () => {
    const r = await raw(t.sandbox.accountUrl, 'POST', '/zone', {
      headers: bearer,
      body: { zone: { name: 'ref_created' }, plan: { type: 'static', ips_type: 'shared', bandwidth: 'payperusage' } },
    });
    expect(r.status, r.text).toBe(201);
    expect(r.json().zone.name).toBe('ref_created');
  });
});

describe('request forms the clients send', () => {
  it('flags as 1, true and True set them; 0 and false do not', async () => {
    for (const on of ['1', 'true', 'True']) {
      const r = await get(t, `/zone/ips?zone=${STATIC}&ip_per_country=${on}`);
      expect(r.status, `${on} ${r.text}`).toBe(200);
      expect(r.json().ips, on).toBeUndefined();
      expect(Object.values(r.json()).every((n) => typeof n === 'number')).toBe(true);
    }
    for (const off of ['0', 'false'])
      expect(Array.isArray((await get(t, `/zone/ips?zone=${STATIC}&ip_per_country=${off}`)).json().ips)).toBe(true);
    expect((await get(t, `/zone/ips?zone=${STATIC}&ip_per_country=yes`)).status).toBe(400);
  });

  it('the bare &ip_per_country counts per country (the Ruby gem); another flag bare is refused', async () => {
    const bare = await get(t, `/zone/ips?zone=${STATIC}&ip_per_country`);
    expect(bare.status, bare.text).toBe(200);
    expect(bare.json()).toEqual((await get(t, `/zone/ips?zone=${STATIC}&ip_per_country=true`)).json());
    expect(bare.json().ips).toBeUndefined();
    const other = await get(t, `/zone/route_ips?zone=${STATIC}&list_countries`);
    expect(other.status).toBe(400);
    expect(other.json().details).toContainEqual(expect.objectContaining({ field: 'query.list_countries' }));
  });

  it('a refresh sent as a form: a list as its name repeated, one value as a list of one; strict and other operations refuse it', async () => {
    await t.sandbox.reset();
    const form = (sandbox: typeof t, path: string, text: string) =>
      raw(sandbox.sandbox.accountUrl, 'POST', path, { headers: { ...bearer, 'content-type': 'application/x-www-form-urlencoded' }, text });
    const held = () => t.sandbox.state().account.zones.find((z) => z.name === STATIC)?.ips ?? [];
    const [a, b] = held();
    const two = await form(t, '/zone/ips/refresh', `zone=${STATIC}&ips=${a}&ips=${b}`);
    expect(two.status, two.text).toBe(200);
    expect(two.json().new_ips).toHaveLength(2);
    expect(held()).not.toContain(a);
    expect(held()).not.toContain(b);
    const [c] = held();
    const one = await form(t, '/zone/ips/refresh', `zone=${STATIC}&ips=${c}`);
    expect(one.status, one.text).toBe(200);
    expect(one.json().new_ips).toHaveLength(1);
    expect(held()).not.toContain(c);
    // Only where the spec declares the form: a JSON-only operation, and strict, name Content-Type.
    for (const [sandbox, path, text] of [
      [t, '/zone/ips', `zone=${STATIC}&count=1`],
      [strict, '/zone/ips/refresh', `zone=${STATIC}&ips=${held()[0]}`],
    ] as const) {
      const r = await form(sandbox, path, text);
      expect(r.status, `${path} ${r.text}`).toBe(400);
      expect(r.json().details).toEqual([{ field: 'header.Content-Type', reason: expect.stringMatching(/must be application\/json/) }]);
    }
  });

  it('recent_ips and the whitelist read: without zones, *, one name or names separated by commas', async () => {
    await t.sandbox.reset();
    const everyZone = t.sandbox
      .state()
      .account.zones.map((z) => z.name)
      .sort();
    for (const path of ['/zone/recent_ips', '/zone/whitelist']) {
      expect(Object.keys((await get(t, path)).json()).sort()).toEqual(everyZone);
      expect(Object.keys((await get(t, `${path}?zones=*`)).json()).sort()).toEqual(everyZone);
      expect(Object.keys((await get(t, `${path}?zones=${STATIC},${RES}`)).json()).sort()).toEqual([RES, STATIC].sort());
      expect(Object.keys((await get(t, `${path}?zones=${RES}`)).json())).toEqual([RES]);
      expect((await get(t, `${path}?zones=${STATIC},no_such_zone`)).status).toBe(404);
    }
    // A Zone credential reads its own Zone, whatever the selection names.
    const own = await raw(t.sandbox.accountUrl, 'GET', '/zone/recent_ips', {
      headers: { 'X-Service-Auth': `service-customer-${C}-zone-${STATIC}-key-${STATIC_PW}` },
    });
    expect(Object.keys(own.json())).toEqual([STATIC]);
  });
});
