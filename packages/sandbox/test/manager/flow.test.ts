import { setTimeout as sleep } from 'node:timers/promises';
import { createManagerClient } from '@zone-api/manager-client';
import { loadBundle } from '@zone-api/spec/model';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { describe, expect, it } from 'vitest';
import type { Store } from '../../src/domain/state.js';
import { MANAGER_SUNSET } from '../../src/index.js';
import { authenticateManager } from '../../src/manager/auth.js';
import { type OperationDef, routesOf } from '../../src/router/spec.js';
import { C, RES, type Rec, raw, STATIC, useSandbox } from '../helpers.js';

// State across calls of the manager API, through the typed client; every response is held to the spec.
const t = useSandbox();

describe('proxy ports', () => {
  it("create (next free from 24000) -> list -> update -> move -> delete -> the real manager's answers for a gone port", async () => {
    await t.sandbox.reset();
    const { manager } = t;
    const seeded = (await manager.listProxies()).data?.map((p) => p.port);
    expect(seeded).toEqual([24000, 24001]);

    const created = await manager.createProxy({ body: { proxy: { zone: STATIC, country: 'us', sticky_ip: true } } });
    expect(created.response.status).toBe(200);
    // The port's complete configuration (the real manager's complete_proxy_config): the settings, the defaults, the Zone's plan kind.
    expect(created.data?.data).toMatchObject({
      port: 24002,
      zone: STATIC,
      country: 'us',
      sticky_ip: true,
      customer: C,
      static: true,
      multiply: 0,
    });
    const explicit = await manager.createProxy({ body: { proxy: { port: 25000 } } });
    expect(explicit.data?.data).toMatchObject({ port: 25000, zone: STATIC, dns: 'local', proxy_connection_type: 'http' });
    expect((await manager.createProxy({ body: { proxy: {} } })).data?.data.port).toBe(25001);

    const stored = (await manager.listProxies()).data?.find((p) => p.port === 24002);
    // As the real manager stores a port: what was given, `proxy_type`, the Zone's password and price, the default whitelist.
    expect(stored).toEqual({
      zone: STATIC,
      country: 'us',
      sticky_ip: true,
      port: 24002,
      proxy_type: 'persist',
      password: 'z8x7c6v5b4n3',
      gb_cost: 0.6,
      whitelist_ips: [],
    });
    // Running: the stored fields and what the port runs with; its status once it has been checked.
    const running = (await manager.listRunningProxies()).data?.find((p) => p.port === 25000);
    expect(running).toMatchObject({ port: 25000, route_err: 'pass_dyn', whitelist_ips: [] });
    expect(running).not.toHaveProperty('status');
    await manager.getProxyStatus({ params: { path: { port: 25000 } } });
    expect((await manager.listRunningProxies()).data?.find((p) => p.port === 25000)).toMatchObject({ status: 'ok', status_details: [] });

    const updated = await manager.updateProxy({ params: { path: { port: 24002 } }, body: { proxy: { country: 'de', zone: RES } } });
    expect(updated.data?.data).toMatchObject({ port: 24002, country: 'de', zone: RES, sticky_ip: true });
    expect((await manager.listProxies()).data?.find((p) => p.port === 24002)?.country).toBe('de');

    const moved = await manager.updateProxy({ params: { path: { port: 24002 } }, body: { proxy: { port: 26000 } } });
    expect(moved.data?.data).toMatchObject({ port: 26000, country: 'de', zone: RES });
    const ports = (await manager.listProxies()).data?.map((p) => p.port);
    expect(ports).toContain(26000);
    expect(ports).not.toContain(24002);
    expect((await manager.getProxyStatus({ params: { path: { port: 24002 } } })).data).toEqual({ status: 'Unknown proxy' });

    expect((await manager.deleteProxy({ params: { path: { port: 26000 } } })).response.status).toBe(204);
    const again = await manager.deleteProxy({ params: { path: { port: 26000 } } });
    expect(again.response.status).toBe(500);
    expect(again.response.headers.get('Content-Type')).toMatch(/^text\/html/);
    expect(again.error).toMatchObject({ kind: 'text', error: 'Server error: this proxy does not exist' });

    const many = await manager.deleteProxies({ body: { ports: [25000, 25001] } });
    expect(many.response.status).toBe(204);
    expect((await manager.listProxies()).data?.map((p) => p.port)).toEqual([24000, 24001]);
  });

  it('refuses ports below 1000, ports in use (by a proxy or the API itself) and updates to unknown Zones, with the observed {errors}', async () => {
    const { manager } = t;
    const before = t.sandbox.state();
    const low = await manager.createProxy({ body: { proxy: { port: 999 } } });
    expect(low.response.status).toBe(400);
    expect(low.error).toEqual({ errors: [{ msg: 'Invalid port. It must be a number >= 1000', field: 'port' }] });
    const taken = await manager.createProxy({ body: { proxy: { port: 24000 } } });
    expect(taken.error).toEqual({ errors: [{ msg: 'port 24000 in use by another proxy', field: 'port' }] });
    const api = Number(new URL(t.sandbox.managerUrl).port);
    expect((await manager.createProxy({ body: { proxy: { port: api } } })).error).toEqual({
      errors: [{ msg: `port ${api} in use by the UI/API and UI/WebSocket`, field: 'port' }],
    });
    expect((await manager.updateProxy({ params: { path: { port: 24000 } }, body: { proxy: { zone: 'nope' } } })).error).toMatchObject({
      errors: [{ field: 'zone' }],
    });
    const moveOnto = await manager.updateProxy({ params: { path: { port: 24001 } }, body: { proxy: { port: 24000 } } });
    expect(moveOnto.response.status).toBe(400);
    const unknown = await manager.updateProxy({ params: { path: { port: 24999 } }, body: { proxy: { country: 'us' } } });
    expect(unknown.response.status).toBe(400);
    expect(unknown.error).toEqual({ errors: [{ msg: 'No proxy at port 24999' }] });
    const partly = await manager.deleteProxies({ body: { ports: [24000, 24999] } });
    expect(partly.response.status).toBe(500);
    expect(t.sandbox.state()).toEqual(before);
  });

  it('multiply stores one definition and runs it on consecutive ports, as the real manager (duplicates)', async () => {
    const { manager } = t;
    const r = await manager.createProxy({ body: { proxy: { port: 27000, multiply: 3, zone: RES } } });
    expect(r.data?.data.port).toBe(27000);
    const near = (p: { port?: number }) => (p.port ?? 0) >= 27000 && (p.port ?? 0) < 27010;
    expect((await manager.listProxies()).data?.filter(near)).toEqual([
      { zone: RES, port: 27000, multiply: 3, proxy_type: 'persist', password: 'r3s1d3nt9x7w', gb_cost: 8.4, whitelist_ips: [] },
    ]);
    const running = (await manager.listRunningProxies()).data?.filter(near);
    expect(running?.map((p) => [p.port, p.proxy_type, p.master_port])).toEqual([
      [27000, 'persist', undefined],
      [27001, 'duplicate', 27000],
      [27002, 'duplicate', 27000],
    ]);
    expect((await manager.deleteProxy({ params: { path: { port: 27001 } } })).response.status).toBe(500);
    const clash = await manager.createProxy({ body: { proxy: { port: 26999, multiply: 2 } } });
    expect(clash.error).toEqual({ errors: [{ msg: 'port 27000 in use by another proxy', field: 'port' }] });
    expect((await manager.getProxyStatus({ params: { path: { port: 26999 } } })).data).toEqual({ status: 'Unknown proxy' });
  });

  it('proxy_status follows the Zone and the account', async () => {
    const { manager, account } = t;
    const port = (await manager.createProxy({ body: { proxy: { zone: 'dc_zone_2' } } })).data?.data.port as number;
    expect((await manager.getProxyStatus({ params: { path: { port } } })).data).toEqual({ status: 'ok', status_details: [] });
    await account.changeZoneDisable({ body: { zone: 'dc_zone_2', disable: 1 } });
    expect((await manager.getProxyStatus({ params: { path: { port } } })).data).toEqual({ status: 'Disabled zone' });
    await account.changeZoneDisable({ body: { zone: 'dc_zone_2', disable: 0 } });
    await account.deleteZone({ body: { zone: 'dc_zone_2' } });
    const status = (await manager.getProxyStatus({ params: { path: { port } } })).data;
    expect(status?.status).toMatch(/not found/);
    expect(status?.status_details?.[0]?.field).toBe('zone');
  });

  it('a port made again on the number of a checked one, after a delete or a reset, has no status until it is checked', async () => {
    const { manager } = t;
    const running = async (port: number) => (await manager.listRunningProxies()).data?.find((p) => p.port === port);
    await manager.createProxy({ body: { proxy: { port: 25500 } } });
    await manager.getProxyStatus({ params: { path: { port: 25500 } } });
    expect(await running(25500)).toHaveProperty('status', 'ok');
    await manager.deleteProxy({ params: { path: { port: 25500 } } });
    await manager.createProxy({ body: { proxy: { port: 25500 } } });
    expect(await running(25500)).not.toHaveProperty('status');
    await manager.getProxyStatus({ params: { path: { port: 25500 } } });
    await t.sandbox.reset();
    await manager.createProxy({ body: { proxy: { port: 25500 } } });
    expect(await running(25500)).not.toHaveProperty('status');
  });
});

