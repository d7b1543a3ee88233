import { describe, expect, it } from 'vitest';
import { C, RES, type Rec, STATIC, useSandbox } from '../helpers.js';

// State across calls of the account API, through the typed client. Every response is also held
// to the spec (see useSandbox). Each describe starts from the seed.
const t = useSandbox();
const q = (zone: string) => ({ params: { query: { customer: C, zone } } });

describe('Zone lifecycle', () => {
  it('create -> read -> change -> read -> delete -> 404', async () => {
    await t.sandbox.reset();
    const { account } = t;
    const created = await account.createZone({
      body: {
        customer: C,
        zone: { name: 'flow_zone', password: ['flowpw1', 'flowpw2'], ips: ['198.51.100.7'] },
        plan: { type: 'static', ips_type: 'dedicated', ips: 2 },
      },
    });
    expect(created.response.status).toBe(201);
    expect(created.data?.zone).toEqual({ name: 'flow_zone', ips: '198.51.100.7', password: ['flowpw1', 'flowpw2'] });

    const read = await account.getZone(q('flow_zone'));
    expect(read.data?.password).toEqual(['flowpw1', 'flowpw2']);
    expect(read.data?.plans?.[0]?.ips).toBe(2);
    expect(Date.parse(read.data?.plans?.[0]?.start ?? '')).not.toBeNaN();
    expect((await account.getZonePasswords(q('flow_zone'))).data?.passwords).toEqual(['flowpw1', 'flowpw2']);
    expect((await account.listZoneIps(q('flow_zone'))).data).toMatchObject({
      ips: [{ ip: expect.any(String) }, { ip: expect.any(String) }],
    });
    expect((await account.listActiveZones({ params: { query: { customer: C } } })).data).toContainEqual({
      name: 'flow_zone',
      type: 'dc',
      status: 'active',
    });

    await account.changeZoneDisable({ body: { customer: C, zone: 'flow_zone', disable: 1 } });
    expect((await account.getZoneStatus(q('flow_zone'))).data?.status).toBe('disabled');
    expect((await account.listActiveZones({ params: { query: { customer: C } } })).data?.map((z) => z.name)).not.toContain('flow_zone');

    const del = await account.deleteZone({ body: { customer: C, zone: 'flow_zone' } });
    expect(del.response.status).toBe(200);
    const gone = await account.getZone(q('flow_zone'));
    expect(gone.response.status).toBe(404);
    expect(gone.error?.error).toMatch(/not found/i);
    // Deleting it again: 400 whose text says "not found", as the provider's Python SDK reads it (observed).
    const again = await account.deleteZone({ body: { customer: C, zone: 'flow_zone' } });
    expect(again.response.status).toBe(400);
    expect(again.error?.error).toMatch(/not found/i);
  });

  it('refuses a second Zone of the same name and leaves the first as it was', async () => {
    const again = await t.account.createZone({ body: { zone: { name: STATIC }, plan: { type: 'resident' } } });
    // 409 "Duplicate zone name", as the provider's Python SDK reads it (observed).
    expect(again.response.status).toBe(409);
    expect(again.error?.error).toMatch(/^Duplicate zone name/);
    expect(again.error?.details).toContainEqual({ field: 'body.zone.name', reason: expect.stringMatching(/already exists/) });
    expect((await t.account.getZone(q(STATIC))).data?.plans?.[0]?.type).toBe('static');
  });

  it('allocates gIPs to a new residential Zone and gives them back on delete', async () => {
    const before = (await t.account.getAvailableIpCount(q(RES))).data?.count as number;
    await t.account.createZone({ body: { zone: { name: 'res_two' }, plan: { type: 'resident', vip: true, vips: 2, vip_country: 'us' } } });
    expect((await t.account.listRouteVips(q('res_two'))).data).toHaveLength(2);
    expect((await t.account.getAvailableIpCount(q(RES))).data?.count).toBe(before - 2);
    await t.account.deleteZone({ body: { zone: 'res_two' } });
    expect((await t.account.getAvailableIpCount(q(RES))).data?.count).toBe(before);
  });
});

