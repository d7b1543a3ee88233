import { createServer, request as httpRequest, type Server } from 'node:http';
import { gzipSync } from 'node:zlib';
import { freePort, viaProxy } from '@zone-api/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CALL_BODY_BUDGET } from '../../src/control/calls.js';
import { defaultSeed, startSandbox } from '../../src/index.js';
import { DECODED_CAP } from '../../src/traffic/har-body.js';
import { bearer, C, listenOnLoopback, RES, RES_PW, useTrafficSandbox } from '../helpers.js';

// A target whose answer never ends once took the sandbox to 8.7 GB and killed it: answers were read
// whole (to be logged and billed). They pass through now, as through the real manager, no faster than
// the client reads them; the log keeps `har_limit` bytes and billing counts what passed. The RSS after
// ten seconds of such a target is measured in `pnpm bench`.
const t = useTrafficSandbox();

let endless: Server;
let endlessUrl: string;
let served = 0;
beforeAll(async () => {
  const chunk = Buffer.alloc(1024 * 1024, 120);
  endless = createServer((_req, res) => {
    served++;
    res.writeHead(200, { 'content-type': 'text/plain' });
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
const MB = 1024 * 1024;
const READ = 256 * MB;

/**
 * GETs `url` through `proxy`, reads `limit` bytes of the answer and goes away (bounded: 60 s). The
 * status, the bytes read, and the largest growth of this process's RSS (the sandbox runs in it) seen
 * every 16 MB.
 */
function readSome(proxy: string, url: string, limit: number, withAuth = false): Promise<{ status: number; read: number; grew: number }> {
  const p = new URL(proxy);
  const start = process.memoryUsage().rss;
  let grew = 0;
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { host: new URL(url).host };
    if (withAuth) headers['proxy-authorization'] = auth;
    const timer = setTimeout(() => req.destroy(new Error('no answer in 60 s')), 60_000);
    const req = httpRequest({ host: p.hostname, port: p.port, path: url, headers, agent: false }, (res) => {
      let read = 0;
      let mark = 0;
      res.on('data', (c: Buffer) => {
        read += c.length;
        if (read - mark >= 16 * MB) {
          mark = read;
          grew = Math.max(grew, process.memoryUsage().rss - start);
        }
        if (read >= limit) {
          clearTimeout(timer);
          res.destroy();
          resolve({ status: res.statusCode ?? 0, read, grew });
        }
      });
      res.on('end', () => {
        clearTimeout(timer);
        resolve({ status: res.statusCode ?? 0, read, grew });
      });
    });
    req.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    req.end();
  });
}

describe('an answer that never ends passes through, and memory stays bounded', () => {
  it('through the network: 256 MB read while the RSS grows less than 64 MB; billed for what passed; the sandbox serves on', async () => {
    const billed = () => t.sandbox.state().usage.reduce((n, d) => n + d.bw_dn, 0);
    const before = billed();
    const r = await readSome(t.sandbox.networkUrl as string, endlessUrl, READ, true);
    expect(r.status).toBe(200);
    expect(r.read).toBeGreaterThanOrEqual(READ);
    expect(r.grew).toBeLessThan(64 * MB);
    // Billed once the client went away, for at least what it read.
    await expect.poll(() => billed() - before, { timeout: 5000 }).toBeGreaterThanOrEqual(READ);
    expect((await fetch(`${t.sandbox.managerUrl}/api/version`)).status).toBe(200);
  });

  it('through a port: asked of the target once, logged with every byte counted and har_limit bytes kept', async () => {
    const port = await freePort();
    expect((await t.manager.createProxy({ body: { proxy: { port, zone: RES } } })).response.status).toBe(200);
    const before = served;
    const r = await readSome(`http://127.0.0.1:${port}`, endlessUrl, READ);
    expect(r.status).toBe(200);
    expect(r.grew).toBeLessThan(64 * MB);
    expect(served - before).toBe(1);
    const limit = t.sandbox.state().manager.settings.har_limit;
    expect(limit).toBeGreaterThan(0);
    const entry = async () => t.sandbox.state().manager.har.find((e) => e.details?.port === port && e.request.url === endlessUrl);
    await expect.poll(async () => (await entry()) !== undefined, { timeout: 5000 }).toBe(true);
    const content = (await entry())?.response.content;
    expect(content?.size).toBeGreaterThanOrEqual(READ);
    expect(content?.text).toHaveLength(limit);
    // Cut at har_limit without a comment, as the real manager cuts it (lib/util.js 285-287).
    expect(content?.comment).toBeUndefined();
  });
});

describe('a proxy loop is refused with a proxy error', () => {
  // One request through a port whose upstream is itself once took 512 sockets and filled the HAR log.
  // The upstream is manager-wide, as the real manager's --proxy/--proxy_port: a port's own is not followed.
  const sandboxWithUpstream = async (port: number) => {
    const seed = defaultSeed();
    seed.manager.ports = [];
    return startSandbox({
      accountPort: 0,
      managerPort: 0,
      proxyPorts: true,
      freeProxyPorts: false,
      seed,
      upstream: { host: '127.0.0.1', port },
    });
  };
  const create = async (managerUrl: string, port: number) =>
    (
      await fetch(`${managerUrl}/api/proxies`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ proxy: { port, zone: RES } }),
      })
    ).status;

  it('a sandbox whose upstream is one of its own ports: 502 naming the loop, through that port and through another', async () => {
    const [a, b] = [await freePort(), await freePort()];
    const s = await sandboxWithUpstream(a);
    try {
      for (const port of [a, b]) expect(await create(s.managerUrl, port)).toBe(200);
      const self = await viaProxy(`http://127.0.0.1:${a}`, 'http://127.0.0.1:9/self');
      expect(self.status, self.text).toBe(502);
      expect(self.text).toBe(`Proxy loop: port ${a} -> ${a} comes back to itself; start the sandbox with another upstream (--proxy)`);
      const other = await viaProxy(`http://127.0.0.1:${b}`, 'http://127.0.0.1:9/other');
      expect(other.status, other.text).toBe(502);
      expect(other.text).toContain(`Proxy loop: port ${b} -> ${a} -> ${a}`);
      const logged = s.state().manager.har.filter((e) => /\/(self|other)$/.test(e.request.url));
      expect(logged.length).toBeLessThanOrEqual(2);
    } finally {
      await s.close();
    }
  });

  it('a chain of ports that ends at the network is no loop', async () => {
    const [front, back] = [await freePort(), await freePort()];
    expect((await t.manager.createProxy({ body: { proxy: { port: back, zone: RES } } })).response.status).toBe(200);
    const s = await sandboxWithUpstream(back);
    try {
      expect(await create(s.managerUrl, front)).toBe(200);
      const r = await viaProxy(`http://127.0.0.1:${front}`, 'http://127.0.0.1:9/chain');
      expect(r.text).not.toMatch(/Proxy loop/);
      expect(r.status).toBeGreaterThan(0);
    } finally {
      await s.close();
    }
  });
});

