import { describe, expect, it } from 'vitest';
import { DomainError } from '../../src/domain/errors.js';
import { countryOf, ipRange, ipRecord, Pools } from '../../src/domain/ips.js';
import { Store } from '../../src/domain/state.js';
import type { PoolGip, PoolIp, PoolState, StoredPlan, ZoneState } from '../../src/domain/types.js';
import { defaultSeed } from '../../src/index.js';

// The IP and gIP pools (src/domain/ips.ts): every allocation, release and refresh goes through
// `Pools`; a refusal is a DomainError naming the items at fault, raised before anything changed.

const ip = (n: number, country: string, shared: boolean, extra: Partial<PoolIp> = {}): PoolIp => ({
  ip: `192.0.2.${n}`,
  country,
  city: 'chicago',
  shared,
  ...extra,
});
const gip = (vip: string): PoolGip => ({ vip, country: vip.slice(0, 2) });

/** A small pool: 1-3 US shared, 4 US dedicated, 5 GB shared (city london), 6 US shared released 10 s ago. */
function pools(now = Date.parse('2026-01-01T00:00:00Z')) {
  const state: PoolState & { touched: string[] } = {
    pool: new Map(
      [
        ip(1, 'us', true, { city: 'newyork' }),
        ip(2, 'us', true, { city: 'new_york' }),
        ip(3, 'us', true, { ext: { dbip: 'ca' } }),
        ip(4, 'us', false),
        ip(5, 'gb', true, { city: 'london', blocked_domains: ['example.com', 'other.org'] }),
        ip(6, 'us', true, { released_at: new Date(now - 10_000).toISOString() }),
      ].map((p) => [p.ip, p]),
    ),
    allocated: new Map(),
    // Two-digit numbers, and other regions (one whose name starts with New York's) between the two New
    // York gIPs: a refresh must look for its own region.
    gipPool: new Map(
      ['us_1_ny_newyork_11', 'us_2_ca_la_11', 'us_1_ny_newyorkcity_11', 'us_1_ny_newyork_12', 'gb_3_en_london_11'].map((v) => [v, gip(v)]),
    ),
    gipAllocated: new Map(),
    account: { pending_costs: 0 },
    charges: [],
    clock: { now: () => now },
    touched: [],
    touch(section) {
      state.touched.push(section);
    },
  };
  return { state, pools: new Pools(state) };
}

const zone = (name: string, plan: Partial<StoredPlan> = {}): ZoneState =>
  ({ name, plans: [{ type: 'static', ips_type: 'shared', ...plan }], ips: [], gips: [] }) as unknown as ZoneState;
const ips = (list: PoolIp[]) => list.map((p) => p.ip);
/** The DomainError `fn` throws, or undefined. */
function refusal(fn: () => unknown): DomainError | undefined {
  try {
    fn();
  } catch (e) {
    if (e instanceof DomainError) return e;
    throw e;
  }
  return undefined;
}

describe('free IPs by filter', () => {
  it('shared or not, country, not-country, city (names compared without case or separators)', () => {
    const { pools: p } = pools();
    expect(ips(p.free({}))).toEqual(['192.0.2.1', '192.0.2.2', '192.0.2.3', '192.0.2.4', '192.0.2.5', '192.0.2.6']);
    expect(ips(p.free({ shared: false }))).toEqual(['192.0.2.4']);
    expect(ips(p.free({ shared: true, country: 'GB' }))).toEqual(['192.0.2.5']);
    expect(ips(p.free({ notCountry: 'US' }))).toEqual(['192.0.2.5']);
    expect(ips(p.free({ countryCity: 'us-New York' }))).toEqual(['192.0.2.1', '192.0.2.2']);
    expect(ips(p.free({ countryCity: 'gb-newyork' }))).toEqual([]);
  });

  it('a location database other than MaxMind reads its own country; any of several matches', () => {
    const { pools: p } = pools();
    expect(ips(p.free({ country: 'ca' }))).toEqual([]);
    expect(ips(p.free({ country: 'ca', geoDb: ['dbip'] }))).toEqual(['192.0.2.3']);
    expect(ips(p.free({ country: 'us', geoDb: ['dbip'] }))).toEqual(['192.0.2.1', '192.0.2.2', '192.0.2.4', '192.0.2.6']);
    expect(ips(p.free({ country: 'ca', geoDb: ['maxmind', 'dbip'] }))).toEqual(['192.0.2.3']);
    expect(countryOf(ip(9, 'us', true, { ext: { google: 'fr' } }), 'google')).toBe('fr');
    expect(countryOf(ip(9, 'us', true), 'ip2location')).toBe('us');
  });

  it('a cooling period leaves out IPs released within it; blocked domains leave out IPs blocked for them', () => {
    const { pools: p } = pools();
    expect(ips(p.free({ exclusiveSec: 11 }))).not.toContain('192.0.2.6');
    expect(ips(p.free({ exclusiveSec: 10 }))).toContain('192.0.2.6');
    expect(ips(p.free({ domains: ['example.com'] }))).not.toContain('192.0.2.5');
    expect(ips(p.free({ domains: ['other.com'] }))).toContain('192.0.2.5');
    // One of its blocked domains is enough.
    expect(ips(p.free({ domains: ['other.org', 'x.test'] }))).not.toContain('192.0.2.5');
  });

  it('free gIPs by country (`any`: all), allocated ones left out', () => {
    const { pools: p } = pools();
    expect(p.freeGips('US').map((g) => g.vip)).toEqual([
      'us_1_ny_newyork_11',
      'us_2_ca_la_11',
      'us_1_ny_newyorkcity_11',
      'us_1_ny_newyork_12',
    ]);
    expect(p.freeGips('any')).toHaveLength(5);
    expect(p.freeGips()).toHaveLength(5);
    const z = zone('res', { type: 'resident' });
    p.allocateGips(z, p.freeGips('gb'));
    expect(z.gips).toEqual(['gb_3_en_london_11']);
    expect(p.freeGips()).toHaveLength(4);
  });
});