describe('bans and sessions', () => {
  it('bans with expiry after ms, unbans with the remaining list, and all-port bans on the ports named (as the real manager)', async () => {
    await t.sandbox.reset();
    const { manager } = t;
    const path = { params: { path: { port: 24000 } } };
    expect((await manager.banIp({ ...path, body: { ip: '10.1.1.1', ms: 1500 } })).response.status).toBe(204);
    await manager.banIp({ ...path, body: { ip: '10.1.1.2', domain: 'example.com' } });
    await manager.banIps({ ...path, body: { ip: ['10.1.1.3', '10.1.1.4'] } });
    await manager.banIps({ ...path, body: { ips: ['10.1.1.5', 'not-an-ip'], ms: 60_000 } });

    const lifted = await manager.unbanIp({ ...path, body: { ip: '10.1.1.3' } });
    const remaining = (lifted.data?.ips ?? []).map((b) => b.ip).sort();
    // 192.0.2.10 is the seed's ban (for example.com); 'not-an-ip' was dropped.
    expect(remaining).toEqual(['10.1.1.1', '10.1.1.2', '10.1.1.4', '10.1.1.5', '192.0.2.10']);
    // No end: no `to`.
    expect(lifted.data?.ips.find((b) => b.ip === '10.1.1.2')).toEqual({ ip: '10.1.1.2', domain: 'example.com' });
    expect(lifted.data?.ips.find((b) => b.ip === '10.1.1.4')).toEqual({ ip: '10.1.1.4', domain: '' });
    expect(lifted.data?.ips.find((b) => b.ip === '10.1.1.5')?.to).toBeGreaterThan(Date.now());
    // Without a domain, the domain ban stays (200, the list unchanged).
    const kept = await manager.unbanIp({ ...path, body: { ip: '10.1.1.2' } });
    expect(kept.data?.ips.map((b) => b.ip)).toContain('10.1.1.2');

    await sleep(1600); // the 1500 ms ban has run out (long enough for a loaded machine to read the list first)
    const expired = await manager.unbanIp({ ...path, body: { ip: '10.1.1.1' } });
    expect(expired.response.status).toBe(400);
    expect(expired.error).toMatchObject({ kind: 'text', error: 'IP is not banned' });

    // unbanips clears the whole list, whatever it names.
    expect((await manager.unbanIps({ ...path, body: { ip: ['10.1.1.4'] } })).data).toBe('OK');
    expect((await manager.getBanList({ ...path, params: { ...path.params, query: { full: '1' } } })).data).toEqual({ ips: [] });

    // Without `ports`, no port is banned; with them, the ports named that exist.
    expect((await manager.banIpAllPorts({ body: { ip: '10.2.2.2', ms: 60_000 } })).response.status).toBe(204);
    expect((await manager.getBanList({ params: { path: { port: 24001 } } })).data).toEqual({ ips: [] });
    await manager.banIpAllPorts({ body: { ips: ['10.3.3.3'], ports: [24001, 24999] } });
    expect((await manager.unbanIp({ ...path, body: { ip: '10.3.3.3' } })).response.status).toBe(400);
    expect((await manager.getBanList({ params: { path: { port: 24001 } } })).data).toEqual({ ips: ['10.3.3.3'] });
    const badIp = await manager.banIpAllPorts({ body: { ip: 'nope', ports: [24001] } });
    expect(badIp.error).toMatchObject({ kind: 'text', error: 'No IP provided' });
    const unknownPort = await manager.banIp({ params: { path: { port: 24999 } }, body: { ip: '10.1.1.1' } });
    expect(unknownPort.response.status).toBe(400);
    expect(unknownPort.error).toMatchObject({ kind: 'text', error: 'No proxy at port 24999' });
    expect((await manager.banIp({ ...path, body: { ip: 'not-an-ip' } })).response.status).toBe(400);
    const unbanUnknown = await manager.unbanIps({ params: { path: { port: 24999 } }, body: { ip: ['10.1.1.1'] } });
    expect(unbanUnknown.response.status).toBe(500);
    expect(unbanUnknown.error).toMatchObject({ kind: 'text', error: 'Server error: No proxy at port 24999' });
  });

  it('refresh_sessions gives <port>_<n>, 204 for a port that rotates by itself', async () => {
    const { manager } = t;
    const a = await manager.refreshSessions({ params: { path: { port: 24000 } } });
    const b = await manager.getRefreshSessions({ params: { path: { port: 24000 } } });
    expect(a.data).toEqual({ session_id: '24000_1' });
    expect(b.data).toEqual({ session_id: '24000_2' });
    expect((await manager.refreshSessions({ params: { path: { port: 24001 } } })).response.status).toBe(204);
    const unknown = await manager.refreshSessions({ params: { path: { port: 24999 } } });
    expect(unknown.response.status).toBe(400);
    expect(unknown.response.headers.get('Content-Type')).toBeNull();
    expect(await unknown.response.clone().text()).toBe('');
  });
});