describe('a gzip bomb through a port', () => {
  // The log's text of a gzip answer is decoded (as the real manager decodes it, lib/util.js 253-290).
  // One gzip member of 1 MiB of zeros is about 1 kB: 256 of them are 256 MiB of zeros in 260 kB (a
  // larger bomb, decoded whole, would not even make a string: the entry was then lost).
  const bomb = Buffer.concat(Array.from({ length: 256 }, () => gzipSync(Buffer.alloc(MB))));
  let target: Server;
  let url: string;
  beforeAll(async () => {
    target = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'gzip', 'content-length': bomb.length });
      res.end(bomb);
    });
    url = `http://127.0.0.1:${await listenOnLoopback(target)}/bomb`;
  });
  afterAll(() => new Promise<void>((resolve) => target.close(() => resolve())));

  it('with har_limit 0 (keep all): decoding for the log stops at its cap, and the RSS stays within a few times the cap', async () => {
    const settings = await fetch(`${t.sandbox.managerUrl}/api/settings`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ har_limit: 0 }),
    });
    expect(settings.status).toBe(200);
    const port = await freePort();
    expect((await t.manager.createProxy({ body: { proxy: { port, zone: RES } } })).response.status).toBe(200);
    const start = process.memoryUsage().rss;
    let peak = start;
    const sampler = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().rss);
    }, 5);
    const entry = () => t.sandbox.state().manager.har.find((e) => e.details?.port === port && e.request.url === url);
    try {
      const r = await viaProxy(`http://127.0.0.1:${port}`, url);
      expect(r.status).toBe(200);
      await expect.poll(() => entry() !== undefined, { timeout: 30_000 }).toBe(true);
    } finally {
      clearInterval(sampler);
    }
    peak = Math.max(peak, process.memoryUsage().rss);
    // The cap (16 MiB decoded, and its text) and the bomb kept; decoded whole it was 256 MiB and its text as much again.
    expect(peak - start).toBeLessThan(4 * DECODED_CAP);
    const content = entry()?.response.content;
    expect(content?.size).toBe(bomb.length);
    expect(content?.text).toHaveLength(DECODED_CAP);
    expect(content?.comment).toBe(`decoded from gzip; decoding stopped at ${DECODED_CAP} bytes`);
  }, 60_000);
});