describe('allocate and release', () => {
  it("allocate gives the Zone the IPs, counts them in its plan and takes them from the pool's free ones", () => {
    const { state, pools: p } = pools();
    const z = zone('z');
    p.allocate(z, p.free({ country: 'gb' }));
    expect(z.ips).toEqual(['192.0.2.5']);
    expect(z.plans[0]?.ips).toBe(1);
    expect(state.allocated.get('192.0.2.5')).toBe('z');
    expect(ips(p.free({ country: 'gb' }))).toEqual([]);
  });

  it('release gives them back, marked released now (a repeat counts once); the pools are marked changed', () => {
    const { state, pools: p } = pools();
    const z = zone('z');
    p.allocate(z, p.free({ shared: true, country: 'us' }).slice(0, 3));
    p.release(z, ['192.0.2.2', '192.0.2.2']);
    expect(z.ips).toEqual(['192.0.2.1', '192.0.2.3']);
    expect(z.plans[0]?.ips).toBe(2);
    expect(state.allocated.has('192.0.2.2')).toBe(false);
    expect(state.pool.get('192.0.2.2')?.released_at).toBe('2026-01-01T00:00:00.000Z');
    expect(state.touched).toContain('pools');
  });

  it("a resident Zone's plan keeps its own ips count", () => {
    const { pools: p } = pools();
    const z = zone('r', { type: 'resident', ips: 7 });
    p.allocate(z, p.free({ country: 'gb' }));
    expect(z.plans[0]?.ips).toBe(7);
  });

  it('releasing what the Zone does not hold is refused, naming each such item by its index; nothing changes', () => {
    const { state, pools: p } = pools();
    const z = zone('z');
    p.allocate(z, p.free({ shared: false }));
    const e = refusal(() => p.release(z, ['192.0.2.4', '192.0.2.1', '192.0.2.9']));
    expect(e?.problems).toEqual([
      { item: 1, reason: '192.0.2.1 is not an IP of Zone z' },
      { item: 2, reason: '192.0.2.9 is not an IP of Zone z' },
    ]);
    expect(z.ips).toEqual(['192.0.2.4']);
    expect(state.allocated.get('192.0.2.4')).toBe('z');
    expect(state.touched).toEqual([]);
    expect(refusal(() => p.releaseGips(z, ['us_1_ny_newyork_11']))?.problems).toEqual([
      { item: 0, reason: 'us_1_ny_newyork_11 is not a gIP of Zone z' },
    ]);
  });

  it('releaseGips gives gIPs back; releaseAll gives back everything the Zone holds', () => {
    const { state, pools: p } = pools();
    const z = zone('r', { type: 'resident' });
    p.allocateGips(z, p.freeGips('us'));
    p.allocate(z, p.free({ country: 'gb' }));
    p.releaseGips(z, ['us_2_ca_la_11']);
    expect(z.gips).toEqual(['us_1_ny_newyork_11', 'us_1_ny_newyorkcity_11', 'us_1_ny_newyork_12']);
    expect(state.gipAllocated.has('us_2_ca_la_11')).toBe(false);
    expect(state.gipAllocated.get('us_1_ny_newyork_11')).toBe('r');
    p.releaseAll(z);
    expect([z.ips, z.gips]).toEqual([[], []]);
    expect([state.allocated.size, state.gipAllocated.size]).toEqual([0, 0]);
  });
});