describe('settings, token and whitelists', () => {
  it('settings read and update; logs comes back as a number; bad values change nothing', async () => {
    await t.sandbox.reset();
    const { manager } = t;
    expect((await manager.getSettings()).data).toMatchObject({ customer: C, zone: STATIC, logs: 1000, request_stats: true });
    const off = await manager.updateSettings({ body: { logs: false, request_stats: false, zone: RES, whitelist_ips: ['10.0.0.0/8'] } });
    expect(off.data).toMatchObject({ logs: 0, request_stats: false, zone: RES, whitelist_ips: ['10.0.0.0/8'] });
    expect((await manager.getSettings()).data).toMatchObject({ logs: 0, zone: RES });
    expect((await manager.updateSettings({ body: { logs: 250 } })).data?.logs).toBe(250);
    // The default Zone is what a port without one uses.
    expect((await manager.createProxy({ body: { proxy: {} } })).data?.data).toMatchObject({
      zone: RES,
      whitelist_ips: ['10.0.0.0/8'],
    });

    // A Zone the manager does not know is stored, as the real manager stores it; logs: true is 1.
    expect((await manager.updateSettings({ body: { zone: 'nope', logs: true } })).data).toMatchObject({ zone: 'nope', logs: 1 });
    await manager.updateSettings({ body: { zone: RES, logs: 250 } });
    const before = t.sandbox.state();
    // A value the real manager would answer outside the documented settings is refused, naming the field
    // (an invalid admin whitelist entry is kept as given, as the real manager keeps it: manager-coercion.test.ts).
    const badLogs = await manager.updateSettings({ body: { logs: 'abc' as unknown as number } });
    expect(badLogs.error?.error).toMatch(/body\.logs/);
    // A Cloud Proxy Manager setting, refused by the local manager whatever else the body holds.
    const cloud = await manager.updateSettings({ body: { logs: 5, logs_settings: {} } });
    expect(cloud.response.status).toBe(400);
    expect(cloud.response.headers.get('content-type')).toMatch(/^text\/html/);
    expect(cloud.error?.error).toBe('Available only in Cloud Proxy Manager');
    expect(t.sandbox.state()).toEqual(before);
    expect((await manager.updateSettings({ body: { logs_settings: null } })).response.status).toBe(200);
  });

  it('gen_token (14 chars) then add_wip with exactly that token; the 6th token in an hour is a 429', async () => {
    const { manager } = t;
    const first = (await manager.getNewToken()).data?.token as string;
    const second = (await manager.getNewToken()).data?.token as string;
    expect(first).toHaveLength(14);
    expect(second).not.toBe(first);

    const stale = await t.managerWithToken(first).addWhitelistIp({ body: { ip: '203.0.113.50' } });
    expect(stale.response.status).toBe(403);
    expect(stale.error).toMatchObject({ kind: 'text', error: 'Token required' });
    const bearer = await raw(t.sandbox.managerUrl, 'POST', '/api/add_wip', {
      body: { ip: '203.0.113.50' },
      headers: { Authorization: `Bearer ${second}` },
    });
    expect(bearer.status).toBe(403);
    const none = await raw(t.sandbox.managerUrl, 'POST', '/api/add_wip', { body: { ip: '203.0.113.50' } });
    expect(none.status).toBe(403);
    expect(none.headers.get('content-type')).toMatch(/^text\/html/);

    const ok = await t.managerWithToken(second).addWhitelistIp({ body: { ip: '203.0.113.50' } });
    expect(ok.data).toBe('OK');
    expect((await manager.getSettings()).data?.whitelist_ips).toContain('203.0.113.50');
    const wrong = await t.managerWithToken(second).addWhitelistIp({ body: { ip: 'nonsense' } });
    expect(wrong.response.status).toBe(422);
    expect(wrong.error).toMatchObject({ kind: 'text', error: 'Wrong format\n' });

    for (let i = 0; i < 3; i++) expect((await manager.getNewToken()).response.status).toBe(200);
    const limited = await manager.getNewToken();
    expect(limited.response.status).toBe(429);
    expect(Number(limited.response.headers.get('Retry-After'))).toBeGreaterThan(3500);
    // A restart starts the count over (it is running state), the stored token survives.
    await manager.restartManager();
    expect((await manager.getNewToken()).response.status).toBe(200);
  });

  it('add_whitelist_ip and users', async () => {
    const { manager } = t;
    // A subnet is stored as its network address, the mask dropped, as the real manager stores it.
    expect((await manager.addAdminWhitelistIp({ body: { ip: '198.51.100.7/24' } })).data).toBe('OK');
    expect((await manager.getSettings()).data?.www_whitelist_ips).toContain('198.51.100.0');
    expect((await manager.getSettings()).data?.www_whitelist_ips).not.toContain('198.51.100.7/24');
    expect((await manager.addAdminWhitelistIp({ body: { ip: '300.1.1.1' } })).response.status).toBe(422);
    expect((await manager.listUsers()).data).toEqual([{ email: 'admin@example.com', password: 'sandbox-pm-0001' }]);
    expect((await manager.addUser({ body: { email: 'ops@example.com' } })).response.status).toBe(200);
    expect((await manager.listUsers()).data?.map((u) => u.email)).toEqual(['admin@example.com', 'ops@example.com']);
    expect((await manager.addUser({ body: { email: 'not an email' } })).response.status).toBe(400);
  });
});

