import { describe, expect, it } from 'vitest';
import { banKey, dayString, Store, TOUCHED_SECTIONS } from '../../src/domain/state.js';
import type { ProxyPortConfig, StateData } from '../../src/domain/types.js';
import { defaultSeed } from '../../src/index.js';

// The Store as the data file and the handlers see it: what a load builds, which sections a journal
// record holds (sectionsJson), what deleting a Zone takes with it, and the state's copies.

const NOW = Date.UTC(2024, 4, 10, 15, 30);
const sectionNames = (out: [string, string][]) => out.map(([name]) => name);
const section = (out: [string, string][], name: string) => {
  const found = out.filter(([n]) => n === name);
  expect(found, name).toHaveLength(1);
  return JSON.parse((found[0] as [string, string])[1]);
};

describe('dayString', () => {
  it('is the UTC day, daysAgo days before, and today without them', () => {
    expect(dayString(NOW)).toBe('2024-05-10');
    expect(dayString(NOW, 0)).toBe('2024-05-10');
    expect(dayString(NOW, 1)).toBe('2024-05-09');
    expect(dayString(NOW, 10)).toBe('2024-04-30');
    // Late in the UTC day, whatever the local zone.
    expect(dayString(Date.UTC(2024, 0, 1, 23, 59, 59))).toBe('2024-01-01');
    expect(dayString(Date.UTC(2024, 0, 1), -1)).toBe('2024-01-02');
  });
});

describe('Store.load', () => {
  it('indexes Zones, credentials, pools and who holds each IP and gIP', () => {
    const seed = defaultSeed();
    const s = new Store(seed);
    expect([...s.zones.keys()]).toEqual(seed.account.zones.map((z) => z.name));
    expect([...s.tokens.keys()]).toEqual(seed.account.tokens.map((t) => t.token));
    expect(s.tokens.size).toBeGreaterThan(0);
    expect([...s.basic.keys()]).toEqual(seed.account.basic.map((b) => `${b.username}:${b.password}`));
    expect(s.basic.size).toBeGreaterThan(0);
    expect([...s.pool.keys()]).toEqual(seed.pools.ips.map((p) => p.ip));
    expect([...s.gipPool.keys()]).toEqual(seed.pools.gips.map((g) => g.vip));
    const held = seed.account.zones.flatMap((z) => z.ips.map((ip) => [ip, z.name]));
    const heldG = seed.account.zones.flatMap((z) => z.gips.map((vip) => [vip, z.name]));
    expect(held.length).toBeGreaterThan(0);
    expect(heldG.length).toBeGreaterThan(0);
    expect([...s.allocated]).toEqual(held);
    expect([...s.gipAllocated]).toEqual(heldG);
    expect([...s.ports.keys()]).toEqual(seed.manager.ports.map((p) => p.port));
    expect(s.activeBans(24000).map((b) => [b.ip, b.domain])).toEqual([['192.0.2.10', 'example.com']]);
    // The account without its indexed lists; the manager without ports and bans.
    expect(Object.keys(s.account)).not.toEqual(expect.arrayContaining(['zones']));
    expect(s.account).not.toHaveProperty('zones');
    expect(s.account).not.toHaveProperty('tokens');
    expect(s.account).not.toHaveProperty('basic');
    expect(s.account.customer).toBe(seed.account.customer);
    expect(s.manager).not.toHaveProperty('ports');
    expect(s.manager).not.toHaveProperty('bans');
    expect(s.manager.settings).toEqual(seed.manager.settings);
    expect(s.cities).toEqual(seed.cities);
    expect(s.peers).toEqual(seed.peers);
    expect(s.networkStatus).toEqual(seed.network_status);
    expect(s.reqLogs).toEqual(seed.req_logs);
    expect(s.charges).toEqual(seed.charges);
  });

  it('turns a seed day given as days_ago into a date once, relative to the load; a date stays', () => {
    const seed = defaultSeed();
    seed.usage = [
      { zone: 'static_zone', days_ago: 3, bw_dn: 1, bw_up: 2 },
      { zone: 'static_zone', date: '2020-02-02', bw_dn: 3, bw_up: 4 },
      { zone: 'static_zone', bw_dn: 5, bw_up: 6 },
    ];
    const s = new Store(seed);
    s.load(seed, NOW);
    expect(s.usage).toEqual([
      { zone: 'static_zone', date: '2024-05-07', bw_dn: 1, bw_up: 2 },
      { zone: 'static_zone', date: '2020-02-02', bw_dn: 3, bw_up: 4 },
      { zone: 'static_zone', date: '2024-05-10', bw_dn: 5, bw_up: 6 },
    ]);
    // By default, relative to the store's own clock.
    const t = new Store(seed);
    expect(t.usage[0]?.date).toBe(dayString(t.clock.now(), 3));
  });

  it('copies the data unless told to adopt it', () => {
    const seed = defaultSeed();
    const copied = new Store(seed);
    expect(copied.reqLogs).not.toBe(seed.req_logs);
    expect(copied.zones.get('static_zone')).not.toBe(seed.account.zones[0]);
    copied.zones.get('static_zone')?.ips.push('203.0.113.99');
    expect(seed.account.zones[0]?.ips).not.toContain('203.0.113.99');
    // load() copies too, unless told to adopt.
    const other = defaultSeed();
    copied.load(other);
    other.req_logs.length = 0;
    expect(copied.reqLogs.length).toBeGreaterThan(0);
    copied.load(other, undefined, true);
    expect(copied.reqLogs).toBe(other.req_logs);
    const adopted = new Store(seed, true);
    expect(adopted.reqLogs).toBe(seed.req_logs);
    expect(adopted.zones.get('static_zone')).toBe(seed.account.zones[0]);
    expect(adopted.ports.get(24000)).toBe(seed.manager.ports[0]);
  });

  it('replaces everything: nothing of the state before stays, and every section is written again', () => {
    const s = new Store(defaultSeed());
    s.sectionsJson(true);
    const other: StateData = defaultSeed();
    other.account.zones = other.account.zones.filter((z) => z.name === 'dc_zone_2');
    other.account.tokens = [];
    other.account.basic = [];
    other.manager.ports = [];
    other.manager.bans = [];
    s.putPort({ port: 24999 } as ProxyPortConfig);
    s.load(other);
    expect([...s.zones.keys()]).toEqual(['dc_zone_2']);
    expect(s.tokens.size).toBe(0);
    expect(s.basic.size).toBe(0);
    expect([...s.allocated.values()]).toEqual(other.account.zones[0]?.ips.map(() => 'dc_zone_2'));
    expect(s.allocated.size).toBe(2);
    expect(s.gipAllocated.size).toBe(0);
    expect(s.ports.size).toBe(0);
    expect(s.bans.size).toBe(0);
    expect(sectionNames(s.sectionsJson(false))).toEqual(expect.arrayContaining([...TOUCHED_SECTIONS]));
  });
});