describe('refresh', () => {
  it("replaceIps gives each IP a free one in the same country and keeps the Zone's order", () => {
    const { state, pools: p } = pools();
    const z = zone('z');
    p.allocate(z, [state.pool.get('192.0.2.1'), state.pool.get('192.0.2.5')] as PoolIp[]);
    const fresh = p.replaceIps(z, ['192.0.2.1', '192.0.2.1']);
    expect(fresh).toEqual(['192.0.2.2']);
    expect(z.ips).toEqual(['192.0.2.2', '192.0.2.5']);
    expect(state.allocated.get('192.0.2.2')).toBe('z');
    expect(state.allocated.has('192.0.2.1')).toBe(false);
    expect(state.pool.get('192.0.2.1')?.released_at).toBeDefined();
    expect(z.plans[0]?.ips).toBe(2);
  });

  it('replaceIps in a country or a city when asked, and of the same kind (shared or dedicated) as the plan', () => {
    const { state, pools: p } = pools();
    const z = zone('z');
    p.allocate(z, [state.pool.get('192.0.2.1')] as PoolIp[]);
    expect(p.replaceIps(z, ['192.0.2.1'], { country: 'gb' })).toEqual(['192.0.2.5']);
    expect(p.replaceIps(z, ['192.0.2.5'], { countryCity: 'us-newyork' })).toEqual(['192.0.2.1']);
    const d = zone('d', { ips_type: 'dedicated' });
    p.allocate(d, [state.pool.get('192.0.2.2')] as PoolIp[]);
    expect(p.replaceIps(d, ['192.0.2.2'])).toEqual(['192.0.2.4']);
  });

  it('replaceIps with no free IP left is refused with the IP it could not replace, and nothing changes', () => {
    const { state, pools: p } = pools();
    const z = zone('z');
    p.allocate(z, [state.pool.get('192.0.2.5')] as PoolIp[]);
    const e = refusal(() => p.replaceIps(z, ['192.0.2.5']));
    expect(e?.problems).toEqual([{ reason: 'no free IP left to replace 192.0.2.5' }]);
    expect(e?.message).toBe('no free IP left to replace 192.0.2.5');
    expect(z.ips).toEqual(['192.0.2.5']);
    expect(state.allocated.get('192.0.2.5')).toBe('z');
    expect(refusal(() => p.replaceIps(z, ['192.0.2.1']))?.problems).toEqual([{ item: 0, reason: '192.0.2.1 is not an IP of Zone z' }]);
  });

  it('replaceGips prefers the same region, charges the refresh per gIP, once per repeated gIP', () => {
    const { state, pools: p } = pools();
    const z = zone('r', { type: 'resident' });
    p.allocateGips(z, [gip('us_1_ny_newyork_11'), gip('gb_3_en_london_11')]);
    p.replaceGips(z, ['us_1_ny_newyork_11', 'us_1_ny_newyork_11']);
    expect(z.gips).toEqual(['us_1_ny_newyork_12', 'gb_3_en_london_11']);
    expect(state.gipAllocated.get('us_1_ny_newyork_12')).toBe('r');
    expect(state.gipAllocated.has('us_1_ny_newyork_11')).toBe(false);
    expect(state.account.pending_costs).toBeCloseTo(0.02);
    expect(state.charges).toEqual([{ zone: 'r', at: '2026-01-01T00:00:00.000Z', amount: 0.02, reason: 'gip_refresh x1' }]);
    p.replaceGips(z, ['us_1_ny_newyork_12']);
    expect(z.gips[0]).toBe('us_1_ny_newyork_11');
  });

  it('replaceGips takes another region of the country when its own has none; none in the country is refused, nothing charged', () => {
    const { state, pools: p } = pools();
    const z = zone('r', { type: 'resident' });
    p.allocateGips(z, [gip('us_1_ny_newyork_11'), gip('us_1_ny_newyork_12'), gip('gb_3_en_london_11')]);
    p.replaceGips(z, ['us_1_ny_newyork_11']);
    expect(z.gips[0]).toBe('us_2_ca_la_11');
    const before = state.account.pending_costs;
    const e = refusal(() => p.replaceGips(z, ['gb_3_en_london_11']));
    expect(e?.problems).toEqual([{ reason: 'no free gIP left in gb to replace gb_3_en_london_11' }]);
    expect(state.account.pending_costs).toBe(before);
    expect(z.gips).toContain('gb_3_en_london_11');
    expect(refusal(() => p.replaceGips(z, ['us_9_x_y_1']))?.problems).toEqual([{ item: 0, reason: 'us_9_x_y_1 is not a gIP of Zone r' }]);
  });
});