describe('zones and IPs, shared with the account API', () => {
  it('zones, allocated IPs and gIPs, refresh_ips read and change the account state', async () => {
    await t.sandbox.reset();
    const { manager, account } = t;
    const zones = (await manager.listZones()).data;
    expect(zones?.def).toBe(STATIC);
    expect(zones?.zones.map((z) => z.name)).toEqual(['static_zone', 'res_zone', 'dc_zone_2', 'mob_zone']); // not the disabled old_zone
    // Its permissions as the real manager works them out from the plan (lib/zones.js 6-31), not the account's list.
    expect(zones?.zones.find((z) => z.name === STATIC)).toMatchObject({
      perm: 'country ip route_all route_dedicated',
      password: 'z8x7c6v5b4n3',
      refresh_cost: null,
    });

    await account.createZone({ body: { zone: { name: 'from_account' }, plan: { type: 'static' } } });
    expect((await manager.listZones()).data?.zones.map((z) => z.name)).toContain('from_account');
    expect((await manager.refreshZones()).response.status).toBe(200);

    const ips = (await manager.listAllocatedIps({ params: { query: { zone: STATIC } } })).data?.ips as string[];
    expect(ips).toEqual(['192.0.2.21', '192.0.2.22', '192.0.2.23', '192.0.2.24']);
    expect((await manager.listAllocatedIps()).data?.ips).toEqual(ips); // the default Zone
    expect((await manager.listAllocatedVips({ params: { query: { zone: RES } } })).data?.ips).toEqual(
      (await account.listRouteVips({ params: { query: { zone: RES } } })).data,
    );

    const refreshed = await manager.refreshIps({ body: { zone: STATIC, ips: [ips[1] as string] } });
    const after = refreshed.data?.ips?.map((r) => r.ip) ?? [];
    expect(after).toHaveLength(4);
    expect(after).not.toContain(ips[1]);
    expect(refreshed.data?.ips?.[1]?.ext).toMatchObject({ def: 'us' });
    const seenByAccount = ((await account.listZoneIps({ params: { query: { zone: STATIC } } })).data as { ips: { ip: string }[] }).ips.map(
      (r) => r.ip,
    );
    expect(seenByAccount).toEqual(after);

    const notHeld = await manager.refreshIps({ body: { zone: STATIC, ips: ['192.0.2.200'] } });
    expect(notHeld.response.status).toBe(400);
    expect((await manager.listAllocatedIps({ params: { query: { zone: 'nope' } } })).response.status).toBe(400);
  });
});

