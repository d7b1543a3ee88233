import { describe, expect, it } from 'vitest';
import { RES, STATIC, useSandbox } from '../helpers.js';

// The pools refuse a change as the domain (a DomainError naming the item of the list it was given);
// each handler names the request field it came from: `body.ips[2]`, `body.vips[0]`, or the field
// whose request could not be met. A refused change leaves the state as it was.
const t = useSandbox();

describe('pool refusals name the request field', () => {
  it('removeZoneIps: the item at fault by its index in the body as sent (a repeated IP counts in place)', async () => {
    const before = t.sandbox.state();
    const res = await t.account.removeZoneIps({ body: { zone: STATIC, ips: ['192.0.2.21', '192.0.2.21', '10.9.9.9'] } });
    expect(res.response.status).toBe(400);
    expect(res.error?.details).toEqual([{ field: 'body.ips[2]', reason: '10.9.9.9 is not an IP of Zone static_zone' }]);
    expect(t.sandbox.state()).toEqual(before);
  });

  it('a list of many bad items: the first 50 are named, within the 100 details the spec allows', async () => {
    const ips = Array.from({ length: 300 }, (_, i) => `10.8.${i >> 8}.${i & 255}`);
    const res = await t.account.removeZoneIps({ body: { zone: STATIC, ips } });
    expect(res.response.status).toBe(400);
    expect(res.error?.details).toHaveLength(50);
    expect(res.error?.details?.[0]).toEqual({ field: 'body.ips[0]', reason: '10.8.0.0 is not an IP of Zone static_zone' });
    expect(res.error?.details?.[49]?.field).toBe('body.ips[49]');
  });

  it('removeZoneVips and a gIP refresh: the gIP at fault in body.vips', async () => {
    const before = t.sandbox.state();
    const removed = await t.account.removeZoneVips({ body: { zone: RES, vips: ['us_7922_ny_newyork_1', 'gb_0_x_y_1'] } });
    expect(removed.error?.details).toEqual([{ field: 'body.vips[1]', reason: 'gb_0_x_y_1 is not a gIP of Zone res_zone' }]);
    const refreshed = await t.account.refreshZoneIps({ body: { zone: RES, vips: ['gb_0_x_y_1'] } });
    expect(refreshed.response.status).toBe(400);
    expect(refreshed.error?.details).toEqual([{ field: 'body.vips[0]', reason: 'gb_0_x_y_1 is not a gIP of Zone res_zone' }]);
    expect(t.sandbox.state()).toEqual(before);
  });

  it('a refresh the pool cannot meet names body.ips, or the body when it named no IPs; nothing is released', async () => {
    const before = t.sandbox.state();
    const some = await t.account.refreshZoneIps({ body: { zone: STATIC, ips: ['192.0.2.22'], country: 'zz' } });
    expect(some.response.status).toBe(400);
    expect(some.error?.details).toEqual([{ field: 'body.ips', reason: 'no free IP left to replace 192.0.2.22' }]);
    const all = await t.account.refreshZoneIps({ body: { zone: STATIC, country: 'zz' } });
    expect(all.error?.details).toEqual([{ field: 'body', reason: 'no free IP left to replace 192.0.2.21' }]);
    expect(t.sandbox.state()).toEqual(before);
  });

  it("the manager's refreshIps: its text error names body.ips[i]", async () => {
    const res = await t.manager.refreshIps({ body: { zone: STATIC, ips: ['192.0.2.21', '192.0.2.200'] } });
    expect(res.response.status).toBe(400);
    expect(res.error).toMatchObject({ kind: 'text', error: 'Invalid request: body.ips[1] 192.0.2.200 is not an IP of Zone static_zone' });
    expect(t.sandbox.state().account.zones.find((z) => z.name === STATIC)?.ips).toContain('192.0.2.21');
  });
});