describe('IPs and gIPs the pool does not list (a Zone of an older seed)', () => {
  it('release: no pool entry to mark, the rest as usual', () => {
    const { state, pools: p } = pools();
    const z = zone('z');
    z.ips.push('10.0.0.1');
    p.release(z, ['10.0.0.1']);
    expect(z.ips).toEqual([]);
    expect(state.pool.has('10.0.0.1')).toBe(false);
  });

  it('replaceIps takes any free IP of the kind (a plan without ips_type is shared); replaceGips any free gIP, or names the pool when none', () => {
    const { state, pools: p } = pools();
    const z = zone('z', { ips_type: undefined });
    z.ips.push('10.0.0.1');
    expect(p.replaceIps(z, ['10.0.0.1'])).toEqual(['192.0.2.1']);
    const r = zone('r', { type: 'resident' });
    r.gips.push('xx_0_old_1');
    p.replaceGips(r, ['xx_0_old_1']);
    expect(r.gips).toEqual(['us_1_ny_newyork_11']);
    p.allocateGips(zone('other'), p.freeGips());
    r.gips.push('yy_0_old_1');
    expect(refusal(() => p.replaceGips(r, ['yy_0_old_1']))?.problems).toEqual([
      { reason: 'no free gIP left in the pool to replace yy_0_old_1' },
    ]);
    expect(state.gipAllocated.get('us_1_ny_newyork_11')).toBe('r');
  });
});

describe('ranges and records', () => {
  it('ipRange: a subnet when the IPs are exactly one, else first-last; empty for none', () => {
    expect(ipRange([])).toBe('');
    expect(ipRange(['192.0.2.4', '192.0.2.5', '192.0.2.6', '192.0.2.7'])).toBe('192.0.2.4/30');
    expect(ipRange(['192.0.2.9'])).toBe('192.0.2.9/32');
    expect(ipRange(['192.0.2.5', '192.0.2.6', '192.0.2.7', '192.0.2.8'])).toBe('192.0.2.5-192.0.2.8');
    expect(ipRange(['192.0.2.4', '192.0.2.5', '192.0.2.7'])).toBe('192.0.2.4-192.0.2.7');
    // In any order; three in a row are no subnet even where the first is a multiple of three.
    expect(ipRange(['192.0.2.7', '192.0.2.4', '192.0.2.6', '192.0.2.5'])).toBe('192.0.2.4/30');
    expect(ipRange(['192.0.2.1', '192.0.2.2', '192.0.2.3'])).toBe('192.0.2.1-192.0.2.3');
  });

  it("ipRecord: the pool's countries per location database, `us` for an IP not in the pool", () => {
    const { state } = pools();
    expect(ipRecord(state, '192.0.2.3')).toEqual({ ip: '192.0.2.3', maxmind: 'us', ext: { dbip: 'ca', ip2location: 'us', google: 'us' } });
    expect(ipRecord(state, '192.0.2.5')).toEqual({ ip: '192.0.2.5', maxmind: 'gb', ext: { dbip: 'gb', ip2location: 'gb', google: 'gb' } });
    expect(ipRecord(state, '10.0.0.1')).toEqual({ ip: '10.0.0.1', maxmind: 'us', ext: { dbip: 'us', ip2location: 'us', google: 'us' } });
  });
});

describe('the Store owns its pools', () => {
  it("deleteZone gives the Zone's IPs and gIPs back through its pools", () => {
    const s = new Store(defaultSeed());
    const res = s.zones.get('res_zone') as ZoneState;
    const stat = s.zones.get('static_zone') as ZoneState;
    const held = [...stat.ips];
    s.deleteZone(stat);
    s.deleteZone(res);
    for (const i of held) expect(s.allocated.has(i)).toBe(false);
    expect([...s.gipAllocated.values()]).not.toContain('res_zone');
    expect(s.pools.free({}).map((p) => p.ip)).toEqual(expect.arrayContaining(held));
  });
});