// The record of calls (`sandbox.calls()`, `GET /__sandbox/calls`) keeps a redacted copy of each body:
// 10,000 calls of the manager's 2 MB bodies once could hold 20 GB. It keeps CALL_BODY_BUDGET bytes of
// bodies, the newest; an older call keeps its place and says that its body was let go of.
describe('the record of calls keeps a bounded amount of request bodies', () => {
  it(`${CALL_BODY_BUDGET} bytes of bodies at most, the oldest let go of first and marked`, async () => {
    const pad = 'p'.repeat(1000 * 1000);
    const sent = Math.ceil(CALL_BODY_BUDGET / pad.length) + 6;
    const after = Math.max(0, ...t.sandbox.calls().map((c) => c.seq));
    for (let i = 0; i < sent; i++) {
      // A createZone the account API refuses (400): nothing is stored, the body is still recorded.
      const body = JSON.stringify({ zone: i, plan: 'none', pad });
      const res = await fetch(`${t.sandbox.accountUrl}/zone`, {
        method: 'POST',
        headers: { ...bearer, 'content-type': 'application/json' },
        body,
      });
      expect(res.status).toBe(400);
      await res.arrayBuffer();
    }
    const calls = t.sandbox.calls({ api: 'account', operationId: 'createZone', after });
    expect(calls).toHaveLength(sent);
    const kept = calls.filter((c) => c.body !== undefined);
    const dropped = calls.filter((c) => c.body_dropped !== undefined);
    expect(dropped.length).toBeGreaterThan(0);
    expect(kept.length + dropped.length).toBe(sent);
    const keptBytes = kept.reduce((n, c) => n + (c.body_size ?? 0), 0);
    expect(keptBytes).toBeLessThanOrEqual(CALL_BODY_BUDGET);
    expect(keptBytes).toBeGreaterThan(CALL_BODY_BUDGET - 2 * pad.length);
    // The oldest went first: every dropped call came before every kept one.
    expect(Math.max(...dropped.map((c) => c.seq))).toBeLessThan(Math.min(...kept.map((c) => c.seq)));
    expect(calls.at(-1)?.body).toMatchObject({ zone: sent - 1, pad });
    expect(dropped[0]?.body_size).toBe(Buffer.byteLength(JSON.stringify({ zone: 0, plan: 'none', pad })));
    expect(dropped[0]?.body_dropped).toMatch(/keeps \d+ bytes of request bodies, the newest: this body of \d+ bytes was let go of/);
  });
});
