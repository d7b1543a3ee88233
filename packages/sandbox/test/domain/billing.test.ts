import { describe, expect, it } from 'vitest';
import { bill, REQ_LOG_LIMIT, type Usage } from '../../src/domain/billing.js';
import { costOf } from '../../src/domain/money.js';
import { defaultSeed } from '../../src/domain/seed.js';
import { dayString, Store } from '../../src/domain/state.js';

// What one request through the network leaves in the account API's state (src/domain/billing.ts): the day's
// usage row of its Zone, a request log record, the cost pending, the Zone's recent client addresses.

const DAY = 86_400_000;

function setUp() {
  const store = new Store(defaultSeed());
  const zone = store.zones.get('static_zone');
  const other = store.zones.get('res_zone');
  if (!zone || !other) throw new Error('the default seed has static_zone and res_zone');
  const usage = (over: Partial<Usage> = {}): Usage => ({
    zone,
    clientIp: '203.0.113.7',
    session: 's1',
    ua: 'agent/1',
    host: 'example.com',
    url: 'http://example.com/a',
    status: 200,
    message: 'OK',
    up: 100,
    down: 900,
    ...over,
  });
  return { store, zone, other, usage };
}

describe('bill', () => {
  it("adds to the day's usage row of the Zone, found rather than added again; another day or Zone has a row of its own", () => {
    const { store, zone, other, usage } = setUp();
    const now = store.clock.now();
    const rowsOf = (name: string) => store.usage.filter((r) => r.zone === name);
    const before = rowsOf(zone.name).length;
    const hadToday = rowsOf(zone.name).some((r) => r.date === dayString(now));
    bill(store, usage(), now);
    bill(store, usage({ up: 5, down: 7 }), now + 1);
    const today = rowsOf(zone.name).filter((r) => r.date === dayString(now));
    expect(today).toHaveLength(1);
    expect(rowsOf(zone.name)).toHaveLength(hadToday ? before : before + 1);
    expect(today[0]).toMatchObject({ bw_up: expect.any(Number), bw_dn: expect.any(Number) });
    const { bw_up, bw_dn } = today[0] as { bw_up: number; bw_dn: number };
    bill(store, usage({ up: 1, down: 2 }), now + 2);
    expect(rowsOf(zone.name).filter((r) => r.date === dayString(now))).toEqual([{ ...today[0], bw_up: bw_up + 1, bw_dn: bw_dn + 2 }]);
    // The next day: a row of its own, this request's bytes only.
    bill(store, usage({ up: 3, down: 4 }), now + DAY);
    expect(rowsOf(zone.name).filter((r) => r.date === dayString(now + DAY))).toEqual([
      { zone: zone.name, date: dayString(now + DAY), bw_up: 3, bw_dn: 4 },
    ]);
    // Another Zone the same day: its own row.
    const otherBefore = rowsOf(other.name)
      .filter((r) => r.date === dayString(now))
      .map((r) => ({ ...r }));
    bill(store, usage({ zone: other, up: 10, down: 20 }), now);
    const otherToday = rowsOf(other.name).filter((r) => r.date === dayString(now));
    expect(otherToday).toHaveLength(1);
    expect(otherToday[0]).toMatchObject({ bw_up: (otherBefore[0]?.bw_up ?? 0) + 10, bw_dn: (otherBefore[0]?.bw_dn ?? 0) + 20 });
    expect(rowsOf(zone.name).filter((r) => r.date === dayString(now))[0]).toMatchObject({ bw_up: bw_up + 1, bw_dn: bw_dn + 2 });
  });

  it('logs the request as a record of its Zone, and adds its cost to what is pending', () => {
    const { store, zone, usage } = setUp();
    const now = store.clock.now();
    const pending = store.account.pending_costs;
    bill(store, usage(), now);
    expect(store.reqLogs.at(-1)).toEqual({
      zone: zone.name,
      ts: new Date(now).toISOString(),
      status: { code: 200, message: 'OK' },
      tun: { session: 's1' },
      ua: 'agent/1',
      dst: { host: 'example.com', url: 'http://example.com/a' },
      bw: 1000,
      ip: '203.0.113.7',
    });
    expect(store.account.pending_costs - pending).toBeCloseTo(costOf(1000, zone.price_per_gb), 15);
    expect(store.account.pending_costs).toBeGreaterThan(pending);
  });

  it('keeps the newest REQ_LOG_LIMIT request records, the oldest going first', () => {
    const { store, usage } = setUp();
    const now = store.clock.now();
    store.reqLogs.length = 0;
    for (let i = 0; i < REQ_LOG_LIMIT + 5; i++) bill(store, usage({ url: `http://example.com/${i}` }), now);
    expect(store.reqLogs).toHaveLength(REQ_LOG_LIMIT);
    expect(store.reqLogs[0]?.dst.url).toBe('http://example.com/5');
    expect(store.reqLogs.at(-1)?.dst.url).toBe(`http://example.com/${REQ_LOG_LIMIT + 4}`);
  });

  it("keeps the Zone's 20 most recent client addresses, the newest first, each once", () => {
    const { store, zone, usage } = setUp();
    const now = store.clock.now();
    zone.recent_ips = [];
    for (let i = 0; i < 25; i++) bill(store, usage({ clientIp: `198.51.100.${i}` }), now);
    expect(zone.recent_ips).toEqual(Array.from({ length: 20 }, (_, i) => `198.51.100.${24 - i}`));
    // An address seen again moves to the front, once.
    bill(store, usage({ clientIp: '198.51.100.10' }), now);
    expect(zone.recent_ips[0]).toBe('198.51.100.10');
    expect(zone.recent_ips.filter((ip) => ip === '198.51.100.10')).toHaveLength(1);
    expect(zone.recent_ips).toHaveLength(20);
    expect(zone.recent_ips.slice(1, 4)).toEqual(['198.51.100.24', '198.51.100.23', '198.51.100.22']);
  });

  it('marks the usage and the request logs changed, for the data file', () => {
    const { store, usage } = setUp();
    store.sectionsJson(true);
    const touched = () =>
      store
        .sectionsJson(false)
        .map(([name]) => name)
        .filter((name) => name === 'usage' || name === 'req_logs');
    expect(touched()).toEqual([]);
    bill(store, usage(), store.clock.now());
    expect(touched().sort()).toEqual(['req_logs', 'usage']);
  });
});
