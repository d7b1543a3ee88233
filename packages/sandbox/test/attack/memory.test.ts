import { createServer, type Server } from 'node:http';
import { freePort, viaProxy } from '@zone-api/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { C, listenOnLoopback, RES, RES_PW, useTrafficSandbox } from '../helpers.js';

// A target whose answer never ends once took the sandbox to 8.7 GB and killed it: an answer is read
// whole (to be logged and billed), so past 64 MB the proxy lets go of it and answers 502 naming the
// limit. The RSS after ten seconds of such a target is measured in `pnpm bench`.
const t = useTrafficSandbox();

let endless: Server;
let endlessUrl: string;
let served = 0;
beforeAll(async () => {
  const chunk = Buffer.alloc(1024 * 1024, 120);
  endless = createServer((_req, res) => {
    served++;
    res.writeHead(200, { 'content-type': 'application/octet-stream' });
    const write = () => {
      while (!res.destroyed && res.write(chunk));
      if (!res.destroyed) res.once('drain', write);
    };
    res.on('close', () => res.destroy());
    write();
  });
  endlessUrl = `http://127.0.0.1:${await listenOnLoopback(endless)}/forever`;
});
afterAll(() => {
  endless.closeAllConnections();
  return new Promise<void>((resolve) => endless.close(() => resolve()));
});

const auth = `Basic ${Buffer.from(`lum-customer-${C}-zone-${RES}:${RES_PW}`).toString('base64')}`;

describe('an answer that never ends', () => {
  it('through the network: 502 naming the limit, and the sandbox serves on', async () => {
    const r = await viaProxy(t.sandbox.networkUrl as string, endlessUrl, { auth });
    expect(r.status, r.text).toBe(502);
    expect(r.text).toMatch(/too large.*larger than 67108864 bytes/);
    expect((await fetch(`${t.sandbox.managerUrl}/api/version`)).status).toBe(200);
  });

  it('through a port: 502 naming the limit, asked of the target once (no retry of a too-large answer)', async () => {
    const port = await freePort();
    expect((await t.manager.createProxy({ body: { proxy: { port, zone: RES } } })).response.status).toBe(200);
    const before = served;
    const r = await viaProxy(`http://127.0.0.1:${port}`, endlessUrl);
    expect(r.status, r.text).toBe(502);
    expect(r.text).toMatch(/too large/);
    expect(served - before).toBe(1);
  });
});

describe('a proxy loop is refused with a proxy error', () => {
  // One request through a port whose upstream is itself once took 512 sockets and filled the HAR log.
  it('a port whose upstream is itself, and two ports that name each other: 502 naming the loop, one entry logged each', async () => {
    const [a, b, c] = [await freePort(), await freePort(), await freePort()];
    const loopback = '127.0.0.1';
    for (const [port, upstream] of [
      [a, a],
      [b, c],
      [c, b],
    ] as const) {
      const created = await t.manager.createProxy({ body: { proxy: { port, zone: RES, proxy: loopback, proxy_port: upstream } } });
      expect(created.response.status).toBe(200);
    }
    const self = await viaProxy(`http://127.0.0.1:${a}`, 'http://127.0.0.1:9/self');
    expect(self.status, self.text).toBe(502);
    expect(self.text).toBe(`Proxy loop: port ${a} -> ${a} comes back to itself; name another proxy upstream`);
    const pair = await viaProxy(`http://127.0.0.1:${b}`, 'http://127.0.0.1:9/pair');
    expect(pair.status, pair.text).toBe(502);
    expect(pair.text).toContain(`Proxy loop: port ${b} -> ${c} -> ${b}`);
    const state = t.sandbox.state();
    const logged = state.manager.har.filter((e) => /\/(self|pair)$/.test(e.request.url));
    expect(logged.length).toBeLessThanOrEqual(2);
  });

  it('a chain of ports that ends at the network is no loop', async () => {
    const [front, back] = [await freePort(), await freePort()];
    expect((await t.manager.createProxy({ body: { proxy: { port: back, zone: RES } } })).response.status).toBe(200);
    expect(
      (await t.manager.createProxy({ body: { proxy: { port: front, zone: RES, proxy: '127.0.0.1', proxy_port: back } } })).response.status,
    ).toBe(200);
    const r = await viaProxy(`http://127.0.0.1:${front}`, 'http://127.0.0.1:9/chain');
    expect(r.text).not.toMatch(/Proxy loop/);
  });
});
