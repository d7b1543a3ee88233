import { createServer } from 'node:http';
import { viaProxy } from '@zone-api/testkit';
import { describe, expect, it } from 'vitest';
import { defaultSeed, seed, startSandbox, validateSeed } from '../../src/index.js';
import { bearer, C, docs, listenOnLoopback, raw } from '../helpers.js';

// Fixtures from the typed seed builder, and the start-up's check of every cross-reference: one line
// per section and Zone, with the path and what to do.

describe('the seed builder', () => {
  it('adds a Zone, a port for it and a whitelist on top of the built-in seed; the sandbox serves them', async () => {
    const target = createServer((req, res) => res.end(`hello ${req.url}`));
    const targetPort = await listenOnLoopback(target);
    const fixture = seed()
      .zone('ci_zone', { plan: { type: 'static', ips_type: 'dedicated', bandwidth: 'unlimited', ips: 2 }, ips: 2 })
      .whitelist('ci_zone', '127.0.0.1', '10.0.0.0/8')
      .port({ port: 24010, zone: 'ci_zone' })
      .token('ci-token-1');
    const s = await startSandbox({ seed: fixture, networkPort: 0, proxyPorts: true, freeProxyPorts: true });
    try {
      const zone = await raw(s.accountUrl, 'GET', `/api/zone?customer=${C}&zone=ci_zone`, {
        headers: { Authorization: 'Bearer ci-token-1' },
      });
      expect(zone.status, zone.text).toBe(200);
      expect(s.state().account.zones.find((z) => z.name === 'ci_zone')?.whitelist).toEqual(['127.0.0.1', '10.0.0.0/8']);
      expect(zone.json().plans.at(-1)).toMatchObject({ type: 'static', ips_type: 'dedicated', ips: 2 });
      expect(s.credentials.zones.ci_zone).toHaveLength(1);
      expect(s.state().account.zones.find((z) => z.name === 'ci_zone')?.ips).toHaveLength(2);
      // The built-in seed is still there, and the new port carries traffic through the new Zone.
      expect(Object.keys(s.credentials.zones)).toEqual(expect.arrayContaining(['static_zone', 'res_zone', 'ci_zone']));
      const port = s.ports.proxy['24010'] as number;
      const through = await viaProxy(`http://127.0.0.1:${port}`, `http://127.0.0.1:${targetPort}/fixture`);
      expect(through).toMatchObject({ status: 200, text: 'hello /fixture' });
      const har = s.state().manager.har.at(-1);
      expect(har?.details).toMatchObject({ port, username: expect.stringContaining('-zone-ci_zone-') });
    } finally {
      await s.close();
      target.close();
    }
  }, 60_000); // a first start with traffic in this worker (bundles, validators, the CA) on a loaded machine

  it("a residential Zone of seed.empty() (the testing guide's ci_zone) carries traffic: it has peers, not 502 No peer", async () => {
    const target = createServer((req, res) => res.end(`hello ${req.url}`));
    const targetPort = await listenOnLoopback(target);
    const fixture = seed
      .empty()
      .zone('ci_zone', { plan: { type: 'resident', ips_type: 'shared', bandwidth: 'payperusage' } })
      .zone('two_peers', { peers: ['198.18.3.10', '198.18.3.11'] })
      .zone('no_peers', { peers: 0 })
      .port({ port: 24030, zone: 'ci_zone' })
      .port({ port: 24031, zone: 'two_peers' })
      .port({ port: 24032, zone: 'no_peers' });
    const data = fixture.build();
    const peersOf = (zone: string) => data.peers.filter((p) => p.zone === zone).map((p) => p.ip);
    expect(peersOf('ci_zone')).toHaveLength(2);
    expect(peersOf('two_peers')).toEqual(['198.18.3.10', '198.18.3.11']);
    expect(peersOf('no_peers')).toEqual([]);
    const s = await startSandbox({ seed: fixture, networkPort: 0, proxyPorts: true });
    try {
      for (const port of ['24030', '24031']) {
        const through = await viaProxy(`http://127.0.0.1:${s.ports.proxy[port]}`, `http://127.0.0.1:${targetPort}/${port}`);
        expect(through, port).toMatchObject({ status: 200, text: `hello /${port}` });
      }
      // The harness: a Zone given no peers is refused as before, so the 200s above are the peers' doing.
      const refused = await viaProxy(`http://127.0.0.1:${s.ports.proxy['24032']}`, `http://127.0.0.1:${targetPort}/none`);
      expect(refused.status).toBe(502);
      expect(JSON.stringify(refused.headers)).toMatch(/No peer of Zone no_peers/);
    } finally {
      await s.close();
      target.close();
    }
    expect(() => seed.empty().zone('greedy', { peers: 1000 })).toThrow(/peers: the seed has 24 unassigned peers, not 1000/);
    expect(() => seed.empty().zone('bad', { peers: ['203.0.113.1'] })).toThrow(/203\.0\.113\.1 is not a peer of the seed/);
  }, 60_000);

  it('renameZone renames a Zone everywhere the seed names it, so the seed still starts', async () => {
    const data = seed().renameZone('static_zone', 'static_ci').build();
    expect(data.account.zones.map((z) => z.name)).toContain('static_ci');
    expect(data.usage.filter((u) => u.zone === 'static_zone')).toEqual([]);
    expect(data.usage.filter((u) => u.zone === 'static_ci').length).toBe(60);
    expect(data.manager.ports.find((p) => p.port === 24000)?.zone).toBe('static_ci');
    expect(data.manager.settings.zone).toBe('static_ci');
    expect(() => validateSeed(data, docs)).not.toThrow();
  });

  it('seed.empty() is an account without Zones, ports or history; its first Zone is the manager default', async () => {
    const data = seed.empty().zone('only_zone').port({ port: 24020, zone: 'only_zone' }).build();
    expect(data.account.zones.map((z) => z.name)).toEqual(['only_zone']);
    expect(data.manager.settings.zone).toBe('only_zone');
    expect([data.usage, data.req_logs, data.manager.har]).toEqual([[], [], []]);
    const s = await startSandbox({ seed: data });
    try {
      const zones = await raw(s.accountUrl, 'GET', `/api/zone/get_active_zones?customer=${C}`, { headers: bearer });
      expect(zones.json().map((z: { name: string }) => z.name)).toEqual(['only_zone']);
    } finally {
      await s.close();
    }
  });

  it('build() gives a copy each time: changing one does not change the builder', () => {
    const b = seed().zone('a_zone');
    const one = b.build();
    one.account.zones.pop();
    expect(b.build().account.zones.map((z) => z.name)).toContain('a_zone');
  });

  it('refuses what it cannot give: more free IPs than the pool has, a rename onto an existing Zone', () => {
    expect(() => seed().zone('big', { plan: { type: 'static', ips_type: 'dedicated' }, ips: 100_000 })).toThrow(
      /seed\(\)\.zone\("big"\): ips: the pool has \d+ free dedicated IPs, not 100000/,
    );
    expect(() => seed().renameZone('static_zone', 'res_zone')).toThrow(/already has a Zone res_zone/);
  });
});