describe('the state table of the seed, each row visible in the next read', () => {
  it('account status suspend_manual, then active', async () => {
    await t.sandbox.reset();
    const set = await t.account.setAccountStatus({ body: { customer: C, status: 'suspend_manual' } });
    expect(set.data).toEqual({ status: 'suspend_manual' });
    const read = await t.account.getAccountStatus({ params: { query: { customer: C } } });
    expect(read.data).toMatchObject({ status: 'suspend_manual', customer: C, can_make_requests: false });
    await t.account.setAccountStatus({ body: { customer: C, status: 'active' } });
    expect((await t.account.getAccountStatus({ params: { query: { customer: C } } })).data).toMatchObject({
      status: 'active',
      can_make_requests: true,
    });
  });

  it('100% uptime on, then off', async () => {
    // No read of the account API shows the option (the provider's reference has none): the stored state does.
    const read = async () => t.sandbox.state().account.zones.find((z) => z.name === STATIC)?.uptime_100;
    expect(await read()).toBe(false);
    expect((await t.account.switchZoneUptime({ body: { zone: STATIC, active: 1 } })).response.status).toBe(200);
    expect(await read()).toBe(true);
    await t.account.switchZoneUptime({ body: { zone: STATIC, active: 0 } });
    expect(await read()).toBe(false);
  });

  it('Zone disable (and the observed 0 turning it back on)', async () => {
    await t.account.changeZoneDisable({ body: { zone: 'dc_zone_2', disable: 1 } });
    expect((await t.account.getZoneStatus(q('dc_zone_2'))).data?.status).toBe('disabled');
    expect((await t.account.listAllZones({ params: { query: { customer: C } } })).data).toContainEqual({
      name: 'dc_zone_2',
      type: 'dc',
      status: 'disabled',
    });
    expect(Object.keys((await t.account.getZone(q('dc_zone_2'))).data ?? {})).toEqual(['ips', 'password', 'plans', 'plan']);
    await t.account.changeZoneDisable({ body: { zone: 'dc_zone_2', disable: 0 } });
    expect((await t.account.getZoneStatus(q('dc_zone_2'))).data?.status).toBe('active');
  });
});

