import { createServer } from 'node:http';
import { freePort, viaProxy } from '@zone-api/testkit';
import { describe, expect, it } from 'vitest';
import { listenOnLoopback, RES, useTrafficSandbox } from '../helpers.js';

// Loops through `ext_proxies` (issue 39): a port whose external proxy is itself, or ports pointing at each
// other, took up to 2,046 sockets for one request, filled the HAR log (1,000 entries, the rest wiped) and
// answered 502 after 4-10 s, while a loop through --proxy was refused at once. Now a chain through any
// upstream a port names that comes back to a port of the chain is refused the same way, however many hops.
const t = useTrafficSandbox();

const create = async (port: number, ext: number[]) =>
  (await t.manager.createProxy({ body: { proxy: { port, zone: RES, ext_proxies: ext.map((p) => `127.0.0.1:${p}`) } } })).response.status;
const logged = (path: string) => t.sandbox.state().manager.har.filter((e) => new URL(e.request.url).pathname === path).length;

describe('loops through ext_proxies', () => {
  it('a port whose external proxy is itself: 502 naming the loop, logged once', async () => {
    const a = await freePort();
    expect(await create(a, [a])).toBe(200);
    const got = await viaProxy(`http://127.0.0.1:${a}`, 'http://127.0.0.1:9/ext-self');
    expect(got.status, got.text).toBe(502);
    expect(got.text).toContain(`Proxy loop: port ${a} -> ${a} comes back to itself`);
    expect(logged('/ext-self')).toBeLessThanOrEqual(1);
  }, 30_000);

  it('three ports in a ring (a -> b -> c -> a): refused from each, logged once at most', async () => {
    const [a, b, c] = [await freePort(), await freePort(), await freePort()];
    // Created in an order where each names one that exists or will.
    expect(await create(a, [b])).toBe(200);
    expect(await create(b, [c])).toBe(200);
    expect(await create(c, [a])).toBe(200);
    for (const [port, ring] of [
      [a, `${a} -> ${b} -> ${c} -> ${a}`],
      [b, `${b} -> ${c} -> ${a} -> ${b}`],
    ] as const) {
      const got = await viaProxy(`http://127.0.0.1:${port}`, `http://127.0.0.1:9/ring-${port}`);
      expect(got.status, got.text).toBe(502);
      expect(got.text).toContain(`Proxy loop: port ${ring} comes back to itself`);
      expect(logged(`/ring-${port}`)).toBeLessThanOrEqual(1);
    }
  }, 60_000);

  it('a chain through another port that ends at the network is no loop', async () => {
    const target = createServer((_req, res) => res.end('reached'));
    const targetPort = await listenOnLoopback(target);
    try {
      const [front, back] = [await freePort(), await freePort()];
      expect(await create(back, [])).toBe(200);
      expect(await create(front, [back])).toBe(200);
      const got = await viaProxy(`http://127.0.0.1:${front}`, `http://127.0.0.1:${targetPort}/chain`);
      expect(got.status, got.text).toBe(200);
      expect(got.text).toBe('reached');
    } finally {
      target.close();
    }
  }, 30_000);
});
