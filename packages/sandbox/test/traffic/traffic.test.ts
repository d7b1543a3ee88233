import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import { createManagerClient } from '@zone-api/manager-client';
import { basicAuth, freePort, peerOf, tunnelThrough, viaProxy } from '@zone-api/testkit';
import { ProxyAgent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultSeed, startSandbox, validateSeed } from '../../src/index.js';
import { parseUsername } from '../../src/traffic/username.js';
import { C, docs, listenOnLoopback, RES, RES_PW, type Rec, STATIC, useTrafficSandbox } from '../helpers.js';

// Traffic through the sandbox, offline: the emulated proxy network and listening proxy ports, sending
// requests only to a loopback target this file starts. Usage shows up in the account API, each request
// through a port in the manager's HAR log and stats, bans and sessions change the exit peer.

const DC = 'dc_zone_2';
const DC_PW = 'd4c2z6n8q1p0';
const t = useTrafficSandbox();

let target: Server;
let targetUrl: string;
const seen: { url: string; headers: IncomingHttpHeaders; body: string }[] = [];

beforeAll(async () => {
  target = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => {
      seen.push({ url: req.url ?? '', headers: req.headers, body });
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ path: req.url, echo: body }));
    });
  });
  targetUrl = `http://127.0.0.1:${await listenOnLoopback(target)}`;
});
afterAll(() => new Promise<void>((resolve) => target.close(() => resolve())));

const user = (zone: string, extra = '') => `lum-customer-${C}-zone-${zone}${extra}`;

/**
 * One request through a proxy: in absolute-URI form (node's http client, which shows the proxy's own
 * answers whole), or through a CONNECT tunnel (`tunnel: true`, undici's ProxyAgent).
 */
async function via(proxy: string, url: string, o: { auth?: string; tunnel?: boolean; method?: string; body?: string } = {}) {
  if (!o.tunnel) return viaProxy(proxy, url, o);
  const agent = new ProxyAgent({ uri: proxy, ...(o.auth ? { token: o.auth } : {}) });
  try {
    const res = await request(url, { dispatcher: agent, method: (o.method ?? 'GET') as 'GET', body: o.body });
    return { status: res.statusCode, headers: res.headers, text: await res.body.text() };
  } catch (err) {
    // undici reports a refused tunnel as an error carrying the proxy's status.
    const e = err as Error & { cause?: Error };
    return { status: Number(/\b(\d{3})\b/.exec(`${e.message} ${e.cause?.message ?? ''}`)?.[1] ?? 0), headers: {}, text: e.message };
  } finally {
    await agent.close();
  }
}

/**
 * One plain request through a manager port, and its exit peer: the port hands on the network's answer
 * to its `brd-customer-…` user, `x-brd-ip` with it, as the real manager does, and its HAR entry names
 * the same peer (`header`: an external proxy's own user may be of another brand). `path` must be unique
 * to this request (its part before `?` is the log's search pattern).
 */
async function peerThroughPort(proxy: string, path: string, header = 'x-brd-ip'): Promise<string> {
  const res = await via(proxy, `${targetUrl}${path}`);
  expect(res.status, res.text).toBe(200);
  const port = Number(new URL(proxy).port);
  let peer: string | undefined;
  await expect
    .poll(async () => {
      const logs = (
        await t.manager.getLogs({ params: { query: { search: path.split('?')[0], port_from: port, port_to: port, limit: 10 } } })
      ).data as Rec;
      peer = logs.log.entries.find((e: Rec) => e.request.url === `${targetUrl}${path}`)?.details.proxy_peer;
      return peer;
    })
    .toMatch(/^\d+\.\d+\.\d+\.\d+$/);
  expect(res.headers[header]).toBe(peer);
  return peer as string;
}

