import { loadBundle } from '@zone-api/spec/model';
import { describe, expect, it } from 'vitest';
import { successful } from '../../src/domain/har.js';
import { defaultSeed } from '../../src/domain/seed.js';
import { SEED } from '../../src/domain/seed-ids.js';
import { managerSeed } from '../../src/domain/seed-manager.js';
import type { HarEntry } from '../../src/domain/types.js';
import { PROVIDER_TEST_URL } from '../../src/shared/brand.js';

// The manager's part of the built-in seed (src/domain/seed-manager.ts) as docs/seed-and-state.md describes it:
// ports 24000 and 24001 on Zones of the account, the ban the spec's unbanIp example lifts, one user, a
// release to upgrade to, and 40 HAR entries of past requests, the same on every start.

const m = managerSeed();
const zones = new Map(defaultSeed().account.zones.map((z) => [z.name, z]));

describe('the manager seed', () => {
  it('is the same on every call, and each call is a copy of its own', () => {
    const again = managerSeed();
    expect(again).toEqual(m);
    expect(again.har).not.toBe(m.har);
    again.settings.whitelist_ips.push('10.0.0.1');
    expect(m.settings.whitelist_ips).toEqual([]);
  });

  it("runs the settings' Zone of the account, with its password, as the seed's customer", () => {
    const s = m.settings;
    expect(zones.has(s.zone)).toBe(true);
    expect(s.zone).toBe('static_zone');
    expect(s.password).toBe(SEED.zones.static_zone);
    expect(zones.get(s.zone)?.passwords).toContain(s.password);
    expect(s.customer).toBe(SEED.customer);
    expect(s.test_url).toBe(PROVIDER_TEST_URL);
  });

  it('starts as a real manager started without flags: no whitelist, no pending IPs, no token', () => {
    const s = m.settings;
    for (const list of [s.www_whitelist_ips, s.whitelist_ips, s.fixed_whitelist_ips, s.pending_ips, s.pending_www_ips])
      expect(list).toEqual([]);
    expect(s.read_only).toBe(false);
    expect([s.zagent, s.sync_config]).toEqual([false, false]);
    expect([s.dropin, s.request_stats]).toEqual([true, true]);
    expect([s.log, s.har_limit]).toEqual(['notice', 1024]);
    expect(s.config).toContain('zone-api-sandbox');
    expect([m.token, m.token_issued, m.sessions]).toEqual([null, [], {}]);
  });

  it('keeps its whole HAR log: `logs` holds more than its 40 entries', () => {
    expect(m.har).toHaveLength(40);
    expect(m.settings.logs).toBeGreaterThanOrEqual(m.har.length);
  });

  it('has a newer release to upgrade to, and lists its own version; every change says something', () => {
    const [latest] = m.releases;
    expect(m.version).toBe('1.570.247');
    expect(latest?.ver).toBe('1.571.3');
    expect(m.releases.map((r) => r.ver)).toContain(m.version);
    expect(m.releases.map((r) => r.type)).toEqual(['stable', 'stable']);
    const changes = m.releases.flatMap((r) => r.changes);
    expect(changes.length).toBe(3);
    expect(changes.map((c) => c.type)).toEqual(['star', 'bug_fix', 'bug_fix']);
    for (const c of changes) expect(c.text.length).toBeGreaterThan(10);
  });

  it("ports 24000 and 24001, stored, on Zones of the account; the ban the spec's unbanIp example lifts", () => {
    expect(m.ports).toEqual([
      { port: 24000, zone: 'static_zone', proxy_type: 'persist' },
      { port: 24001, zone: 'res_zone', proxy_type: 'persist', country: 'us', rotate_session: true },
    ]);
    for (const p of m.ports) expect(zones.has(p.zone as string)).toBe(true);
    const example = loadBundle('manager').components?.examples?.UnbanIpRequest as { value: { ip: string; domain: string } };
    expect(m.bans).toEqual([{ port: 24000, ip: example.value.ip, domain: example.value.domain, to: 0 }]);
  });

  it('one user with an email and a password', () => {
    expect(m.users).toEqual([{ email: 'admin@example.com', password: 'sandbox-pm-0001' }]);
  });

  it("the general log: the manager's start and each port ready with its Zone", () => {
    expect(m.general_log).toEqual([
      `NOTICE:Manager: Proxy Manager ${m.version} starting`,
      ...m.ports.map((p) => `NOTICE:Manager: Port ${p.port} ready (${p.zone})`),
    ]);
  });
});