describe('Store.sectionsJson: what a journal record holds', () => {
  it('every section at first; then the small ones always and the large ones only when touched', () => {
    const s = new Store(defaultSeed());
    const first = s.sectionsJson(false);
    const all = [
      'format',
      'version',
      'account',
      'pools',
      'cities',
      'peers',
      'network_status',
      'req_logs',
      'usage',
      'charges',
      'manager',
      'port_order',
      'har',
    ];
    expect(sectionNames(first).filter((n) => !n.startsWith('port:'))).toEqual(all);
    const small = all.filter((n) => !(TOUCHED_SECTIONS as readonly string[]).includes(n));
    expect(sectionNames(s.sectionsJson(false)).filter((n) => !n.startsWith('port:'))).toEqual(small);
    s.touch('usage');
    s.touch('har');
    expect(sectionNames(s.sectionsJson(false)).filter((n) => !n.startsWith('port:'))).toEqual([
      ...small.slice(0, small.indexOf('charges')),
      'usage',
      'charges',
      'manager',
      'port_order',
      'har',
    ]);
    // Marks are cleared by the record that wrote them.
    expect(sectionNames(s.sectionsJson(false))).not.toContain('usage');
    // `all`: everything, marked or not.
    expect(sectionNames(s.sectionsJson(true)).filter((n) => !n.startsWith('port:'))).toEqual(all);
  });

  it('each section is the state as JSON: the HAR log apart from the manager, the bans in it, the ports in order', () => {
    const seed = defaultSeed();
    const s = new Store(seed);
    s.manager.har = [{ marker: 1 } as never];
    const out = s.sectionsJson(true);
    expect(section(out, 'format')).toBe('zone-api-sandbox-state');
    expect(section(out, 'version')).toBe(1);
    const account = section(out, 'account');
    expect(account.zones.map((z: { name: string }) => z.name)).toEqual(seed.account.zones.map((z) => z.name));
    expect(account.tokens).toEqual(seed.account.tokens);
    expect(account.basic).toEqual(seed.account.basic);
    expect(section(out, 'pools')).toEqual(seed.pools);
    expect(section(out, 'cities')).toEqual(seed.cities);
    expect(section(out, 'peers')).toEqual(seed.peers);
    expect(section(out, 'network_status')).toEqual(seed.network_status);
    expect(section(out, 'req_logs')).toEqual(seed.req_logs);
    expect(section(out, 'usage')).toEqual(s.usage);
    expect(section(out, 'charges')).toEqual(seed.charges);
    const manager = section(out, 'manager');
    expect(manager).not.toHaveProperty('har');
    expect(manager).not.toHaveProperty('ports');
    expect(manager.bans).toEqual(seed.manager.bans);
    expect(manager.settings).toEqual(seed.manager.settings);
    expect(section(out, 'har')).toEqual([{ marker: 1 }]);
    s.putPort({ port: 23000, zone: 'res_zone' } as ProxyPortConfig);
    expect(section(s.sectionsJson(false), 'port_order')).toEqual([24000, 24001, 23000]);
  });

  it('a port is one section per field and a list of its fields; a field is written anew only for another value', () => {
    const s = new Store(defaultSeed());
    for (const p of [...s.ports.keys()]) s.dropPort(p);
    const whitelist = ['10.0.0.1'];
    s.putPort({ port: 24100, zone: 'res_zone', whitelist_ips: whitelist, country: undefined } as ProxyPortConfig);
    const out = s.sectionsJson(false);
    const ports = out.filter(([n]) => n.startsWith('port:'));
    // A field left undefined is left out, as JSON leaves it out.
    expect(ports).toEqual([
      ['port:24100:port', '24100'],
      ['port:24100:zone', '"res_zone"'],
      ['port:24100:whitelist_ips', '["10.0.0.1"]'],
      ['port:24100', '["port","zone","whitelist_ips"]'],
    ]);
    // The same list, changed in place, keeps its text: configurations are replaced, never changed deep.
    whitelist.push('10.0.0.2');
    expect(section(s.sectionsJson(false), 'port:24100:whitelist_ips')).toEqual(['10.0.0.1']);
    // Another list is another value: written anew.
    const cfg = s.ports.get(24100) as ProxyPortConfig;
    s.putPort({ ...cfg, whitelist_ips: ['10.0.0.3'] });
    expect(section(s.sectionsJson(false), 'port:24100:whitelist_ips')).toEqual(['10.0.0.3']);
    // Texts of a port that went are not kept for a new one on its number.
    s.dropPort(24100);
    expect(s.sectionsJson(false).filter(([n]) => n.startsWith('port:'))).toEqual([]);
    s.putPort({ port: 24100, whitelist_ips: whitelist } as ProxyPortConfig);
    expect(section(s.sectionsJson(false), 'port:24100:whitelist_ips')).toEqual(['10.0.0.1', '10.0.0.2']);
  });
});