describe('datacenter IPs', () => {
  it('add from the pool by count, country and city; remove; refresh with new_ips', async () => {
    await t.sandbox.reset();
    const { account } = t;
    const ips0 = ((await account.listZoneIps(q(STATIC))).data as { ips: { ip: string }[] }).ips.map((r) => r.ip);
    const available = (
      await account.getAvailableIpCount({ params: { query: { customer: C, zone: STATIC, plan: { ips_type: 'shared', country: 'gb' } } } })
    ).data?.count as number;
    expect(available).toBeGreaterThan(2);

    const added = await account.addZoneIps({ body: { zone: STATIC, count: 2, country: 'gb' } });
    expect(added.data?.new_ips).toHaveLength(2);
    expect(added.data?.ips).toEqual([...ips0, ...(added.data?.new_ips ?? [])]);
    const perCountry = (await account.listZoneIps({ params: { query: { zone: STATIC, ip_per_country: 1 } } })).data as Record<
      string,
      number
    >;
    expect(perCountry.gb).toBe(2);
    expect(
      (await account.getAvailableIpCount({ params: { query: { customer: C, zone: STATIC, plan: { ips_type: 'shared', country: 'gb' } } } }))
        .data?.count,
    ).toBe(available - 2);

    const city = await account.addZoneIps({ body: { zone: STATIC, count: 1, country_city: 'us-chicago' } });
    const chicago = city.data?.new_ips?.[0] as string;
    const records = ((await account.listZoneIps(q(STATIC))).data as { ips: { ip: string; maxmind?: string }[] }).ips;
    expect(records.find((r) => r.ip === chicago)?.maxmind).toBe('us');

    const removed = await account.removeZoneIps({ body: { zone: STATIC, ips: [chicago] } });
    expect(removed.data).toEqual({ ips: [chicago] });
    expect(((await account.listZoneIps(q(STATIC))).data as { ips: { ip: string }[] }).ips.map((r) => r.ip)).not.toContain(chicago);
    expect((await account.getZone(q(STATIC))).data?.plans?.at(-1)?.ips).toBe(ips0.length + 2);

    const target = ips0[0] as string;
    const refreshed = await account.refreshZoneIps({ body: { zone: STATIC, ips: [target] } });
    const fresh = (refreshed.data as { new_ips: string[] }).new_ips;
    expect(fresh).toHaveLength(1);
    expect(fresh[0]).not.toBe(target);
    const after = ((await account.listZoneIps(q(STATIC))).data as { ips: { ip: string }[] }).ips.map((r) => r.ip);
    expect(after).toContain(fresh[0]);
    expect(after).not.toContain(target);

    const all = await account.refreshZoneIps({ body: { zone: STATIC } });
    const allNew = (all.data as { ips: string[]; new_ips: string[] }).new_ips;
    expect(allNew).toHaveLength(after.length);
    expect(allNew.some((ip) => after.includes(ip))).toBe(false);
  });

  it('refuses more IPs than the pool has, and an IP the Zone does not hold, without changing anything', async () => {
    const before = t.sandbox.state();
    const tooMany = await t.account.addZoneIps({ body: { zone: STATIC, count: 5000 } });
    expect(tooMany.response.status).toBe(400);
    expect(tooMany.error?.details?.[0]?.field).toBe('body.count');
    const notHeld = await t.account.removeZoneIps({ body: { zone: STATIC, ips: ['192.0.2.250', '10.9.9.9'] } });
    expect(notHeld.response.status).toBe(400);
    expect(notHeld.error?.details?.map((d) => d.field)).toEqual(['body.ips[0]', 'body.ips[1]']);
    expect(t.sandbox.state()).toEqual(before);
  });

  it('concurrent allocations never hand out one IP twice', async () => {
    await t.sandbox.reset();
    const count = async () =>
      (await t.account.getAvailableIpCount({ params: { query: { customer: C, zone: STATIC, plan: { ips_type: 'shared' } } } })).data
        ?.count as number;
    const before = await count();
    const results = await Promise.all(
      Array.from({ length: 30 }, (_, i) => t.account.addZoneIps({ body: { zone: i % 2 ? STATIC : 'mob_zone', count: 1 } })),
    );
    const okCount = results.filter((r) => r.response.status === 200).length;
    expect(okCount).toBe(15); // mob_zone is residential: it has no datacenter IPs
    const fresh = results.flatMap((r) => r.data?.new_ips ?? []);
    expect(new Set(fresh).size).toBe(15);
    expect(await count()).toBe(before - 15);
  });

  it('route_ips: one IP per line, with countries as JSON, a country, expanded', async () => {
    await t.sandbox.reset();
    expect((await t.account.getRouteIps(q(STATIC))).data).toBe('192.0.2.21\n192.0.2.22\n192.0.2.23\n192.0.2.24');
    expect((await t.account.getRouteIps({ params: { query: { zone: STATIC, expand: 1 } } })).data).toBe(
      '192.0.2.21\n192.0.2.22\n192.0.2.23\n192.0.2.24',
    );
    const listed = await t.account.getRouteIps({ params: { query: { zone: STATIC, list_countries: 'True' } } });
    expect(listed.response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(listed.data).toEqual(['192.0.2.21', '192.0.2.22', '192.0.2.23', '192.0.2.24'].map((ip) => ({ ip, country: 'us' })));
    const none = await t.account.getRouteIps({ params: { query: { zone: STATIC, country: 'de' } } });
    expect(none.response.status).toBe(200);
    expect(none.data ?? '').toBe('');
  });
});

describe('gIPs', () => {
  it('list, refresh (0.02 USD per IP into pending_costs and the Zone cost), remove', async () => {
    await t.sandbox.reset();
    const { account } = t;
    const vips = (await account.listRouteVips(q(RES))).data as string[];
    expect(vips).toEqual(['us_7922_ny_newyork_1', 'us_7922_ny_newyork_2', 'us_7922_ny_newyork_3']);
    const balance0 = (await account.getBalance({ params: { query: { customer: C } } })).data;
    const cost0 = (await account.getZoneCost(q(RES))).data?.[C]?.back_m0?.cost as number;

    const refreshed = await account.refreshZoneIps({ body: { zone: RES, vips: vips.slice(0, 2) } });
    const list = (refreshed.data as { vips: { vip: string; country: string }[] }).vips;
    expect(list).toHaveLength(3);
    expect(list.every((v) => v.country === 'us')).toBe(true);
    expect(list.map((v) => v.vip)).not.toContain(vips[0]);
    expect(list.map((v) => v.vip)).toContain(vips[2]);
    expect((await account.listRouteVips(q(RES))).data).toEqual(list.map((v) => v.vip));

    const balance1 = (await account.getBalance({ params: { query: { customer: C } } })).data;
    expect(balance1?.pending_costs).toBeCloseTo((balance0?.pending_costs ?? 0) + 0.04, 6);
    expect(balance1?.balance).toBe(balance0?.balance);
    expect((await account.getZoneCost(q(RES))).data?.[C]?.back_m0?.cost).toBeCloseTo(cost0 + 0.04, 6);

    const gone = list[0]?.vip as string;
    expect((await account.removeZoneVips({ body: { zone: RES, vips: [gone] } })).data).toEqual({ vips: [gone] });
    expect((await account.listRouteVips(q(RES))).data).not.toContain(gone);
  });
});

describe('whitelist and domain permissions', () => {
  it('adds and removes client IPs of one Zone, and of all Zones without a zone', async () => {
    await t.sandbox.reset();
    const { account } = t;
    await account.addZoneWhitelistIp({ body: { zone: STATIC, ip: '198.51.100.0/24' } });
    expect((await account.getZoneWhitelist({ params: { query: { zones: STATIC } } })).data?.[STATIC]).toContain('198.51.100.0/24');
    await account.removeZoneWhitelistIp({ body: { zone: STATIC, ip: '198.51.100.0/24' } });
    expect((await account.getZoneWhitelist({ params: { query: { zones: STATIC } } })).data?.[STATIC]).not.toContain('198.51.100.0/24');

    const added = await account.addZoneWhitelistIp({ body: { ip: ['203.0.113.99', '203.0.113.100-203.0.113.110'] } });
    expect(added.response.status).toBe(201);
    const all = (await account.getZoneWhitelist({ params: { query: { zones: '*' } } })).data ?? {};
    expect(Object.keys(all).sort()).toEqual(['dc_zone_2', 'mob_zone', 'old_zone', 'res_zone', 'static_zone']);
    for (const list of Object.values(all)) expect(list).toContain('203.0.113.99');
    await account.removeZoneWhitelistIp({ body: { ip: '203.0.113.99' } });
    for (const list of Object.values((await account.getZoneWhitelist({ params: { query: { zones: '*' } } })).data ?? {})) {
      expect(list).not.toContain('203.0.113.99');
    }
    const bad = await account.addZoneWhitelistIp({ body: { zone: STATIC, ip: 'not-an-ip' } });
    expect(bad.error?.details).toEqual([{ field: 'body.ip', reason: expect.stringMatching(/not an IP/) }]);
  });

  it('adds to and removes from the domain whitelist and blacklist', async () => {
    const { account } = t;
    const w = await account.addZoneDomainPermission({ body: { zone: STATIC, type: 'whitelist', domain: 'shop.example.org' } });
    expect(w.data).toEqual({ whitelist: ['example.com', 'shop.example.org'] });
    const b = await account.addZoneDomainPermission({ body: { zone: STATIC, type: 'blacklist', domain: 'ads.example.net' } });
    expect(b.data).toEqual({ whitelist: ['example.com', 'shop.example.org'], blacklist: ['ads.example.net'] });
    const r = await account.removeZoneDomainPermission({ body: { zone: STATIC, type: 'whitelist', domain: 'example.com' } });
    expect(r.data).toEqual({ whitelist: ['shop.example.org'], blacklist: ['ads.example.net'] });
    const again = await account.removeZoneDomainPermission({ body: { zone: STATIC, type: 'whitelist', domain: 'example.com' } });
    expect(again.response.status).toBe(400);
    expect(again.error?.details?.[0]?.field).toBe('body.domain');
  });
});

describe('reads derived from the seed', () => {
  it('count_available_ips honours the plan filters', async () => {
    await t.sandbox.reset();
    const count = async (plan?: object) =>
      (await t.account.getAvailableIpCount({ params: { query: { customer: C, zone: STATIC, ...(plan ? { plan } : {}) } } })).data
        ?.count as number;
    const shared = await count({ ips_type: 'shared' });
    const selective = await count({ ips_type: 'selective' });
    expect(shared + selective).toBe(await count({}));
    expect(await count()).toBe(shared); // the Zone's own plan: shared
    const us = await count({ country: 'us' });
    const newyork = await count({ country_city: 'us-newyork', city: true });
    expect(newyork).toBeGreaterThan(0);
    expect(newyork).toBeLessThan(us);
    // Google places a few London IPs in Ireland: only a count that asks Google finds them.
    expect(await count({ country: 'ie' })).toBe(0);
    expect(await count({ country: 'ie', geo_db: { google: true } })).toBe(4);
    expect(await count({ country: 'gb', geo_db: { google: true, maxmind: true } })).toBe(await count({ country: 'gb' }));
    expect(await count({ domain_whitelist: 'blocked.example.com other.example' })).toBeLessThan(await count({}));
    // IPs just given back cool down for exclusive_sec.
    const [ip] = (await t.account.addZoneIps({ body: { zone: STATIC, count: 1, country: 'fr' } })).data?.new_ips ?? [];
    await t.account.removeZoneIps({ body: { zone: STATIC, ips: [ip as string] } });
    expect(await count({ country: 'fr', exclusive_sec: '3600' })).toBe((await count({ country: 'fr' })) - 1);
    const resident = await t.account.getAvailableIpCountShortForm({ params: { query: { customer: C, zone: RES } } });
    expect(resident.data?.count).toBe(2 * 12 - 3); // free US gIPs (the plan's vip_country)
  });

  it('request logs: filters, dotted names, pagination and stats', async () => {
    const { account } = t;
    const all = (await account.listRequestLogs({ params: { query: { customer: C, page_size: 1000 } } })).data as Rec[];
    expect(all.length).toBe(60);
    const ok = (await account.listRequestLogs({ params: { query: { customer: C, 'status.code': '200', page_size: 1000 } } })).data as Rec[];
    const seeded200 = all.filter((r) => r.status.code === 200).length;
    expect(seeded200).toBeGreaterThan(0);
    expect(ok).toHaveLength(seeded200);
    expect(ok.every((r) => r.status.code === 200)).toBe(true);
    const host = (await account.listRequestLogs({ params: { query: { 'dst.host': 'example.org', zone: RES, page_size: 1000 } } }))
      .data as Rec[];
    const seededHost = all.filter((r) => r.dst.host === 'example.org' && r.zone === RES).length;
    expect(seededHost).toBeGreaterThan(0);
    expect(host).toHaveLength(seededHost);
    expect(host.every((r) => r.dst.host === 'example.org' && r.zone === RES)).toBe(true);
    const page0 = (await account.listRequestLogs({ params: { query: { page: 0, page_size: 7 } } })).data as unknown[];
    const page1 = (await account.listRequestLogs({ params: { query: { page: 1, page_size: 7 } } })).data as unknown[];
    expect(page0).toEqual(all.slice(0, 7));
    expect(page1).toEqual(all.slice(7, 14));
    const window = (
      await account.listRequestLogs({
        params: { query: { 'ts.from': '2024-05-01T10:00:00Z', 'ts.to': '2024-05-01T20:00:00Z', page_size: 1000 } },
      })
    ).data as Rec[];
    const inWindow = (r: Rec) => r.ts >= '2024-05-01T10:00:00' && r.ts < '2024-05-01T20:00:00';
    const seededWindow = all.filter(inWindow).length;
    expect(seededWindow).toBeGreaterThan(0);
    expect(seededWindow).toBeLessThan(all.length);
    expect(window).toHaveLength(seededWindow);
    expect(window.every(inWindow)).toBe(true);

    const stats = (await account.getRequestLogStats({ params: { query: { status_breakdown: 1 } } })).data;
    expect(stats?.total).toBe(60);
    expect(stats?.success_statuses).toBe(all.filter((r) => r.status.code < 400).length);
    const breakdown = stats?.status_breakdown as Array<{ status: number; count: number }>;
    expect(breakdown.reduce((n, e) => n + e.count, 0)).toBe(60);
    expect(breakdown.find((e) => e.status === 200)?.count).toBe(ok.length);
    const failing = (await account.getRequestLogStats({ params: { query: { 'status.code': '5**' } } })).data;
    expect(failing?.success_statuses).toBe(0);
    expect(failing?.status_breakdown).toBeUndefined();
  });

  it('bandwidth and cost from the seeded usage', async () => {
    const { account } = t;
    const zone = (await account.getZoneBandwidth({ params: { query: { zone: STATIC, details: 1 } } })).data?.[C];
    const series = zone?.data[STATIC] as { bw_sum: number[]; bw_dn: number[]; bw_up: number[] };
    expect(series.bw_sum).toHaveLength(30);
    expect(series.bw_sum.every((v, i) => v === (series.bw_dn[i] ?? 0) + (series.bw_up[i] ?? 0) && v > 0)).toBe(true);
    // Totals per period key: the reference's back_* keys, or `custom` for a from-to period (what clients read).
    expect(Object.keys(zone?.sums?.[STATIC] ?? {})).toEqual(['back_m1', 'back_m0', 'back_d2', 'back_d1', 'back_d0']);
    const period = { from: String(zone?.from).slice(0, 10), to: String(zone?.to).slice(0, 10) };
    const custom = (await account.getZoneBandwidth({ params: { query: { zone: STATIC, ...period } } })).data?.[C]?.sums?.[STATIC]?.custom;
    expect(custom?.bw_sum).toBe(series.bw_sum.reduce((a, b) => a + b, 0));
    const customer = (await account.getCustomerBandwidth({ params: { query: { customer: C } } })).data?.[C];
    expect(Object.keys(customer?.data ?? {})).toContain(RES);
    expect(customer?.data[STATIC]?.bw_sum).toEqual(series?.bw_sum);

    const today = new Date().toISOString().slice(0, 10);
    const from = new Date(Date.now() - 90 * 86_400_000).toISOString().slice(0, 10);
    const cost = (await account.getZoneCost({ params: { query: { zone: STATIC, from, to: today } } })).data?.[C]?.custom;
    const bw = (await account.getZoneBandwidth({ params: { query: { zone: STATIC, from, to: today } } })).data?.[C]?.data[STATIC] as {
      bw_sum: number[];
    };
    const bwSum = bw.bw_sum.slice(0, -1).reduce((a, b) => a + b, 0); // `to` of a cost is exclusive
    expect(cost?.bw).toBe(bwSum);
    expect(cost?.cost).toBeCloseTo((bwSum / 1e9) * 0.6, 5);
  });

  it('recent IPs, peers, balance, network status, cities', async () => {
    const { account } = t;
    expect((await account.listRecentIps({ params: { query: { zones: '*' } } })).data).toMatchObject({
      static_zone: ['203.0.113.7', '203.0.113.8'],
    });
    expect(Object.keys((await account.listRecentIps({ params: { query: { zones: RES } } })).data ?? {})).toEqual([RES]);
    const peers = (await account.listPeers({ params: { query: { country: 'us', asn: '7922' } } })).data as string[];
    const all = (await account.listAllPeers()).data as string[];
    expect(peers.length).toBe(6);
    expect(all.length).toBe(24);
    expect(peers.every((p) => all.includes(p))).toBe(true);
    expect((await account.listPeers({ params: { query: { vip: 'us_7922_ny_newyork_1' } } })).data).toHaveLength(1);
    expect((await account.listPeers({ params: { query: { zone: 'mob_zone' } } })).data).toHaveLength(6);
    expect((await account.getNetworkStatus({ params: { path: { network_type: 'mobile' } } })).data).toEqual({ status: false });
    expect((await account.getNetworkStatus({ params: { path: { network_type: 'res' } } })).data).toEqual({ status: true });
    expect((await account.listCities({ params: { query: { country: 'us' } } })).data?.map((c) => c.name)).toContain('Cherokee');
    expect((await account.listCities({ params: { query: { country: 'zz' } } })).data).toEqual([]);
    expect((await account.getZonePermissions(q(STATIC))).data?.perms).not.toContain('peers_all');
  });
});