describe('cross-references checked at start', () => {
  it('a Zone renamed by hand: one line per section naming the path, the count and "rename it here too"', async () => {
    const data = defaultSeed();
    (data.account.zones[0] as { name: string }).name = 'static_renamed';
    const err = await startSandbox({ seed: data }).then(
      (s) => s.close().then(() => undefined),
      (e: Error) => e,
    );
    expect(err).toBeInstanceOf(Error);
    const lines = (err as Error).message
      .split('\n')
      .slice(1)
      .map((l) => l.trim());
    const known = 'static_renamed, res_zone, dc_zone_2, mob_zone, old_zone';
    const hint = `Zone static_zone does not exist in /account/zones (${known}); if you renamed it there, rename it here too`;
    expect(lines).toEqual([
      `/usage/0/zone and 59 more of /usage: ${hint}`,
      `/req_logs/0/zone and 14 more of /req_logs: ${hint}`,
      `/manager/ports/0/zone: ${hint}`,
      `/manager/settings/zone: ${hint}`,
    ]);
  });

  it('a seed port naming a Zone that does not exist is refused, naming the port', async () => {
    const data = seed().build();
    data.manager.ports.push({ port: 24030, zone: 'no_such_zone' });
    await expect(startSandbox({ seed: data })).rejects.toThrow(
      /\/manager\/ports\/2\/zone: Zone no_such_zone does not exist in \/account\/zones/,
    );
  });

  it('a state the sandbox wrote itself may keep a port naming a deleted Zone, as the real manager does', () => {
    const data = { ...seed().build(), format: 'zone-api-sandbox-state' as const, version: 1 as const };
    data.manager.ports.push({ port: 24030, zone: 'deleted_zone' });
    expect(() => validateSeed(data, docs)).not.toThrow();
    expect(() => validateSeed({ ...data, format: undefined }, docs)).toThrow(/\/manager\/ports\/2\/zone: Zone deleted_zone/);
  });
});