describe('logs, stats, versions, lifecycle', () => {
  it('HAR logs with skip/limit/search/port range/status patterns/sort', async () => {
    await t.sandbox.reset();
    const logs = async (query: Rec) => (await t.manager.getLogs({ params: { query } })).data as Rec;
    const all = await logs({});
    expect(all.log.version).toBe('1.2');
    expect(all.total).toBe(40);
    expect(all.log.entries.map((e: Rec) => e.uuid)).toEqual([...all.log.entries.map((e: Rec) => e.uuid)].sort());
    const page = await logs({ skip: 5, limit: 10 });
    expect(page.log.entries).toEqual(all.log.entries.slice(5, 15));
    expect(page.total).toBe(40);
    expect(page.skip).toBe(5);

    const ok = await logs({ status_code: '2**' });
    const seeded2xx = all.log.entries.filter((e: Rec) => e.response.status >= 200 && e.response.status < 300).length;
    expect(seeded2xx).toBeGreaterThan(0);
    expect(ok.total).toBe(seeded2xx);
    expect(ok.log.entries).toHaveLength(seeded2xx);
    expect(ok.log.entries.every((e: Rec) => e.response.status >= 200 && e.response.status < 300)).toBe(true);
    const exact = await logs({ status_code: '404' });
    const seeded404 = all.log.entries.filter((e: Rec) => e.response.status === 404).length;
    expect(seeded404).toBeGreaterThan(0);
    expect(exact.total).toBe(seeded404);
    expect(exact.log.entries).toHaveLength(seeded404);
    expect(exact.log.entries.every((e: Rec) => e.response.status === 404)).toBe(true);
    expect(ok.total + exact.total).toBeLessThanOrEqual(40);

    const search = await logs({ search: 'example\\.org' });
    expect(search.total).toBeGreaterThan(0);
    expect(search.log.entries.every((e: Rec) => e.request.url.includes('example.org'))).toBe(true);
    // A search alone that matches every entry lists them all and counts 0, as the real manager's log store
    // (RequestLogs.total); with a status filter after it, they are counted.
    const everything = await logs({ search: '^http' });
    expect(everything.log.entries).toHaveLength(40);
    expect(everything.total).toBe(0);
    expect((await logs({ search: '^http', status_code: '404' })).total).toBe(seeded404);
    const ports = await logs({ port_from: 24001, port_to: 24001 });
    const seeded24001 = all.log.entries.filter((e: Rec) => e.details.port === 24001).length;
    expect(seeded24001).toBeGreaterThan(0);
    expect(ports.total).toBe(seeded24001);
    expect(ports.log.entries).toHaveLength(seeded24001);
    expect(ports.log.entries.every((e: Rec) => e.details.port === 24001)).toBe(true);
    expect(ports.sum_in).toBe(ports.log.entries.reduce((n: number, e: Rec) => n + e.details.in_bw, 0));
    // `port`, `content_type`, `protocol`: exact, as the real manager reads them; `port` in place of a range.
    expect((await logs({ port: 24001 })).total).toBe(seeded24001);
    expect((await logs({ port: 24001, port_from: 1, port_to: 2 })).total).toBe(seeded24001);
    const https = all.log.entries.filter((e: Rec) => e.details.protocol === 'https').length;
    expect(https).toBeGreaterThan(0);
    expect(https).toBeLessThan(40);
    expect((await logs({ protocol: 'https' })).total).toBe(https);
    // The seed's entries are all of one kind: that kind lists them all, another none.
    const kind = all.log.entries[0].details.content_type;
    expect(all.log.entries.filter((e: Rec) => e.details.content_type === kind)).toHaveLength(40);
    expect((await logs({ content_type: kind })).total).toBe(40);
    expect((await logs({ content_type: kind === 'xhr' ? 'html' : 'xhr' })).total).toBe(0);

    const slow = await logs({ sort: 'time', sort_desc: true, limit: 5 });
    const times = slow.log.entries.map((e: Rec) => e.time);
    expect(times).toEqual([...times].sort((a, b) => b - a));
    // As the real manager: an unknown sort field is accepted, port_from alone is ignored, limit=0 is all,
    // a search that is no regular expression is its 500 text.
    expect((await t.manager.getLogs({ params: { query: { sort: 'nope' } } })).response.status).toBe(200);
    const every = await logs({ limit: 0 });
    expect(every.log.entries).toHaveLength(every.total);
    expect((await logs({ port_from: 24001 })).total).toBe(every.total);
    const bad = await t.manager.getLogs({ params: { query: { search: '(' } } });
    expect(bad.response.status).toBe(500);
    expect(bad.error).toMatchObject({ kind: 'text', error: 'Server error: Invalid regular expression: /(/: Unterminated group' });
  });

  it('recent_stats, general_logs, versions', async () => {
    const { manager } = t;
    const stats = (await manager.getRecentStats()).data;
    expect(stats?.total).toBe(40);
    expect(Object.keys(stats?.ports ?? {}).sort()).toEqual(['24000', '24001', '24002']);
    await manager.createProxy({ body: { proxy: { port: 24500 } } });
    const tail = (await manager.getGeneralLogs({ params: { query: { limit: 2 } } })).data as string;
    expect(tail.split('\n')).toHaveLength(2);
    expect(tail).toMatch(/port 24500 created$/);
    expect((await manager.getVersion()).data?.version).toBe('1.570.247');
    const latest = (await manager.getLatestVersion()).data;
    expect(latest).toMatchObject({ version: '1.571.3', newer: true });
    // As the real manager: the runtime's version string (web_api.js 743-752).
    expect((await manager.getNodeVersion()).data).toEqual({ current: process.versions.node, satisfied: true, recommended: '>=20.12.1' });
  });

  it('enable_ssl, restart (keeps config, drops bans and sessions), upgrade, shutdown (simulated)', async () => {
    const { manager } = t;
    expect((await manager.enableSsl()).data).toBe('ok');
    const afterSsl = (await manager.listProxies()).data ?? [];
    expect(afterSsl.length).toBeGreaterThan(0);
    expect(afterSsl.every((p) => p.ssl === true)).toBe(true);
    // As the real manager says it: SSL analyzing can be enabled while some port does not analyze SSL.
    expect((await manager.getRecentStats()).data?.ssl_enable).toBe(false);
    await manager.banIp({ params: { path: { port: 24000 } }, body: { ip: '10.9.9.9' } });
    await manager.refreshSessions({ params: { path: { port: 24000 } } });
    const ports = (await manager.listProxies()).data;

    expect((await manager.restartManager()).data).toEqual({ result: 'ok' });
    expect((await manager.listProxies()).data).toEqual(ports);
    expect((await manager.unbanIp({ params: { path: { port: 24000 } }, body: { ip: '10.9.9.9' } })).response.status).toBe(400);
    expect((await manager.refreshSessions({ params: { path: { port: 24000 } } })).data).toEqual({ session_id: '24000_1' });

    expect((await manager.upgradeManager()).data).toEqual({ result: 'ok' });
    expect((await manager.getVersion()).data?.version).toBe('1.571.3');
    expect((await manager.getLatestVersion()).data?.newer).toBe(false);

    expect((await manager.shutdownManager()).data).toEqual({ result: 'ok' });
    expect((await manager.getVersion()).response.status).toBe(200);
    expect((await manager.getGeneralLogs()).data).toMatch(/shutdown/);
  });

  it('refuses clients outside www_whitelist_ips with the observed 403 text (loopback is always allowed)', () => {
    const store = {
      manager: { token: 'tok', settings: { www_whitelist_ips: ['198.51.100.0/24'], fixed_whitelist_ips: [] } },
    } as unknown as Store;
    // The operations as the bundle states them (their security and x-client-ip-check decide).
    const ops = new Map(routesOf(loadBundle('manager')).map((o) => [o.operationId, o]));
    const op = (operationId: string) => ops.get(operationId) as OperationDef;
    const req = (ip: string, authorization?: string) =>
      ({ ip, headers: authorization ? { authorization } : {} }) as unknown as FastifyRequest;
    const check = (ip: string, id: string, auth?: string) => () => authenticateManager(store, req(ip, auth), {} as FastifyReply, op(id));
    expect(check('127.0.0.1', 'listProxies')).not.toThrow();
    expect(check('198.51.100.9', 'listProxies')).not.toThrow();
    expect(check('203.0.113.5', 'getVersion')).not.toThrow();
    expect(check('203.0.113.5', 'addWhitelistIp', 'tok')).not.toThrow();
    let refused: unknown;
    try {
      check('203.0.113.5', 'listProxies')();
    } catch (err) {
      refused = err;
    }
    expect(refused).toMatchObject({ status: 403, text: true, headers: { 'x-service-block-ip': '203.0.113.5' } });
    expect((refused as Error).message).toMatch(/^Connection from your IP is forbidden/);
  });

  it('every /api response carries Deprecation and Sunset, errors and 404s included', async () => {
    for (const [method, path] of [
      ['GET', '/api/version'],
      ['DELETE', '/api/proxies/24999'],
      ['GET', '/api/no_such_thing'],
    ] as const) {
      const r = await raw(t.sandbox.managerUrl, method, path);
      expect(r.headers.get('deprecation'), path).toBe('true');
      expect(r.headers.get('sunset'), path).toBe(MANAGER_SUNSET);
    }
  });
});

describe("the real program's user paths", () => {
  it("serves /api/lpm_users and /api/lpm_user beside the spec's pm paths; the client reaches them by default", async () => {
    const manager = createManagerClient({ baseUrl: t.sandbox.managerUrl, retry: false });
    const added = await manager.addUser({ body: { email: 'lpm-path@example.com' } });
    expect(added.error).toBeUndefined();
    const users = await manager.listUsers();
    expect(users.response.url).toMatch(/\/api\/lpm_users$/);
    expect(users.data?.map((u) => u.email)).toContain('lpm-path@example.com');
    const viaSpec = await raw(t.sandbox.managerUrl, 'GET', '/api/pm_users');
    expect(viaSpec.json()).toEqual(users.data);
  });
});
