import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { type AddressInfo, createServer as createTcpServer, type Server as TcpServer } from 'node:net';
import type { Sandbox } from '@zone-api/sandbox';
import { freePort, loadBundle, schemaValidator, tunnelThrough, viaProxy } from '@zone-api/testkit';
import type { RunningRealManager } from '@zone-api/testkit/real-manager';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSideBySide } from './pair.js';

// The real local proxy manager forwards through the sandbox's proxy network (run by
// `pnpm test:real-manager`, inside a network namespace with only loopback): the real program is
// started with `--proxy 127.0.0.1 --proxy_port <the network>`, one of its ports carries a request to a
// loopback target, and the request arrives, shows in the real manager's own HAR log with the exit
// peer the network named, and is billed in the sandbox's account API. This proves the network reads
// the username the real program builds and answers in the headers the real program reads.

const CUSTOMER = 'hl_1a2b3c4d';
const ZONE = 'res_zone';
const validator = schemaValidator(loadBundle('manager'));
const PASSWORD = 'r3s1d3nt9x7w';

let sandbox: Sandbox;
let manager: RunningRealManager;
let target: Server;
let targetUrl: string;
let echo: TcpServer;
let echoAt: string;
const arrived: { url: string; headers: IncomingHttpHeaders }[] = [];
// biome-ignore lint/suspicious/noExplicitAny: HAR entries of the real program, read field by field
type HarLog = { log: { version?: string; creator?: { name: string; version: string }; entries: Array<Record<string, any>> } };
type HarEntry = HarLog['log']['entries'][number];

beforeAll(async () => {
  target = createServer((req, res) => {
    arrived.push({ url: req.url ?? '', headers: req.headers });
    res.setHeader('content-type', 'text/plain');
    res.end(`hello from the target: ${req.url}`);
  });
  await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
  targetUrl = `http://127.0.0.1:${(target.address() as AddressInfo).port}`;
  echo = createTcpServer((socket) => socket.pipe(socket));
  await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
  echoAt = `127.0.0.1:${(echo.address() as AddressInfo).port}`;
  // The sandbox's own ports listen too (none from the seed), to be compared with the real manager's.
  ({ sandbox, manager } = await startSideBySide({
    customer: CUSTOMER,
    zone: ZONE,
    password: PASSWORD,
    zones: { [ZONE]: { password: [PASSWORD], plan: { type: 'resident', vip: true }, perm: 'vip city asn' } },
  }));
}, 120_000);

afterAll(async () => {
  await manager?.stop();
  await sandbox?.close();
  await new Promise<void>((resolve) => (target ? target.close(() => resolve()) : resolve()));
  await new Promise<void>((resolve) => (echo ? echo.close(() => resolve()) : resolve()));
});

/** The shape of a JSON value: objects field by field, arrays by their first item, the rest by type. */
function shape(value: unknown): unknown {
  if (Array.isArray(value)) return value.length ? [shape(value[0])] : [];
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(
      Object.entries(value)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([k, v]) => [k, shape(v)]),
    );
  return value === null ? 'null' : typeof value;
}

type Stat = { key: number | string; reqs: number; success: number };
type RecentStats = { ports: Record<string, Stat>; status_code: Stat[]; hostname: Stat[]; protocol: Stat[] };

/** The HAR log of the manager at `managerUrl` (the real one or a sandbox's): its last 50 entries. */
const harLog = async (managerUrl: string) => (await (await fetch(`${managerUrl}/api/logs?limit=50`)).json()) as HarLog;

/**
 * The names of an answer's end-to-end headers: each proxy answers the hop-by-hop ones (`connection`,
 * `keep-alive`) for its own connection (to a client that asks to close, the real manager answered
 * keep-alive and a sandbox port close).
 */
const endToEnd = (h: IncomingHttpHeaders) =>
  Object.keys(h)
    .filter((name) => !['connection', 'keep-alive'].includes(name))
    .sort();

/** A proxy port of the manager at `managerUrl` (the real one or a sandbox's) on a free port, with `config`; its number. */
async function createPort(managerUrl: string, config: Record<string, unknown> = {}): Promise<number> {
  const port = await freePort();
  const created = await fetch(`${managerUrl}/api/proxies`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ proxy: { port, zone: ZONE, ...config } }),
  });
  expect(created.status, await created.clone().text()).toBe(200);
  return port;
}