describe("the manager seed's HAR log", () => {
  const at = (i: number) => m.har[i] as HarEntry;
  /** An entry's `details` (every entry of the seed has them). */
  const details = (e: HarEntry) => {
    expect(e.details).toBeDefined();
    return e.details as NonNullable<HarEntry['details']>;
  };

  it('one request a minute from 2024-05-02 12:00 UTC, by ports 24000-24002 in turn, https every other', () => {
    const start = Date.parse('2024-05-02T12:00:00.000Z');
    m.har.forEach((e, i) => {
      expect(details(e).timestamp).toBe(start + i * 60_000);
      expect(e.startedDateTime).toBe(new Date(start + i * 60_000).toISOString());
      expect(details(e).port).toBe(24000 + (i % 3));
      expect(details(e).protocol).toBe(i % 2 === 0 ? 'https' : 'http');
    });
  });

  it('URLs over three hosts and four paths; a POST with its JSON body every fifth request', () => {
    const hosts = ['example.com', 'example.org', 'api.example.net'];
    const paths = ['', 'item/42', 'search?q=sandbox', 'api/v1/status'];
    m.har.forEach((e, i) => {
      const host = hosts[i % 3] as string;
      expect(e.request.url).toBe(`${i % 2 === 0 ? 'https' : 'http'}://${host}/${paths[i % 4]}`);
      const post = i % 5 === 4;
      expect(e.request.method).toBe(post ? 'POST' : 'GET');
      expect(e.request.headers).toEqual([
        { name: 'host', value: host },
        { name: 'user-agent', value: 'curl/8.5.0' },
        ...(post ? [{ name: 'content-type', value: 'application/json' }] : []),
      ]);
      expect(e.request.postData?.text).toBe(post ? JSON.stringify({ q: 'sandbox', page: i }) : '');
    });
    expect(m.har.filter((e) => e.request.method === 'POST')).toHaveLength(8);
  });

  it('statuses of six kinds, each with its page (none for 204), successes and failures both', () => {
    const seen = new Map<number, string>();
    for (const e of m.har) {
      const status = e.response.status as number;
      seen.set(status, e.response.statusText);
      expect(e.response.content.text).toBe(status === 204 ? '' : `<!doctype html><title>${e.response.statusText}</title>`);
      expect(e.response.content.mimeType).toBe('text/html');
    }
    expect([...seen].sort()).toEqual([
      [200, 'OK'],
      [204, 'No Content'],
      [302, 'Found'],
      [404, 'Not Found'],
      [502, 'Bad Gateway'],
    ]);
    expect(m.har.some((e) => !successful(e.response.status))).toBe(true);
  });

  it('times, bandwidth and peers in their ranges; the answer 15 ms before the end', () => {
    const times = new Set<number>();
    m.har.forEach((e, i) => {
      times.add(e.time);
      expect(e.time).toBeGreaterThanOrEqual(50);
      expect(e.time).toBeLessThan(950);
      expect(details(e).timeline?.[0]?.ttfb).toBe(e.time - 15);
      expect(details(e).in_bw).toBeGreaterThanOrEqual(200);
      expect(details(e).in_bw).toBeLessThan(20_200);
      expect(details(e).out_bw).toBeGreaterThanOrEqual(100);
      expect(details(e).out_bw).toBeLessThan(900);
      expect(details(e).proxy_peer).toBe(`198.18.0.${10 + (i % 6)}`);
    });
    expect(times.size).toBeGreaterThan(30);
    expect(at(0).time).not.toBe(at(1).time);
  });

  it("each through the seed's upstream as the customer's static_zone, with its port's session", () => {
    m.har.forEach((e, i) => {
      const session = `${details(e).port}_${i % 4}`;
      expect(details(e).username).toBe(`brd-customer-${SEED.customer}-zone-static_zone-session-${session}`);
      expect(details(e).timeline?.[0]?.session).toBe(session);
      expect(details(e).super_proxy).toBe('127.0.0.1:22225');
      expect(details(e).remote_address).toBe('127.0.0.1');
    });
  });

  it('uuids of their own, numbered', () => {
    expect(at(0).uuid).toBe('00000001-5a4d-4b0c-9e1f-000000000001');
    expect(at(39).uuid).toBe('00000028-5a4d-4b0c-9e1f-000000000040');
    expect(new Set(m.har.map((e) => e.uuid)).size).toBe(40);
  });
});
