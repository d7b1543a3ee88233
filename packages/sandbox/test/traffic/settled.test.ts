import { createServer, request as httpRequest } from 'node:http';
import { createServer as createTcpServer, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Sandbox, seed, startSandbox } from '../../src/index.js';
import { listenOnLoopback, RES, RES_PW, type Rec } from '../helpers.js';

// sandbox.settled(): once it resolves, every request and tunnel sent so far is billed and logged, so
// a test awaits it instead of polling. The targets here answer late on purpose: without the wait,
// the usage and the HAR entries are not there yet.

const HOLD_MS = 400;
let s: Sandbox;
let port: number;
let tcpPort: number;
let httpPort: number;
const servers: { close(cb?: () => void): unknown }[] = [];

beforeAll(async () => {
  // A TCP target that answers a line HOLD_MS after the client has finished, then closes.
  const tcp = createTcpServer((socket) => {
    socket.on('data', () => undefined);
    socket.on('end', () => setTimeout(() => socket.end('late bye\n'), HOLD_MS));
  });
  servers.push(tcp);
  tcpPort = await listenOnLoopback(tcp);
  const http = createServer((_req, res) => setTimeout(() => res.end('slow'), HOLD_MS));
  servers.push(http);
  httpPort = await listenOnLoopback(http);
  s = await startSandbox({
    seed: seed().withoutPort().port({ port: 24090, zone: RES }),
    networkPort: 0,
    proxyPorts: true,
    freeProxyPorts: true,
  });
  port = s.ports.proxy['24090'] as number;
});
afterAll(async () => {
  await s?.close();
  for (const srv of servers) srv.close();
});

/** A CONNECT through `proxyPort` to the TCP target; the client writes a line and ends at once. */
function tunnelAndLeave(proxyPort: number, auth?: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({
      host: '127.0.0.1',
      port: proxyPort,
      method: 'CONNECT',
      path: `127.0.0.1:${tcpPort}`,
      headers: auth ? { 'proxy-authorization': auth } : {},
      agent: false,
    });
    req.once('error', reject);
    req.once('connect', (res, socket: Socket) => {
      if (res.statusCode !== 200) return reject(new Error(`CONNECT answered ${res.statusCode}`));
      socket.end('hello\n');
      socket.resume();
      resolve();
    });
    req.end();
  });
}

const harOf = (url: string) => s.state().manager.har.filter((e) => (e.request as Rec).url === url);
const billedOf = (url: string) => s.state().req_logs.filter((r) => r.dst.url === url);

describe('sandbox.settled()', () => {
  it('waits for a tunnel through a port to close, be billed by the network and logged by the port', async () => {
    const authority = `127.0.0.1:${tcpPort}`;
    const before = { har: harOf(authority).length, billed: billedOf(authority).length };
    await tunnelAndLeave(port);
    // The target still holds the tunnel open: nothing is logged yet.
    expect(harOf(authority).length).toBe(before.har);
    await s.settled();
    expect(harOf(authority).length).toBe(before.har + 1);
    expect(billedOf(authority).length).toBe(before.billed + 1);
  });

  it('waits for a plain request through the network that is still being answered', async () => {
    const url = `http://127.0.0.1:${httpPort}/late`;
    const auth = `Basic ${Buffer.from(`brd-customer-${s.credentials.customer}-zone-${RES}:${RES_PW}`).toString('base64')}`;
    const network = new URL(s.networkUrl as string);
    const answered = new Promise<number>((resolve, reject) => {
      const req = httpRequest(
        {
          host: network.hostname,
          port: network.port,
          path: url,
          headers: { host: `127.0.0.1:${httpPort}`, 'proxy-authorization': auth },
          agent: false,
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        },
      );
      req.once('error', reject);
      req.end();
    });
    // Until the request reaches the network, there is nothing to wait for: wait for its admission.
    for (let i = 0; i < 100 && (await inFlight()) === 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(billedOf(url)).toHaveLength(0);
    await s.settled();
    expect(billedOf(url)).toHaveLength(1);
    expect(await answered).toBe(200);
  });

  it('resolves at once when nothing is in flight', async () => {
    const start = Date.now();
    await s.settled();
    expect(Date.now() - start).toBeLessThan(HOLD_MS);
  });
});

/** Whether the target has the request yet (it counts as in flight from then on). */
async function inFlight(): Promise<number> {
  const t0 = Date.now();
  await Promise.race([s.settled(), new Promise((r) => setTimeout(r, 5))]);
  return Date.now() - t0 >= 5 ? 1 : 0;
}