describe('the real manager through the sandbox', () => {
  it('forwards a request of its port through the proxy network: it arrives, the real HAR log and the sandbox usage show it', async () => {
    const port = await createPort(manager.url);

    const url = `${targetUrl}/through-the-real-manager?n=1`;
    const res = await viaProxy(`http://127.0.0.1:${port}`, url);
    expect(res.status, `${res.text}\n${manager.output().slice(-2000)}`).toBe(200);
    expect(res.text).toBe('hello from the target: /through-the-real-manager?n=1');
    expect(arrived.at(-1)?.url).toBe('/through-the-real-manager?n=1');

    // The real manager's HAR log: the request, and the exit peer the network named in x-brd-ip.
    const peers = sandbox
      .state()
      .peers.filter((p) => p.zone === ZONE)
      .map((p) => p.ip);
    await expect
      .poll(async () => {
        const logs = await harLog(manager.url);
        return logs.log.entries.find((e) => e.request?.url === url);
      })
      .toMatchObject({ response: { status: 200 }, details: { port } });
    const logs = await harLog(manager.url);
    const entry = logs.log.entries.find((e) => e.request?.url === url);
    expect(peers).toContain(entry?.details?.proxy_peer);
    // The client gets the network's answer with the peer's header: the real manager sends its upstream
    // user as `brd-customer-…`, which the network answers with x-brd-ip.
    expect(res.headers['x-brd-ip']).toBe(entry?.details?.proxy_peer);

    // A sandbox port hands on the same headers (but for the hop-by-hop ones, see endToEnd).
    const sandboxPort = await createPort(sandbox.managerUrl);
    const throughSandbox = await viaProxy(`http://127.0.0.1:${sandboxPort}`, `${targetUrl}/through-a-sandbox-port`);
    expect(endToEnd(throughSandbox.headers)).toEqual(endToEnd(res.headers));

    // The real manager's HAR log and recent_stats after real traffic are answers the spec declares, and
    // a sandbox port's are the same: the same fields of the same types (but the upstream password,
    // which the sandbox does not log).
    const sandboxUrl = `${targetUrl}/through-a-sandbox-port`;
    await expect.poll(async () => (await harLog(sandbox.managerUrl)).log.entries.find((e) => e.request?.url === sandboxUrl)).toBeDefined();
    const sandboxLogs = await harLog(sandbox.managerUrl);
    const sandboxEntry = sandboxLogs.log.entries.find((e) => e.request?.url === sandboxUrl);
    // The log around the entries: the same fields, and the same creator (the manager's name and version).
    const envelope = (l: HarLog) => ({ ...l, log: { ...l.log, entries: [] } });
    expect(shape(envelope(sandboxLogs))).toEqual(shape(envelope(logs)));
    expect(sandboxLogs.log).toMatchObject({ version: logs.log.version, creator: logs.log.creator });
    const json = `application~1json/schema`;
    expect(validator.validate(`#/paths/~1api~1logs/get/responses/200/content/${json}`, logs)).toBeNull();
    const { password, ...realDetails } = entry?.details ?? {};
    expect(password).toBe(PASSWORD);
    expect(shape(sandboxEntry)).toEqual(shape({ ...entry, details: realDetails }));
    const realStats = (await (await fetch(`${manager.url}/api/recent_stats`)).json()) as RecentStats;
    const sandboxStats = (await (await fetch(`${sandbox.managerUrl}/api/recent_stats`)).json()) as RecentStats;
    expect(validator.validate(`#/paths/~1api~1recent_stats/get/responses/200/content/${json}`, realStats)).toBeNull();
    expect(validator.validate(`#/paths/~1api~1recent_stats/get/responses/200/content/${json}`, sandboxStats)).toBeNull();
    expect(realStats.ports[String(port)]).toMatchObject({ key: port, reqs: 1, success: 1 });
    expect(sandboxStats.ports[String(sandboxPort)]).toMatchObject({ key: sandboxPort, reqs: 1, success: 1 });
    for (const group of ['status_code', 'hostname', 'protocol'] as const)
      expect(shape(sandboxStats[group].find((s) => s.key === realStats[group][0]?.key))).toEqual(shape(realStats[group][0]));
    expect(shape(sandboxStats.ports[String(sandboxPort)])).toEqual(shape(realStats.ports[String(port)]));

    // The sandbox billed it to the Zone the real manager named in its username.
    const state = sandbox.state();
    const billed = state.req_logs.filter((r) => r.zone === ZONE && r.dst.url === url);
    expect(billed).toHaveLength(1);
    expect(billed[0]?.status.code).toBe(200);
  });

  it('tunnels a CONNECT of its port through the network, hands on the answer and logs the exit peer named in it; a banned peer is not avoided on a tunnel; a sandbox port answers alike', async () => {
    const port = await createPort(manager.url);
    const proxy = `http://127.0.0.1:${port}`;
    const opened = await tunnelThrough(proxy, echoAt);
    expect(opened, manager.output().slice(-2000)).toMatchObject({ status: 200, echoed: 'ping through the tunnel\n' });

    // The real manager logs the tunnel with the exit peer the network named in its answer to the CONNECT.
    const tunnels = async () =>
      (await harLog(manager.url)).log.entries.filter((e) => e.request?.method === 'CONNECT' && e.details?.port === port);
    await expect.poll(async () => (await tunnels()).length).toBe(1);
    const peer = (await tunnels())[0]?.details?.proxy_peer as string;
    const peers = sandbox
      .state()
      .peers.filter((p) => p.zone === ZONE || p.vip !== undefined)
      .map((p) => p.ip);
    expect(peers).toContain(peer);
    expect(sandbox.state().req_logs.filter((r) => r.zone === ZONE && r.dst.url === echoAt)).toHaveLength(1);
    // Its answer to the CONNECT is the network's: status text and headers, the peer header with it. The
    // network names that header after the username's brand: the real manager sends `brd-customer-…`.
    expect({ statusMessage: opened.statusMessage, headers: opened.headers }).toEqual({
      statusMessage: 'Connection established',
      headers: { 'x-brd-ip': peer },
    });

    // Banned on the real manager's port, the peer still carries the next tunnel: the real manager checks
    // bans on plain requests and SSL-analyzed ones, not on a tunnel it does not open (observed, same
    // session, one CONNECT billed). The sandbox's ports do the same (sandbox test traffic-tunnel.test.ts).
    const banned = await fetch(`${manager.url}/api/proxies/${port}/banip`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ip: peer }),
    });
    expect(banned.status).toBe(204);
    expect(await tunnelThrough(proxy, echoAt)).toMatchObject({ status: 200, echoed: 'ping through the tunnel\n' });
    await expect.poll(async () => (await tunnels()).length).toBe(2);
    expect((await tunnels()).map((e) => e.details?.proxy_peer)).toEqual([peer, peer]);
    const billed = sandbox.state().req_logs.filter((r) => r.zone === ZONE && r.dst.url === echoAt);
    expect(billed).toHaveLength(2);
    expect(new Set(billed.map((b) => b.tun.session)).size).toBe(1);

    // A sandbox port answers the same CONNECT as the real manager's does: same status text, same headers.
    const sandboxPort = await createPort(sandbox.managerUrl);
    const throughSandbox = await tunnelThrough(`http://127.0.0.1:${sandboxPort}`, echoAt);
    expect(throughSandbox).toMatchObject({ status: 200, echoed: 'ping through the tunnel\n' });
    expect(throughSandbox.statusMessage).toBe(opened.statusMessage);
    expect(Object.keys(throughSandbox.headers)).toEqual(Object.keys(opened.headers));

    // Each logs the tunnel alike: its authority as the URL, the network's answer as the response, the
    // protocol by the port; to port 443 status and body `unknown` (a string the spec declares).
    // Field for field and type for type (but the upstream password, which the sandbox does not log).
    const tunnelEntry = async (managerUrl: string, p: number, url: string) => {
      await expect
        .poll(async () => (await harLog(managerUrl)).log.entries.find((e) => e.details?.port === p && e.request?.url === url))
        .toBeDefined();
      const log = await harLog(managerUrl);
      expect(validator.validate(`#/paths/~1api~1logs/get/responses/200/content/application~1json/schema`, log)).toBeNull();
      const found = log.log.entries.find((e) => e.details?.port === p && e.request?.url === url) as HarEntry;
      const { password: _password, ...details } = found.details;
      return { ...found, details } as HarEntry;
    };
    const realTunnel = await tunnelEntry(manager.url, port, echoAt);
    const sandboxTunnel = await tunnelEntry(sandbox.managerUrl, sandboxPort, echoAt);
    expect(realTunnel).toMatchObject({
      request: { method: 'CONNECT', url: echoAt },
      response: { status: 200, statusText: 'Connection established', content: { text: '' } },
      details: { protocol: 'http', content_type: 'other' },
    });
    expect(shape(sandboxTunnel)).toEqual(shape(realTunnel));
    for (const key of ['status', 'statusText'] as const) expect(sandboxTunnel.response[key]).toEqual(realTunnel.response[key]);
    for (const key of ['protocol', 'content_type', 'success'] as const) expect(sandboxTunnel.details[key]).toEqual(realTunnel.details[key]);

    const https = createTcpServer((s) => s.pipe(s));
    await new Promise<void>((resolve) => https.listen(443, '127.0.0.1', resolve));
    try {
      for (const p of [port, sandboxPort])
        expect(await tunnelThrough(`http://127.0.0.1:${p}`, '127.0.0.1:443')).toMatchObject({
          status: 200,
          echoed: 'ping through the tunnel\n',
        });
      const real443 = await tunnelEntry(manager.url, port, '127.0.0.1:443');
      const sandbox443 = await tunnelEntry(sandbox.managerUrl, sandboxPort, '127.0.0.1:443');
      expect(real443).toMatchObject({
        response: { status: 'unknown', content: { text: 'unknown' } },
        details: { protocol: 'https', content_type: 'unknown' },
      });
      expect(shape(sandbox443)).toEqual(shape(real443));
      expect(sandbox443.response.status).toBe('unknown');
      expect(sandbox443.response.content.text).toBe('unknown');
      expect(sandbox443.details).toMatchObject({ protocol: real443.details.protocol, content_type: real443.details.content_type });
    } finally {
      await new Promise<void>((resolve) => https.close(() => resolve()));
    }

    // A target that refuses: the real manager hands on the network's refusal, to a CONNECT and to a
    // plain request, and so does a sandbox port (status, status text, the end-to-end headers, the text).
    const closed = `127.0.0.1:${await freePort()}`;
    const refusals = async (p: number) => {
      const tunnel = await tunnelThrough(`http://127.0.0.1:${p}`, closed);
      const plain = await viaProxy(`http://127.0.0.1:${p}`, `http://${closed}/refused`);
      return {
        tunnel: { status: tunnel.status, statusMessage: tunnel.statusMessage, headers: endToEnd(tunnel.headers) },
        plain: { status: plain.status, headers: endToEnd(plain.headers), text: plain.text },
      };
    };
    const real = await refusals(port);
    expect(real.tunnel).toMatchObject({ status: 502, statusMessage: 'Bad Gateway' });
    expect(real.tunnel.headers).toContain('x-brd-err-code');
    expect(real.plain).toMatchObject({ status: 502, text: expect.stringContaining('cannot be reached') });
    expect(await refusals(sandboxPort)).toEqual(real);
  });

  it('pool_size without IPs allocated to the port: the real manager sends every request with one session, and so does a sandbox port', async () => {
    /** The upstream sessions the network billed for six requests through a port of `managerUrl` with pool_size 3. */
    const sessionsThrough = async (managerUrl: string) => {
      const port = await createPort(managerUrl, { pool_size: 3 });
      const sessions: string[] = [];
      for (let i = 0; i < 6; i++) {
        const url = `${targetUrl}/pool-${port}-${i}`;
        expect((await viaProxy(`http://127.0.0.1:${port}`, url)).status).toBe(200);
        sessions.push(
          ...sandbox
            .state()
            .req_logs.filter((r) => r.dst.url === url)
            .map((r) => r.tun.session.replace(String(port), '<port>')),
        );
      }
      return sessions;
    };
    const real = await sessionsThrough(manager.url);
    expect(real).toEqual(Array(6).fill('<port>_0'));
    expect(await sessionsThrough(sandbox.managerUrl)).toEqual(real);
  });
});
