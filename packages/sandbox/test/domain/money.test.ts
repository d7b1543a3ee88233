import { describe, expect, it } from 'vitest';
import { seed } from '../../src/control/seed-builder.js';
import { bill } from '../../src/domain/billing.js';
import { costOf, GIP_REFRESH_COST, money, PRICE_PER_GB, pricePerGb } from '../../src/domain/money.js';
import { defaultSeed } from '../../src/domain/seed.js';
import { Store } from '../../src/domain/state.js';

// Money has one home (src/domain/money.ts): prices by plan, the refresh cost, one rounding rule.

describe('money', () => {
  it('prices traffic by the plan: static, residential, mobile, unlimited bandwidth', () => {
    expect(pricePerGb({ type: 'static', bandwidth: 'payperusage' })).toBe(PRICE_PER_GB.static);
    expect(pricePerGb({ type: 'resident', bandwidth: 'payperusage' })).toBe(PRICE_PER_GB.resident);
    expect(pricePerGb({ type: 'resident', bandwidth: 'payperusage', mobile: true })).toBe(PRICE_PER_GB.mobile);
    expect(pricePerGb({ type: 'static', bandwidth: 'unlimited' })).toBe(PRICE_PER_GB.unlimited);
    expect(new Set(Object.values(PRICE_PER_GB)).size).toBe(4);
    // A Zone without a plan pays the residential price.
    expect(pricePerGb(undefined)).toBe(PRICE_PER_GB.resident);
  });

  it('the built-in seed and the seed builder price each Zone by its plan, not by a copy of the prices', () => {
    const zones = new Map(defaultSeed().account.zones.map((z) => [z.name, z.price_per_gb]));
    expect(zones.get('static_zone')).toBe(PRICE_PER_GB.static);
    expect(zones.get('res_zone')).toBe(PRICE_PER_GB.resident);
    expect(zones.get('mob_zone')).toBe(PRICE_PER_GB.mobile);
    expect(zones.get('dc_zone_2')).toBe(PRICE_PER_GB.unlimited);
    const built = seed()
      .zone('dc', { plan: { type: 'static', ips_type: 'shared', bandwidth: 'payperusage' } })
      .zone('fixed', { price_per_gb: 1.5 })
      .build();
    const byName = new Map(built.account.zones.map((z) => [z.name, z.price_per_gb]));
    expect(byName.get('dc')).toBe(PRICE_PER_GB.static);
    expect(byName.get('fixed')).toBe(1.5);
  });

  it('costs bytes per 10^9 and rounds only what is shown, to the micro-dollar', () => {
    expect(costOf(2e9, 0.6)).toBeCloseTo(1.2, 12);
    expect(money(0.1 + 0.2)).toBe(0.3);
    expect(money(1.2345674)).toBe(1.234567);
    expect(money(3 * GIP_REFRESH_COST)).toBe(0.06);
  });

  it('a thousand requests of 1 kB each are billed in full, though each costs less than a micro-dollar', () => {
    const store = new Store(defaultSeed());
    const zone = store.zones.get('static_zone');
    expect(zone).toBeDefined();
    if (!zone) return;
    const before = store.account.pending_costs;
    const one = { zone, clientIp: '203.0.113.7', session: '', ua: '', host: 'example.com', url: '/', status: 200, message: 'OK' };
    for (let i = 0; i < 1000; i++) bill(store, { ...one, up: 500, down: 500 }, store.clock.now());
    expect(costOf(1000, PRICE_PER_GB.static)).toBeLessThan(1e-6);
    expect(money(store.account.pending_costs - before)).toBe(money(costOf(1e6, PRICE_PER_GB.static)));
    expect(store.account.pending_costs - before).toBeGreaterThan(5e-4);
  });
});