describe('the proxy network', () => {
  it('forwards an absolute-URI request, names the exit peer, and keeps it for the session', async () => {
    const a = await via(t.sandbox.networkUrl as string, `${targetUrl}/hello?x=1`, { auth: basicAuth(user(DC, '-session-s1'), DC_PW) });
    expect(a.status).toBe(200);
    expect(JSON.parse(a.text)).toEqual({ path: '/hello?x=1', echo: '' });
    expect(['192.0.2.121', '192.0.2.122']).toContain(peerOf(a.headers));
    const again = await via(t.sandbox.networkUrl as string, `${targetUrl}/again`, { auth: basicAuth(user(DC, '-session-s1'), DC_PW) });
    expect(peerOf(again.headers)).toBe(peerOf(a.headers));
    const other = await via(t.sandbox.networkUrl as string, `${targetUrl}/other`, { auth: basicAuth(user(DC, '-session-s2'), DC_PW) });
    expect(peerOf(other.headers)).not.toBe(peerOf(a.headers));
    // Targeting by asn, state and city picks among the Zone's own peers (res_zone: AS7922 gIPs in New York).
    const inNy = await via(t.sandbox.networkUrl as string, targetUrl, {
      auth: basicAuth(user(RES, '-asn-7922-state-ny-city-newyork'), RES_PW),
    });
    expect(inNy.status).toBe(200);
    const nyPeers = t.sandbox
      .state()
      .peers.filter((p) => p.vip?.startsWith('us_7922_ny_newyork_'))
      .map((p) => p.ip);
    expect(nyPeers).toContain(peerOf(inNy.headers));
    const otherAsn = await via(t.sandbox.networkUrl as string, targetUrl, { auth: basicAuth(user(RES, '-asn-3320'), RES_PW) });
    expect(t.sandbox.state().peers.find((p) => p.ip === peerOf(otherAsn.headers))?.asn).toBe('3320');
    expect(
      (await via(t.sandbox.networkUrl as string, targetUrl, { auth: basicAuth(user(RES, '-city-paris'), RES_PW) })).headers[
        'x-luminati-err-code'
      ],
    ).toBe('no_peers');
    // A country the Zone has no peer in.
    const none = await via(t.sandbox.networkUrl as string, targetUrl, { auth: basicAuth(user(DC, '-country-zz'), DC_PW) });
    expect(none.status).toBe(502);
    expect(none.headers['x-luminati-err-code']).toBe('no_peers');
  });

  it('tunnels CONNECT and bills the tunnel when it closes', async () => {
    const res = await via(t.sandbox.networkUrl as string, `${targetUrl}/tunnelled`, {
      auth: basicAuth(user(RES, '-session-t1'), RES_PW),
      tunnel: true,
    });
    expect(res.status).toBe(200);
    expect(JSON.parse(res.text).path).toBe('/tunnelled');
    await expect
      .poll(async () => (await t.account.listRequestLogs({ params: { query: { zone: RES, 'tun.session': 't1' } } })).data?.length)
      .toBe(1);
  });

  it('a tunnel to a target that refuses is logged as such, not as an open tunnel', async () => {
    const closed = await freePort();
    const network = new URL(t.sandbox.networkUrl as string);
    // A raw CONNECT: the network answers 502 (target_unreachable), not 200.
    const answered = await new Promise<number | string>((resolve) => {
      const req = httpRequest({
        host: network.hostname,
        port: network.port,
        method: 'CONNECT',
        path: `127.0.0.1:${closed}`,
        headers: { 'proxy-authorization': basicAuth(user(RES, '-session-refused'), RES_PW) },
        agent: false,
      });
      req.on('connect', (res, socket) => {
        socket.destroy();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? 'error'));
      req.end();
    });
    expect(answered).toBe(502);
    await expect
      .poll(async () => (await t.account.listRequestLogs({ params: { query: { zone: RES, 'tun.session': 'refused' } } })).data as Rec[])
      .toMatchObject([{ status: { code: 502, message: 'Target unreachable' }, bw: 0 }]);
  });

  it('refuses each broken rule with its own error, in x-<brand>-error and Proxy-Status', async () => {
    const refused = async (u: string, pw: string, url = targetUrl) => {
      const r = await via(t.sandbox.networkUrl as string, url, { auth: basicAuth(u, pw) });
      return { status: r.status, code: r.headers['x-luminati-err-code'], proxyStatus: r.headers['proxy-status'] };
    };
    expect(await refused(user(DC), 'wrong')).toEqual({
      status: 407,
      code: 'auth_failed',
      proxyStatus: 'zone-api-sandbox; error=http_request_denied; details="auth_failed"',
    });
    expect((await refused('not-a-provider-username', DC_PW)).status).toBe(407);
    expect((await refused(user(DC, '-session-a*b'), DC_PW)).status).toBe(407);
    // An option the network does not know is ignored, as the provider's is; --strict refuses it. `debug` it
    // knows: the real manager's ports send it on every request (`-debug-none`, control-headers.test.ts).
    expect((await refused(user(DC, '-foo-bar-session-ok'), DC_PW)).status).toBe(200);
    expect(parseUsername(user(DC, '-foo-bar'), true)).toEqual({ error: expect.stringMatching(/option foo .*--strict/) });
    expect(parseUsername(user(DC, '-debug-none'), true)).toMatchObject({ zone: DC, options: { debug: 'none' } });
    expect(parseUsername(user(DC, '-country-us-debug-full'))).toMatchObject({ zone: DC, options: { country: 'us', debug: 'full' } });
    // static_zone's whitelist does not hold loopback.
    expect((await refused(user(STATIC), 'z8x7c6v5b4n3')).code).toBe('client_ip_forbidden');
    // res_zone blacklists blocked.example.com; any other name than loopback stays inside the sandbox.
    expect((await refused(user(RES), RES_PW, 'http://blocked.example.com/')).code).toBe('domain_forbidden');
    const egress = await via(t.sandbox.networkUrl as string, 'http://example.org/', { auth: basicAuth(user(RES), RES_PW) });
    expect(egress.status).toBe(403);
    expect(egress.headers['proxy-status']).toBe('zone-api-sandbox; error=destination_ip_prohibited; details="egress_refused"');
    expect(egress.text).toMatch(/--egress-allow/);
    // The network answers the provider's test host itself only for a plain HTTP request (the status
    // check's GET); a tunnel to it would leave the sandbox, so egress refuses it as it refuses any name.
    const testHost = await tunnelThrough(t.sandbox.networkUrl as string, 'geo.brdtest.com:443', { auth: basicAuth(user(RES), RES_PW) });
    expect(testHost.status).toBe(403);
    expect(testHost.headers['proxy-status']).toBe('zone-api-sandbox; error=destination_ip_prohibited; details="egress_refused"');
    const plain = await via(t.sandbox.networkUrl as string, 'http://geo.brdtest.com/mygeo.json', { auth: basicAuth(user(RES), RES_PW) });
    expect(plain.status).toBe(200);

    await t.account.changeZoneDisable({ body: { zone: DC, disable: 1 } });
    expect(await refused(user(DC), DC_PW)).toMatchObject({ status: 403, code: 'zone_disabled' });
    await t.account.changeZoneDisable({ body: { zone: DC, disable: 0 } });
    await t.account.setAccountStatus({ body: { status: 'suspend_manual' } });
    expect(await refused(user(DC), DC_PW)).toMatchObject({ status: 403, code: 'account_suspended' });
    await t.account.setAccountStatus({ body: { status: 'active' } });
    expect((await refused(user(DC), DC_PW)).status).toBe(200);
  });

  it('bills every request to its Zone: request logs, bandwidth, cost and pending costs', async () => {
    const before = (await t.account.getBalance()).data?.pending_costs as number;
    const bwBefore = (await t.account.getZoneBandwidth({ params: { query: { zone: RES } } })).data as Rec;
    const body = 'x'.repeat(10_000);
    for (let i = 0; i < 3; i++) {
      const r = await via(t.sandbox.networkUrl as string, `${targetUrl}/billed/${i}`, {
        auth: basicAuth(user(RES, '-session-bill'), RES_PW),
        method: 'POST',
        body,
      });
      expect(r.status).toBe(200);
    }
    const logs = (await t.account.listRequestLogs({ params: { query: { zone: RES, 'tun.session': 'bill' } } })).data as Rec[];
    expect(logs.map((l) => l.dst.url).sort()).toEqual([0, 1, 2].map((i) => `${targetUrl}/billed/${i}`));
    expect(logs[0]).toMatchObject({ zone: RES, status: { code: 200 }, dst: { host: '127.0.0.1' }, ua: expect.any(String) });
    expect(logs.every((l) => l.bw > 20_000)).toBe(true);
    const sum = (bw: Rec) => (bw[C].data[RES].bw_sum as number[]).reduce((n, x) => n + x, 0);
    const bwAfter = (await t.account.getZoneBandwidth({ params: { query: { zone: RES } } })).data as Rec;
    expect(sum(bwAfter)).toBeGreaterThanOrEqual(sum(bwBefore) + 60_000);
    const after = (await t.account.getBalance()).data?.pending_costs as number;
    expect(after).toBeGreaterThan(before);
  });
});

