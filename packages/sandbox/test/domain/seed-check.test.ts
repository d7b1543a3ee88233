import { loadBundle } from '@zone-api/spec/model';
import { describe, expect, it } from 'vitest';
import { validateSeed } from '../../src/domain/seed-check.js';
import type { StateData } from '../../src/domain/types.js';
import { defaultSeed } from '../../src/index.js';

// What a seed or a saved state must be before a Store takes it: each kind of problem named by its JSON
// path, all of them in one message, the first 30 when there are more.

const docs = { account: loadBundle('account'), manager: loadBundle('manager') };

/** The problems validateSeed names for `data` (its message's lines after the first), or [] when it passes. */
function problems(data: unknown, source?: string, specs = docs): string[] {
  try {
    validateSeed(data, specs, source);
    return [];
  } catch (err) {
    const [head, ...lines] = (err as Error).message.split('\n');
    expect(head).toBe(`Invalid ${source ?? 'seed'}:`);
    return lines.map((l) => {
      expect(l.startsWith('  ')).toBe(true);
      return l.slice(2);
    });
  }
}

const fresh = (): StateData => defaultSeed();

describe('validateSeed', () => {
  it('takes the built-in seed as it is', () => {
    expect(problems(fresh())).toEqual([]);
  });

  it('names a schema error by its path, an unknown field by its name, and says whose data it is', () => {
    const data = fresh() as unknown as { account: Record<string, unknown>; extra?: number };
    data.extra = 1;
    expect(problems(data, 'seed file s.json')).toEqual(['/ must NOT have additional properties (extra)']);
    const wrong = fresh();
    (wrong.account as { balance: unknown }).balance = 'lots';
    expect(problems(wrong)).toEqual(['/account/balance must be number']);
    expect(problems(null)).toEqual(['/ must be object']);
  });

  it('names IPs and gIPs listed twice in the pools, and a Zone, an allocation, a token or a port twice', () => {
    const data = fresh();
    const [ip] = data.pools.ips;
    const [gip] = data.pools.gips;
    if (!ip || !gip) throw new Error('the seed has pools');
    data.pools.ips.push({ ...ip });
    data.pools.gips.push({ ...gip });
    const zones = data.account.zones;
    const [staticZone, resZone] = zones;
    if (!staticZone || !resZone) throw new Error('the seed has Zones');
    zones.push({ ...staticZone, ips: [], gips: [] });
    const heldIp = staticZone.ips[0] as string;
    const heldGip = resZone.gips[0] as string;
    staticZone.ips.push(heldIp);
    resZone.gips.push(heldGip);
    data.account.tokens.push({ ...(data.account.tokens[0] as StateData['account']['tokens'][number]) });
    data.manager.ports.push({ port: 24000 });
    const last = zones.length - 1;
    expect(problems(data)).toEqual([
      `/pools/ips: ${ip.ip} is listed twice`,
      `/pools/gips: ${gip.vip} is listed twice`,
      `/account/zones/0/ips: ${heldIp} is allocated twice`,
      `/account/zones/1/gips: ${heldGip} is allocated twice`,
      `/account/zones/${last}: Zone ${staticZone.name} is listed twice`,
      `/account/tokens/${data.account.tokens.length - 1}: the token is listed twice`,
      `/manager/ports/2: port 24000 is listed twice`,
    ]);
  });

  it('names an allocated IP or gIP the pools do not list', () => {
    const data = fresh();
    data.account.zones[0]?.ips.push('203.0.113.77');
    data.account.zones[1]?.gips.push('zz_0_nowhere_1');
    expect(problems(data)).toEqual([
      '/account/zones/0/ips: 203.0.113.77 is not in /pools/ips',
      '/account/zones/1/gips: zz_0_nowhere_1 is not in /pools/gips',
    ]);
  });

  it("holds a plan to the account spec's StoredPlan and a HAR entry to the manager spec's HarEntry", () => {
    const data = fresh();
    (data.account.zones[1]?.plans[0] as { type: unknown }).type = 5;
    (data.manager.har[3] as { request: { method: unknown } }).request.method = 7;
    const expected = [
      '/account/zones/1/plans/0: /type must be string',
      '/manager/har/3: /request/method must be string (HarEntry of the manager spec)',
    ];
    expect(problems(data)).toEqual(expected);
    // Another copy of the bundles: their schemas are compiled again, from them (the checks are kept per bundle object).
    const copies = { account: structuredClone(docs.account), manager: structuredClone(docs.manager) };
    expect(problems(data, undefined, copies)).toEqual(expected);
    expect(problems(fresh(), undefined, copies)).toEqual([]);
  });

  it('a logged URL must be absolute, or host:port for a CONNECT', () => {
    const data = fresh();
    const get = data.manager.har[0] as { request: { method: string; url: string } };
    const connect = data.manager.har[1] as { request: { method: string; url: string } };
    get.request.url = '/relative';
    connect.request.method = 'CONNECT';
    connect.request.url = 'no port';
    expect(problems(data)).toEqual([
      '/manager/har/0/request/url: "/relative" is not an absolute URL',
      '/manager/har/1/request/url: "no port" is not an absolute URL nor host:port',
    ]);
    connect.request.url = 'example.com:443';
    get.request.url = 'http://example.com/a';
    expect(problems(data)).toEqual([]);
  });

  it("the manager's customer must be the account's", () => {
    const data = fresh();
    data.manager.settings.customer = 'hl_someone';
    expect(problems(data)).toEqual([`/manager/settings/customer: must be the account's customer ${data.account.customer}`]);
  });

  it('every Zone named outside /account/zones must exist: usage, request logs, charges, peers, ports and the default Zone', () => {
    const data = fresh();
    // Two names of the missing Zone in each section (the message counts the rest of the section).
    data.usage = [
      { zone: 'gone', days_ago: 1, bw_dn: 1, bw_up: 1 },
      { zone: 'gone', days_ago: 2, bw_dn: 1, bw_up: 1 },
    ];
    data.req_logs = data.req_logs.slice(0, 2).map((r) => ({ ...r, zone: 'gone' }));
    data.charges = [
      { zone: 'gone', at: '2024-05-01T00:00:00Z', amount: 1, reason: 'a' },
      { zone: 'gone', at: '2024-05-02T00:00:00Z', amount: 1, reason: 'b' },
      { zone: 'gone', at: '2024-05-03T00:00:00Z', amount: 1, reason: 'c' },
    ];
    data.peers = [
      { ip: '198.18.0.1', country: 'us', asn: '1', zone: 'gone' },
      { ip: '198.18.0.2', country: 'us', asn: '1' },
      { ip: '198.18.0.3', country: 'us', asn: '1', zone: 'gone' },
    ];
    data.manager.ports = [{ port: 24000, zone: 'gone' }, { port: 24001 }, { port: 24002, zone: 'gone' }];
    data.manager.settings.zone = 'gone';
    const known = data.account.zones.map((z) => z.name).join(', ');
    const hint = `Zone gone does not exist in /account/zones (${known}); if you renamed it there, rename it here too`;
    const elsewhere = [
      `/usage/0/zone and 1 more of /usage: ${hint}`,
      `/req_logs/0/zone and 1 more of /req_logs: ${hint}`,
      `/charges/0/zone and 2 more of /charges: ${hint}`,
      `/peers/0/zone and 1 more of /peers: ${hint}`,
    ];
    expect(problems(data)).toEqual([
      ...elsewhere,
      `/manager/ports/0/zone and 1 more of /manager/ports: ${hint}`,
      `/manager/settings/zone: ${hint}`,
    ]);
    // One name alone is named by its path.
    data.usage = data.usage.slice(0, 1);
    expect(problems(data)[0]).toBe(`/usage/0/zone: ${hint}`);
    data.usage = [...data.usage, { zone: 'gone', days_ago: 2, bw_dn: 1, bw_up: 1 }];
    // A state the sandbox saved may keep ports and a default Zone naming a deleted Zone; the rest may not.
    const saved = { ...data, format: 'zone-api-sandbox-state' as const, version: 1 as const };
    expect(problems(saved, 'data file')).toEqual(elsewhere);
  });

  it('an account without Zones may name any default Zone (there is none to name), but no port Zone', () => {
    const data = fresh();
    data.account.zones = [];
    data.pools.ips = data.pools.ips.slice(0, 1);
    data.pools.gips = [];
    data.usage = [];
    data.req_logs = [];
    data.charges = [];
    data.peers = [];
    data.manager.ports = [{ port: 24000, zone: 'static_zone' }];
    expect(problems(data)).toEqual([
      '/manager/ports/0/zone: Zone static_zone does not exist in /account/zones (none); if you renamed it there, rename it here too',
    ]);
    data.manager.ports = [{ port: 24000 }];
    expect(problems(data)).toEqual([]);
  });

  it('names at most 30 problems', () => {
    const data = fresh();
    for (let i = 0; i < 40; i++) data.manager.ports.push({ port: 24000 });
    const found = problems(data);
    expect(found).toHaveLength(30);
    expect(found[0]).toBe('/manager/ports/2: port 24000 is listed twice');
    expect(found[29]).toBe('/manager/ports/31: port 24000 is listed twice');
    const schema = fresh() as unknown as { pools: { ips: unknown[] } };
    schema.pools.ips = Array.from({ length: 40 }, () => ({ nope: 1 }));
    expect(problems(schema)).toHaveLength(30);
  });
});
