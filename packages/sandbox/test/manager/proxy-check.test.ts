import { describe, expect, it } from 'vitest';
import { Store } from '../../src/domain/state.js';
import { defaultSeed } from '../../src/index.js';
import { MAX_PROBLEMS, proxyCheck, storeScope, zoneNamed } from '../../src/manager/proxy-check.js';

// The real manager's check of a port configuration (proxy-check.ts), as a unit: the side-by-side cases
// against the real manager are in packages/sandbox/test/real-manager/complete-config.test.ts.

/** The built-in seed's store: ports 24000 and 24001; Zones static_zone, res_zone, dc_zone_2, mob_zone, old_zone (disabled). */
const scope = (reserved: number[] = [22999]) => storeScope(new Store(defaultSeed()), reserved);
const msgs = (cfg: Record<string, unknown>, self?: number, selfMultiply?: unknown, reserved?: number[]) =>
  proxyCheck(scope(reserved), cfg, self, selfMultiply).map((p) => `${p.field}: ${p.msg}`);

describe('proxyCheck', () => {
  it('names a Zone by ==: a one-name list names it, a number, an object, "" or null none', () => {
    const s = scope();
    expect(zoneNamed(s.zones, ['res_zone'])?.name).toBe('res_zone');
    for (const zone of [7, { a: 1 }, '', null, undefined, ['res_zone', 'x']]) expect(zoneNamed(s.zones, zone)).toBeUndefined();
    expect(msgs({ zone: 'res_zone' })).toEqual([]);
    expect(msgs({ zone: '' })).toEqual(['zone: the provided zone name is not valid.']);
    expect(msgs({ zone: 'old_zone' })).toEqual(['zone: zone disabled']);
    expect(msgs({})).toEqual([]);
  });

  it("ports: below 1000, in use, the manager's own; the port's own running range does not count", () => {
    expect(msgs({ port: 0 })).toEqual(['port: Invalid port. It must be a number >= 1000']);
    expect(msgs({ port: '999' })).toEqual(['port: Invalid port. It must be a number >= 1000']);
    expect(msgs({ port: 23999, multiply: 2 })).toEqual(['port: port 24000 in use by another proxy']);
    expect(msgs({ port: 23999, multiply: 2 }, 24000)).toEqual([]);
    expect(msgs({ port: 24000, multiply: 3 }, 24000)).toEqual(['port: port 24001 in use by another proxy']);
    expect(msgs({ port: 24000, multiply: 3 }, 24000, 2)).toEqual([]);
    expect(msgs({ port: 22998, multiply: '3' })).toEqual(['port: port 22999 in use by the UI/API and UI/WebSocket']);
  });

  it('bw_limit: bytes and days within bounds, a date start, a boolean use_limit_webhook, a threshold in (0, 100); a crash for what it cannot read', () => {
    expect(msgs({ bw_limit: { bytes: 1, days: 1, start: '2024-05-01', use_limit_webhook: true, th_webhook_value: 50 } })).toEqual([]);
    expect(msgs({ bw_limit: { bytes: '5', days: 1e5, start: 1714521600000, th_webhook_value: '' } })).toEqual([]);
    expect(msgs({ bw_limit: { bytes: -1, days: 1e5 + 1, start: '0000-00-00', use_limit_webhook: 'yes', th_webhook_value: 100 } })).toEqual([
      'bw_limit: Invalid BW limit params, bytes should be positive number no greater than 9007199254740991',
      'bw_limit: Invalid BW limit params, days should be positive number no greater than 100000',
      'bw_limit: Invalid BW limit params, start should be date',
      'bw_limit: Invalid BW limit params, use_limit_webhook should be true or false',
      'bw_limit: Invalid BW limit params, th_webhook_value should be a number between 0 and 99',
    ]);
    expect(msgs({ bw_limit: 0 })).toEqual([]);
    expect(() => msgs({ bw_limit: { bytes: 1, days: 1, start: {} } })).toThrow('invalid date [object Object]');
    expect(() => msgs({ bw_limit: 7 })).toThrow("Cannot use 'in' operator to search for 'use_limit_webhook' in 7");
  });

  it('text fields over 300 characters, each named, after the others in order; at most MAX_PROBLEMS', () => {
    const long = 'x'.repeat(301);
    expect(msgs({ country: 'x'.repeat(300) })).toEqual([]);
    expect(msgs({ a: long, port: 1, zone: 'nope', b: long })).toEqual([
      'port: Invalid port. It must be a number >= 1000',
      'zone: the provided zone name is not valid.',
      'a: Maximum string length exceeded',
      'b: Maximum string length exceeded',
    ]);
    const many = Object.fromEntries(Array.from({ length: MAX_PROBLEMS + 5 }, (_, i) => [`f${i}`, long]));
    expect(msgs(many)).toHaveLength(MAX_PROBLEMS);
  });
});