describe('Store.deleteZone', () => {
  it("takes the Zone's IPs back to the pools and its usage, request logs, charges and peers with it; others stay", () => {
    const seed = defaultSeed();
    seed.charges = [
      { zone: 'res_zone', at: '2024-05-01T00:00:00Z', amount: 1, reason: 'a' },
      { zone: 'static_zone', at: '2024-05-01T00:00:00Z', amount: 2, reason: 'b' },
    ];
    seed.peers.push({ ip: '198.18.9.9', country: 'us', asn: '1' });
    const s = new Store(seed);
    s.sectionsJson(true);
    const count = <T extends { zone?: string }>(xs: T[], zone: string) => xs.filter((x) => x.zone === zone).length;
    const before = {
      usage: s.usage.length,
      reqLogs: s.reqLogs.length,
      peers: s.peers.length,
      resUsage: count(s.usage, 'res_zone'),
      resLogs: count(s.reqLogs, 'res_zone'),
      resPeers: count(s.peers, 'res_zone'),
    };
    expect(before.resUsage * before.resLogs * before.resPeers).toBeGreaterThan(0);
    const zone = s.zones.get('res_zone');
    if (!zone) throw new Error('the seed has res_zone');
    const gips = [...zone.gips];
    expect(gips.length).toBeGreaterThan(0);
    s.deleteZone(zone);
    expect(s.zones.has('res_zone')).toBe(false);
    expect(gips.filter((g) => s.gipAllocated.has(g))).toEqual([]);
    expect(s.usage).toHaveLength(before.usage - before.resUsage);
    expect(count(s.usage, 'res_zone')).toBe(0);
    expect(s.reqLogs).toHaveLength(before.reqLogs - before.resLogs);
    expect(count(s.reqLogs, 'res_zone')).toBe(0);
    expect(s.charges).toEqual([seed.charges[1]]);
    expect(s.peers).toHaveLength(before.peers - before.resPeers);
    expect(s.peers.at(-1)).toEqual({ ip: '198.18.9.9', country: 'us', asn: '1' });
    // The next record writes what changed.
    expect(sectionNames(s.sectionsJson(false))).toEqual(expect.arrayContaining(['pools', 'usage', 'req_logs', 'peers']));
    // Ports naming the Zone stay.
    expect(s.ports.size).toBe(2);
  });
});