describe('proxy ports that carry traffic', () => {
  it('an iface that names no address nor interface listens on loopback (the real manager: every interface), with or without a port given', async () => {
    const given = await freePort();
    for (const proxy of [
      { port: given, iface: 'x1', zone: RES },
      { iface: 'x1', zone: RES },
    ]) {
      const created = await t.manager.createProxy({ body: { proxy } });
      expect(created.response.status, JSON.stringify(created.error)).toBe(200);
      const port = created.data?.data?.port as number;
      expect(t.sandbox.listeningPorts()).toContain(port);
      expect((await viaProxy(`http://127.0.0.1:${port}`, `${targetUrl}/iface`)).status).toBe(200);
      await t.manager.deleteProxy({ params: { path: { port } } });
    }
  });

  it('create -> requests -> HAR log, stats -> ban -> the next request avoids the peer -> refresh -> delete closes', async () => {
    const { manager } = t;
    const port = await freePort();
    const created = await manager.createProxy({ body: { proxy: { port, zone: RES, headers: [{ name: 'x-from-port', value: 'yes' }] } } });
    expect(created.response.status).toBe(200);
    // What the port shows is its upstream, the sandbox's network (the real manager's complete configuration has
    // no `iface` unless given: where ports listen is the sandbox's own choice, loopback).
    const network = new URL(t.sandbox.networkUrl as string);
    expect(created.data?.data).toMatchObject({ proxy: '127.0.0.1', proxy_port: Number(network.port), hosts: ['127.0.0.1'] });
    expect(created.data?.data).not.toHaveProperty('iface');
    expect(t.sandbox.listeningPorts()).toContain(port);
    const proxy = `http://127.0.0.1:${port}`;

    const peer = await peerThroughPort(proxy, '/through-port?q=1');
    expect(seen.at(-1)?.headers['x-from-port']).toBe('yes');
    expect(await peerThroughPort(proxy, '/same-session')).toBe(peer);

    const logs = (await manager.getLogs({ params: { query: { search: 'through-port', limit: 10 } } })).data as Rec;
    expect(logs.log.entries).toHaveLength(1);
    expect(logs.log.entries[0]).toMatchObject({
      request: { method: 'GET', url: `${targetUrl}/through-port?q=1`, host: '127.0.0.1', httpVersion: 'unknown', queryString: [] },
      response: { status: 200, content: { mimeType: 'application/json', text: '{"path":"/through-port?q=1","echo":""}' } },
      details: {
        port,
        proxy_peer: peer,
        protocol: 'http',
        success: 1,
        remote_address: '127.0.0.1',
        super_proxy: `127.0.0.1:${network.port}`,
        username: expect.stringMatching(new RegExp(`^brd-customer-${C}-zone-${RES}-session-${port}_\\d+-debug-none$`)),
        timeline: [expect.objectContaining({ port, session: expect.stringMatching(new RegExp(`^${port}_`)) })],
        rules: [],
      },
      serverIPAddress: `127.0.0.1:${network.port}`,
    });
    expect(logs.log.entries[0].comment).toBe(logs.log.entries[0].details.username);
    expect(logs.log.entries[0].details).not.toHaveProperty('password');
    // recent_stats in the real manager's shape: per port, status code, root domain and protocol.
    const stats = (await manager.getRecentStats()).data as Rec;
    expect(stats.ports[String(port)]).toEqual({
      key: port,
      reqs: 2,
      success: 2,
      in_bw: expect.any(Number),
      out_bw: expect.any(Number),
      bypass_bw: 0,
      bypass_cost: 0,
    });
    expect(stats.ports[String(port)].in_bw).toBeGreaterThan(0);
    expect(stats.hostname.find((h: Rec) => h.key === '127.0.0.1')?.reqs).toBeGreaterThanOrEqual(2);
    expect(stats.status_code.find((h: Rec) => h.key === 200)?.reqs).toBeGreaterThanOrEqual(2);

    // The peer banned for this port: the port takes a new session, and the next request exits elsewhere.
    await manager.banIp({ params: { path: { port } }, body: { ip: peer } });
    expect(await peerThroughPort(proxy, '/after-ban')).not.toBe(peer);
    await manager.unbanIp({ params: { path: { port } }, body: { ip: peer } });

    // refresh_sessions: the next request comes from another peer.
    const before = await peerThroughPort(proxy, '/before-refresh');
    await manager.refreshSessions({ params: { path: { port } } });
    expect(await peerThroughPort(proxy, '/after-refresh')).not.toBe(before);

    // The usage of the port's requests is the Zone's, in the account API: the request the banned peer
    // answered was billed too (the network served it; the port dropped it and took a new session).
    const billed = (await t.account.listRequestLogs({ params: { query: { zone: RES, 'dst.url': `${targetUrl}/after-ban` } } }))
      .data as Rec[];
    expect(billed).toHaveLength(2);
    expect(new Set(billed.map((l) => l.tun.session)).size).toBe(2);

    await manager.deleteProxy({ params: { path: { port } } });
    expect(t.sandbox.listeningPorts()).not.toContain(port);
    expect((await via(proxy, targetUrl)).status).toBe(0);
    // What traffic wrote still loads as a state (HAR entries, request logs).
    expect(() => validateSeed(t.sandbox.state(), docs)).not.toThrow();
  });

  it('a port that cannot bind is refused at create, naming the port; a move listens anew', async () => {
    const busy = createServer();
    const taken = await listenOnLoopback(busy);
    try {
      const res = await t.manager.createProxy({ body: { proxy: { port: taken, zone: RES } } });
      expect(res.response.status).toBe(400);
      expect(JSON.stringify(res.error)).toMatch(new RegExp(`port ${taken} cannot be opened on 127.0.0.1: EADDRINUSE`));
      expect((await t.manager.listProxies()).data?.map((p) => p.port)).not.toContain(taken);
    } finally {
      busy.close();
    }
    const from = await freePort();
    const to = await freePort();
    await t.manager.createProxy({ body: { proxy: { port: from, zone: RES } } });
    await t.manager.updateProxy({ params: { path: { port: from } }, body: { proxy: { port: to } } });
    expect(t.sandbox.listeningPorts()).toContain(to);
    expect(t.sandbox.listeningPorts()).not.toContain(from);
    expect((await via(`http://127.0.0.1:${to}`, `${targetUrl}/moved`)).status).toBe(200);
    await t.manager.deleteProxy({ params: { path: { port: to } } });
  });

  it('a CONNECT through a port is logged as the real manager logs a tunnel it does not open', async () => {
    const port = await freePort();
    await t.manager.createProxy({ body: { proxy: { port, zone: RES } } });
    const res = await via(`http://127.0.0.1:${port}`, `${targetUrl}/tunnel-through-port`, { tunnel: true });
    expect(res.status).toBe(200);
    await expect
      .poll(
        async () => ((await t.manager.getLogs({ params: { query: { port_from: port, port_to: port } } })).data as Rec).log.entries.length,
      )
      .toBe(1);
    const entry = ((await t.manager.getLogs({ params: { query: { port_from: port, port_to: port } } })).data as Rec).log.entries[0];
    // Its authority as the URL, the network's answer to the CONNECT as the response (status and body
    // `unknown` only for port 443: proven in the real-manager suite), the protocol by the port.
    expect(entry).toMatchObject({
      request: { method: 'CONNECT', url: new URL(targetUrl).host, host: '127.0.0.1' },
      response: { status: 200, statusText: 'Connection established', content: { mimeType: 'unknown', text: '' } },
      details: { port, protocol: 'http', content_type: 'other', success: 1 },
    });
    expect(entry.response.headers.map((h: Rec) => h.name)).toContain('x-brd-ip');
    expect(entry.details.in_bw).toBeGreaterThan(entry.response.content.size);
    await t.manager.deleteProxy({ params: { path: { port } } });
  });

  it('settings `logs`: false (0) logs no request, and a number keeps that many of the newest (the real manager, proven side by side)', async () => {
    const { manager } = t;
    const port = await freePort();
    await manager.createProxy({ body: { proxy: { port, zone: RES } } });
    const proxy = `http://127.0.0.1:${port}`;
    const logged = async () =>
      ((await manager.getLogs({ params: { query: { port_from: port, port_to: port } } })).data as Rec).log.entries.map(
        (e: Rec) => new URL(e.request.url).pathname,
      );
    try {
      expect((await manager.updateSettings({ body: { logs: false } })).data?.logs).toBe(0);
      for (const path of ['/not-logged-1', '/not-logged-2']) expect((await via(proxy, `${targetUrl}${path}`)).status).toBe(200);
      await t.sandbox.settled();
      // Both requests went through (the target saw them), and neither was logged.
      expect(seen.map((r) => r.url)).toEqual(expect.arrayContaining(['/not-logged-1', '/not-logged-2']));
      expect(await logged()).toEqual([]);
      expect((await manager.updateSettings({ body: { logs: 2 } })).data?.logs).toBe(2);
      for (const path of ['/kept-1', '/kept-2', '/kept-3']) expect((await via(proxy, `${targetUrl}${path}`)).status).toBe(200);
      await t.sandbox.settled();
      expect((await logged()).sort()).toEqual(['/kept-2', '/kept-3']);
    } finally {
      await manager.updateSettings({ body: { logs: 1000 } });
      await manager.deleteProxy({ params: { path: { port } } });
    }
  });
});