describe('Store: bans', () => {
  const ban = (port: number, ip: string, domain: string | null, to = 0) => ({ port, ip, domain, to });

  it('a ban is one per port, IP and domain; no domain and an empty one are the same', () => {
    expect(banKey('10.0.0.1', 'a.example')).not.toBe(banKey('10.0.0.1', null));
    expect(banKey('10.0.0.1', '')).toBe(banKey('10.0.0.1', null));
    const s = new Store(defaultSeed());
    s.addBan(ban(24001, '10.0.0.1', ''));
    s.addBan(ban(24001, '10.0.0.1', null, 5));
    s.addBan(ban(24001, '10.0.0.1', 'a.example'));
    expect(s.bans.get(24001)?.size).toBe(2);
    expect([...(s.bans.get(24001)?.values() ?? [])].map((b) => [b.domain, b.to])).toEqual([
      [null, 5],
      ['a.example', 0],
    ]);
  });

  it('liftBan lifts the ban of that domain only, says whether there was one, and drops an empty port', () => {
    const s = new Store(defaultSeed());
    s.addBan(ban(24001, '10.0.0.1', null));
    s.addBan(ban(24001, '10.0.0.1', 'a.example'));
    expect(s.liftBan(24001, '10.0.0.1', 'b.example')).toBe(false);
    expect(s.liftBan(24001, '10.0.0.1', null)).toBe(true);
    expect(s.liftBan(24001, '10.0.0.1', null)).toBe(false);
    expect(s.activeBans(24001).map((b) => b.domain)).toEqual(['a.example']);
    expect(s.bans.has(24001)).toBe(true);
    expect(s.liftBan(24001, '10.0.0.1', 'a.example')).toBe(true);
    expect(s.bans.has(24001)).toBe(false);
    // A port without bans: nothing to lift, nothing made.
    expect(s.liftBan(24333, '10.0.0.1', null)).toBe(false);
    expect(s.bans.has(24333)).toBe(false);
  });

  it('activeBans: a ban ending now has ended; ended ones are dropped, and a port left without bans too', () => {
    const s = new Store(defaultSeed());
    s.addBan(ban(24001, '10.0.0.1', null, 1000));
    s.addBan(ban(24001, '10.0.0.2', null, 2000));
    s.addBan(ban(24001, '10.0.0.3', null, 0)); // no end
    expect(s.activeBans(24001, 999).map((b) => b.ip)).toEqual(['10.0.0.1', '10.0.0.2', '10.0.0.3']);
    expect(s.activeBans(24001, 1000).map((b) => b.ip)).toEqual(['10.0.0.2', '10.0.0.3']);
    // Dropped, not only hidden: an earlier time does not bring it back.
    expect(s.activeBans(24001, 0).map((b) => b.ip)).toEqual(['10.0.0.2', '10.0.0.3']);
    expect(s.bans.has(24001)).toBe(true);
    s.liftBan(24001, '10.0.0.3', null);
    expect(s.activeBans(24001, 2000)).toEqual([]);
    expect(s.bans.has(24001)).toBe(false);
  });
});

describe('Store: copies of the state', () => {
  it('toData is a copy of the whole state as a seed; toJson is the same state as text, with extra fields', () => {
    const s = new Store(defaultSeed());
    s.addBan({ port: 24001, ip: '10.0.0.9', domain: null, to: s.clock.now() - 1 }); // expired: not in the state
    const data = s.toData();
    expect(data.format).toBe('zone-api-sandbox-state');
    expect(data.version).toBe(1);
    expect(data.manager.ports).toEqual([...s.ports.values()]);
    expect(data.manager.ports[0]).not.toBe(s.ports.get(24000));
    expect(data.manager.bans.map((b) => b.ip)).toEqual(['192.0.2.10']);
    expect(data.account.zones.map((z) => z.name)).toEqual([...s.zones.keys()]);
    expect(data.pools.ips).toHaveLength(s.pool.size);
    expect(data.pools.gips).toHaveLength(s.gipPool.size);
    data.account.zones[0]?.ips.push('203.0.113.98');
    expect(s.zones.get(data.account.zones[0]?.name as string)?.ips).not.toContain('203.0.113.98');
    const json = JSON.parse(s.toJson({ saved_at: 5 }));
    expect(json.saved_at).toBe(5);
    const { saved_at: _, ...rest } = json;
    expect(rest).toEqual(JSON.parse(JSON.stringify(s.toData())));
    expect(JSON.parse(s.toJson())).toEqual(JSON.parse(JSON.stringify(s.toData())));
    // A loaded copy is the same state.
    expect(new Store(data).toData()).toEqual(data);
  });
});