describe('time under control', () => {
  it('ban -> the next request avoids the peer -> advance the clock -> the ban has expired; usage lands on the sandbox day', async () => {
    const { manager } = t;
    const port = await freePort();
    await manager.createProxy({ body: { proxy: { port, zone: RES } } });
    const proxy = `http://127.0.0.1:${port}`;
    try {
      const peer = await peerThroughPort(proxy, '/clock-1');
      await manager.banIp({ params: { path: { port } }, body: { ip: peer, ms: 60_000 } });
      expect(await peerThroughPort(proxy, '/clock-2')).not.toBe(peer);
      t.sandbox.clock.advance(59_000);
      expect(await peerThroughPort(proxy, '/clock-3')).not.toBe(peer);
      t.sandbox.clock.advance(2_000);
      expect(await peerThroughPort(proxy, '/clock-4')).toBe(peer);

      // Two days on: a request is billed on the sandbox's day, and the reports show it there.
      t.sandbox.clock.advance(2 * 86_400_000);
      const day = t.sandbox.clock.now().toISOString().slice(0, 10);
      expect(day).not.toBe(new Date().toISOString().slice(0, 10));
      const r = await via(t.sandbox.networkUrl as string, `${targetUrl}/later`, { auth: basicAuth(user(RES, '-session-later'), RES_PW) });
      expect(r.status).toBe(200);
      const logs = (await t.account.listRequestLogs({ params: { query: { zone: RES, 'tun.session': 'later' } } })).data as Rec[];
      expect(logs.map((l) => (l.ts as string).slice(0, 10))).toEqual([day]);
      const bw = (await t.account.getZoneBandwidth({ params: { query: { zone: RES, from: day, to: day } } })).data as Rec;
      expect(bw[C].data[RES].bw_sum[0]).toBeGreaterThan(0);
    } finally {
      t.sandbox.clock.reset();
      await manager.deleteProxy({ params: { path: { port } } });
    }
  });

  it("the manager's token rate limit counts on the sandbox's clock", async () => {
    await t.sandbox.reset();
    try {
      for (let i = 0; i < 5; i++) expect((await t.manager.getNewToken()).response.status).toBe(200);
      expect((await t.manager.getNewToken()).response.status).toBe(429);
      t.sandbox.clock.advance(3_600_000);
      expect((await t.manager.getNewToken()).response.status).toBe(200);
    } finally {
      t.sandbox.clock.reset();
      await t.sandbox.reset();
    }
  });

  it('the clock moves over HTTP too, forward only, and refuses what it cannot do by field', async () => {
    const base = t.sandbox.managerUrl;
    const post = (body: unknown) =>
      fetch(`${base}/__sandbox/clock`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const before = Date.parse(((await (await fetch(`${base}/__sandbox/clock`)).json()) as Rec).now);
    const moved = (await (await post({ advance_ms: 3_600_000 })).json()) as Rec;
    expect(moved.offset_ms).toBe(3_600_000);
    expect(Date.parse(moved.now) - before).toBeGreaterThanOrEqual(3_600_000);
    const back = await post({ set: '2020-01-01T00:00:00Z' });
    expect(back.status).toBe(400);
    expect(((await back.json()) as Rec).details).toEqual([{ field: 'body.set', reason: expect.stringMatching(/only moves forward/) }]);
    expect((await post({ advance_ms: -1 })).status).toBe(400);
    expect((await post({ advance_ms: 1, set: '2030-01-01T00:00:00Z' })).status).toBe(400);
    const reset = (await (await fetch(`${base}/__sandbox/clock`, { method: 'DELETE' })).json()) as Rec;
    expect(reset.offset_ms).toBe(0);
  });
});

describe("a port's upstream settings", () => {
  it('throttle: at most N requests of the port at once reach the upstream', async () => {
    let inFlight = 0;
    let most = 0;
    const slow = createServer((_req, res) => {
      inFlight++;
      most = Math.max(most, inFlight);
      setTimeout(() => {
        inFlight--;
        res.end('slow');
      }, 100);
    });
    const slowUrl = `http://127.0.0.1:${await listenOnLoopback(slow)}/`;
    const port = await freePort();
    await t.manager.createProxy({ body: { proxy: { port, zone: RES, throttle: 1 } } });
    try {
      const three = await Promise.all([1, 2, 3].map(() => via(`http://127.0.0.1:${port}`, slowUrl)));
      expect(three.map((r) => r.status)).toEqual([200, 200, 200]);
      expect(most).toBe(1);
      most = 0;
      await t.manager.updateProxy({ params: { path: { port } }, body: { proxy: { throttle: 0 } } });
      await Promise.all([1, 2, 3].map(() => via(`http://127.0.0.1:${port}`, slowUrl)));
      expect(most).toBeGreaterThan(1);
    } finally {
      await t.manager.deleteProxy({ params: { path: { port } } });
      slow.close();
    }
  });

  it("an upstream that cannot be reached: sent once whatever proxy_retry says, the port's own 502 (no body, Node's message), logged; its status check sent three times", async () => {
    let connections = 0;
    const broken = createNetServer((socket) => {
      connections++;
      socket.destroy();
    });
    const brokenPort = await listenOnLoopback(broken);
    // The upstream as the real manager takes it, manager-wide (--proxy, --proxy_port): a port's own is not followed.
    const seed = defaultSeed();
    seed.manager.ports = [];
    seed.manager.har = [];
    const s = await startSandbox({
      accountPort: 0,
      managerPort: 0,
      proxyPorts: true,
      freeProxyPorts: false,
      seed,
      upstream: { host: '127.0.0.1', port: brokenPort },
    });
    const manager = createManagerClient({ baseUrl: s.managerUrl, retry: false, brand: 'pm' });
    const port = await freePort();
    await manager.createProxy({ body: { proxy: { port, zone: RES, proxy_retry: 3 } } });
    try {
      const res = await via(`http://127.0.0.1:${port}`, `${targetUrl}/retry`);
      expect([res.status, res.text, res.headers.connection, res.headers['transfer-encoding']]).toEqual([502, '', 'close', 'chunked']);
      const error = res.headers['x-lpm-error'];
      expect(error).toMatch(/^(socket hang up|read ECONNRESET)$/);
      expect(connections).toBe(1);
      // The status check goes through the port as a request does, again as got retries a 502 (1 s, 2 s): the port's error is its status.
      expect((await manager.getProxyStatus({ params: { path: { port } } })).data).toEqual({ status: error, status_details: [] });
      expect(connections).toBe(4);
      await s.settled();
      const entries = ((await manager.getLogs({ params: { query: { limit: 0 } } })).data as Rec).log.entries as Rec[];
      const seen = entries.map(
        (e) => `${(e.details as Rec).context} ${(e.response as Rec).status} ${JSON.stringify((e.response as Rec).headers)}`,
      );
      const failed = JSON.stringify([
        { name: 'Connection', value: 'close' },
        { name: 'x-lpm-error', value: error },
      ]);
      expect(seen.sort()).toEqual([`RESPONSE 502 ${failed}`, ...Array.from({ length: 3 }, () => `STATUS CHECK 502 ${failed}`)]);
    } finally {
      await s.close();
      broken.close();
    }
  });

  it("a port's own proxy and proxy_port are stored, not followed: its traffic goes through the manager's upstream (the network)", async () => {
    const port = await freePort();
    const nowhere = await freePort();
    const created = await t.manager.createProxy({ body: { proxy: { port, zone: RES, proxy: '127.0.0.2', proxy_port: nowhere } } });
    // The running port's upstream port is the manager's, as the real manager's `{data}` shows it.
    expect(created.data?.data).toMatchObject({ proxy: '127.0.0.2', proxy_port: Number(new URL(t.sandbox.networkUrl as string).port) });
    try {
      const stored = (await t.manager.listProxies()).data?.find((p) => p.port === port);
      expect(stored).toMatchObject({ proxy: '127.0.0.2', proxy_port: nowhere });
      const res = await via(`http://127.0.0.1:${port}`, `${targetUrl}/own-proxy`);
      expect(res.status, res.text).toBe(200);
      expect(JSON.parse(res.text)).toMatchObject({ path: '/own-proxy' });
    } finally {
      await t.manager.deleteProxy({ params: { path: { port } } });
    }
  });

  it('proxy_status sends test_url through the port (STATUS CHECK), which the network answers offline; the last status until force', async () => {
    const port = await freePort();
    await t.manager.createProxy({ body: { proxy: { port, zone: RES } } });
    const checks = async () =>
      ((await t.manager.getLogs({ params: { query: { port_from: port, port_to: port } } })).data as Rec).log.entries.filter(
        (e: Rec) => e.details.context === 'STATUS CHECK',
      );
    try {
      const testUrl = (await t.manager.getSettings()).data?.test_url;
      expect(testUrl).toBe('http://geo.brdtest.com/mygeo.json');
      expect((await t.manager.getProxyStatus({ params: { path: { port } } })).data).toEqual({ status: 'ok', status_details: [] });
      await t.sandbox.settled();
      const [first, ...more] = await checks();
      expect(more).toHaveLength(0);
      expect(first).toMatchObject({ request: { method: 'GET', url: testUrl }, response: { status: 200 } });
      // Neither the context nor the manager's agent header is passed on or logged.
      expect(first.request.headers.map((h: Rec) => h.name.toLowerCase())).not.toContain('x-hola-context');
      expect(JSON.parse(first.response.content.text)).toMatchObject({ ip: first.details.proxy_peer, country: expect.any(String) });
      expect((await t.manager.getProxyStatus({ params: { path: { port } } })).data).toEqual({ status: 'ok', status_details: [] });
      await t.sandbox.settled();
      expect(await checks()).toHaveLength(1);
      await t.manager.getProxyStatus({ params: { path: { port }, query: { force: true } } });
      await t.sandbox.settled();
      expect(await checks()).toHaveLength(2);
    } finally {
      await t.manager.deleteProxy({ params: { path: { port } } });
    }
  });

  it("a port's own customer names it upstream: the network refuses a customer it does not know (407), as the real manager's upstream", async () => {
    const port = await freePort();
    await t.manager.createProxy({ body: { proxy: { port, zone: RES, customer: 'Someone Else' } } });
    try {
      const res = await via(`http://127.0.0.1:${port}`, `${targetUrl}/customer`);
      expect(res.status, res.text).toBe(407);
      await t.manager.updateProxy({ params: { path: { port } }, body: { proxy: { customer: C } } });
      expect((await via(`http://127.0.0.1:${port}`, `${targetUrl}/customer`)).status).toBe(200);
    } finally {
      await t.manager.deleteProxy({ params: { path: { port } } });
    }
  });

  it('ext_proxies: requests go through the external proxies in turn, with their credentials', async () => {
    const port = await freePort();
    const network = new URL(t.sandbox.networkUrl as string);
    const ext = `${user(DC)}:${DC_PW}@127.0.0.1:${network.port}`;
    const created = await t.manager.createProxy({ body: { proxy: { port, zone: RES, ext_proxies: [ext] } } });
    expect(created.response.status, JSON.stringify(created.error)).toBe(200);
    try {
      // The external proxy's credential, not the port's Zone: the exit is a dc_zone_2 IP.
      expect(['192.0.2.121', '192.0.2.122']).toContain(await peerThroughPort(`http://127.0.0.1:${port}`, '/ext', 'x-luminati-ip'));
      expect((await t.manager.getProxyStatus({ params: { path: { port } } })).data).toMatchObject({ status: 'ok' });
      // The documented `{proxy}` form: stored, and each request its turn falls on fails as the real manager's reading of it.
      await t.manager.updateProxy({ params: { path: { port } }, body: { proxy: { ext_proxies: [{ proxy: ext }] } } });
      const res = await via(`http://127.0.0.1:${port}`, `${targetUrl}/ext`);
      expect([res.status, res.headers['x-lpm-error']]).toEqual([502, '_url.match is not a function']);
      expect((await t.manager.getProxyStatus({ params: { path: { port }, query: { force: true } } })).data).toEqual({
        status: '_url.match is not a function',
        status_details: [],
      });
      // An external proxy that refuses the connection: the real manager's status says so.
      await t.manager.updateProxy({ params: { path: { port } }, body: { proxy: { ext_proxies: ['127.0.0.1:1'] } } });
      expect((await via(`http://127.0.0.1:${port}`, `${targetUrl}/ext`)).status).toBe(502);
      expect((await t.manager.getProxyStatus({ params: { path: { port }, query: { force: true } } })).data).toMatchObject({
        status: 'connection refused (may have been caused due to firewall settings)',
      });
    } finally {
      await t.manager.deleteProxy({ params: { path: { port } } });
    }
  });
});
