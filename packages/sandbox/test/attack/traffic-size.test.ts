import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { createServer, request as httpRequest, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '@zone-api/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { journalOf } from '../../src/domain/persist.js';
import { defaultSeed, type Sandbox, startSandbox } from '../../src/index.js';
import { C, listenOnLoopback, RES, RES_PW, useTrafficSandbox } from '../helpers.js';

// Traffic of any size through the network and through a port: no size and no client that goes away
// mid-body ends the process (a body over 64 MB once did, with a TypeError on a null socket inside
// proxy-chain's failure path); the sandbox answers on. Bodies are streamed on as they arrive (as the
// real manager passes them on), so a body larger than the old 64 MB limit reaches its target whole
// while the process's memory grows by far less than the body.
const t = useTrafficSandbox();

let target: Server;
let targetUrl: string;
/**
 * The bytes the target received for each upload (by its `u` number), and the uploads whose request it
 * saw end or break. Counted by upload, not in one total: the rest of a body a client gave up on may
 * still arrive while the next upload is counted (a loaded machine: 189,678 bytes more than 200 MB).
 */
const receivedBy = new Map<string, number>();
const closed = new Set<string>();
const received = (r: { id: string }) => receivedBy.get(r.id) ?? 0;
let uploads = 0;
beforeAll(async () => {
  target = createServer((req, res) => {
    const id = new URL(req.url ?? '/', 'http://target').searchParams.get('u') ?? '';
    req.on('data', (c: Buffer) => {
      receivedBy.set(id, (receivedBy.get(id) ?? 0) + c.length);
    });
    req.on('close', () => closed.add(id));
    req.on('end', () => res.end('ok'));
  });
  targetUrl = `http://127.0.0.1:${await listenOnLoopback(target)}/upload`;
});
afterAll(() => new Promise<void>((resolve) => target.close(() => resolve())));

const auth = `Basic ${Buffer.from(`lum-customer-${C}-zone-${RES}:${RES_PW}`).toString('base64')}`;
const MB = 1024 * 1024;

/**
 * A POST of `mb` megabytes through `proxy` in absolute-URI form, written as fast as the proxy takes
 * it; `abortAfter` megabytes: the client goes away there. The answer's status (0: none) and text, and
 * the largest growth of this process's RSS (the sandbox runs in it) seen every 16 MB written.
 */
function upload(
  proxy: string,
  mb: number,
  abortAfter?: number,
): Promise<{ id: string; status: number; text: string; grew: number; peer?: string | undefined }> {
  const p = new URL(proxy);
  const id = String(++uploads);
  const start = process.memoryUsage().rss;
  let grew = 0;
  return new Promise((resolve) => {
    const req = httpRequest(
      {
        host: p.hostname,
        port: p.port,
        method: 'POST',
        path: `${targetUrl}?u=${id}`,
        headers: { host: new URL(targetUrl).host, 'proxy-authorization': auth, 'content-length': String(mb * MB) },
        agent: false,
      },
      (res) => {
        let text = '';
        res.on('data', (c) => {
          text += c;
        });
        res.on('end', () => resolve({ id, status: res.statusCode ?? 0, text, grew, peer: [res.headers['x-brd-ip']].flat()[0] }));
        res.on('error', () => resolve({ id, status: res.statusCode ?? 0, text, grew }));
      },
    );
    req.on('error', (err) => resolve({ id, status: 0, text: err.message, grew }));
    const chunk = Buffer.alloc(Math.min(MB, mb * MB), 97);
    let sent = 0;
    const write = () => {
      while (sent * chunk.length < mb * MB) {
        if (abortAfter !== undefined && sent * chunk.length >= abortAfter * MB) {
          req.destroy();
          resolve({ id, status: 0, text: 'aborted', grew });
          return;
        }
        sent++;
        if (sent % 16 === 0) grew = Math.max(grew, process.memoryUsage().rss - start);
        if (!req.write(chunk)) {
          req.once('drain', write);
          return;
        }
      }
      req.end();
    };
    write();
  });
}

async function stillServes() {
  const r = await fetch(`${t.sandbox.managerUrl}/api/version`);
  expect(r.status).toBe(200);
}

const BIG = 200;

describe('a request body of any size through the network', () => {
  it('200 MB reaches the target whole, billed for every byte, while the RSS grows by far less than the body', async () => {
    const billed = () => t.sandbox.state().usage.reduce((n, d) => n + d.bw_up, 0);
    const billedBefore = billed();
    const r = await upload(t.sandbox.networkUrl as string, BIG);
    expect(r.status, r.text).toBe(200);
    expect(received(r)).toBe(BIG * MB);
    // Read whole, the body alone would be 200 MB of this process.
    expect(r.grew).toBeLessThan(96 * MB);
    await expect.poll(() => billed() - billedBefore, { timeout: 5000 }).toBeGreaterThan(BIG * MB);
    await stillServes();
  });

  it('a client that goes away mid-body leaves the process serving', async () => {
    const gone = [await upload(t.sandbox.networkUrl as string, 70, 20), await upload(t.sandbox.networkUrl as string, 8, 4)];
    // The sandbox has passed each client's going away on: the target saw those requests end.
    await expect.poll(() => gone.every((g) => closed.has(g.id)), { timeout: 30_000 }).toBe(true);
    await stillServes();
    const small = await upload(t.sandbox.networkUrl as string, 1);
    expect(small.status, small.text).toBe(200);
  });
});

describe('a request body of any size through a port', () => {
  it('200 MB reaches the target whole and is logged with every byte counted; a client that goes away mid-body ends nothing', async () => {
    const port = await freePort();
    const created = await t.manager.createProxy({ body: { proxy: { port, zone: RES } } });
    expect(created.response.status).toBe(200);
    const proxy = `http://127.0.0.1:${port}`;
    const big = await upload(proxy, BIG);
    expect(big.status, big.text).toBe(200);
    expect(received(big)).toBe(BIG * MB);
    expect(big.grew).toBeLessThan(96 * MB);
    const entry = t.sandbox.state().manager.har.find((e) => e.details?.port === port);
    expect(entry?.request.bodySize).toBe(BIG * MB);
    expect(entry?.details?.out_bw).toBeGreaterThan(BIG * MB);
    const gone = await upload(proxy, 70, 20);
    await expect.poll(() => closed.has(gone.id), { timeout: 30_000 }).toBe(true);
    await stillServes();
    const small = await upload(proxy, 2);
    expect(small.status, small.text).toBe(200);
    expect(received(small)).toBe(2 * MB);
  });
});

describe('a request a port sends again sends the same body', () => {
  it('a banned peer: a body within the replay window is sent again whole; a larger one is a 502 saying why', async () => {
    const port = await freePort();
    expect((await t.manager.createProxy({ body: { proxy: { port, zone: RES } } })).response.status).toBe(200);
    const proxy = `http://127.0.0.1:${port}`;
    const first = await upload(proxy, 0);
    expect(first.status, first.text).toBe(200);
    expect(first.peer).toBeTruthy();
    // The port's session keeps that peer: banned, the next request is sent again with a new session.
    await t.manager.banIp({ params: { path: { port } }, body: { ip: first.peer as string } });
    const half = await upload(proxy, 0.5);
    expect(half.status, half.text).toBe(200);
    expect(half.peer).not.toBe(first.peer);
    // Sent twice, whole each time.
    expect(received(half)).toBe(MB);
    const three = await upload(proxy, 3);
    expect(three.status, three.text).toBe(502);
    expect(three.text).toMatch(/^The request body \(\d+ bytes so far\) cannot be sent again: a port keeps 1048576 bytes/);
    // Its first sending went on whole: the target may still be reading it when the 502 arrives.
    await expect.poll(() => received(three), { timeout: 30_000 }).toBe(3 * MB);
    await stillServes();
  });
});

describe('the HAR log keeps bodies up to har_limit and marks what it cut', () => {
  it('a 5 MB upload through a port: the target gets all of it, the log keeps har_limit bytes and says so', async () => {
    const port = await freePort();
    expect((await t.manager.createProxy({ body: { proxy: { port, zone: RES } } })).response.status).toBe(200);
    const r = await upload(`http://127.0.0.1:${port}`, 5);
    expect(r.status, r.text).toBe(200);
    expect(received(r)).toBe(5 * MB);
    const limit = t.sandbox.state().manager.settings.har_limit;
    expect(limit).toBeGreaterThan(0);
    const logs = (await t.manager.getLogs({ params: { query: { port_from: port, port_to: port } } })).data as {
      log: { entries: Array<{ request: { bodySize: number; postData?: { text?: string; comment?: string } } }> };
    };
    expect(logs.log.entries).toHaveLength(1);
    const request = logs.log.entries[0]?.request;
    expect(request?.bodySize).toBe(5 * MB);
    expect(request?.postData?.text).toHaveLength(limit);
    expect(request?.postData?.comment).toBe(`cut to har_limit: ${limit} of ${5 * MB} bytes kept`);
  });
});

describe('--data after more traffic than a string can hold', () => {
  // The HAR log once kept whole request bodies, and the data file holds the HAR: past about 512 MB of
  // bodies the state's JSON was longer than V8's longest string ("Invalid string length"), no save
  // succeeded, and that traffic was neither billed nor logged in the file. The file holds what the log
  // holds (har_limit bytes of each body), whatever went through.
  const UPLOADS = 5;
  const EACH = 110;
  let dir: string | undefined;
  let sandboxes: Sandbox[] = [];
  afterAll(async () => {
    await Promise.allSettled(sandboxes.map((s) => s.close()));
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it(`${UPLOADS * EACH} MB through a port: every request billed and logged, in the file too, which stays small`, async () => {
    dir = mkdtempSync(join(tmpdir(), 'zone-api-data-'));
    const file = join(dir, 'state.json');
    const seed = defaultSeed();
    seed.manager.ports = [];
    const options = {
      accountPort: 0,
      managerPort: 0,
      networkPort: 0,
      proxyPorts: true,
      freeProxyPorts: false,
      seed,
      dataFile: file,
    } as const;
    const first = await startSandbox(options);
    sandboxes.push(first);
    const port = await freePort();
    const created = await fetch(`${first.managerUrl}/api/proxies`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ proxy: { port, zone: RES } }),
    });
    expect(created.status).toBe(200);
    const billed = (s: Sandbox) => s.state().usage.reduce((n, d) => n + d.bw_up, 0);
    const billedBefore = billed(first);
    for (let i = 0; i < UPLOADS; i++) {
      const r = await upload(`http://127.0.0.1:${port}`, EACH);
      expect(r.status, r.text).toBe(200);
      expect(received(r)).toBe(EACH * MB);
    }
    await first.settled();
    const logged = (s: Sandbox) => s.state().manager.har.filter((e) => e.details?.port === port);
    expect(logged(first).map((e) => e.request.bodySize)).toEqual(Array(UPLOADS).fill(EACH * MB));
    expect(billed(first) - billedBefore).toBeGreaterThan(UPLOADS * EACH * MB);
    const har = logged(first);
    const usage = billed(first);
    await first.close();
    sandboxes = [];
    // The snapshot and its journal: the log's har_limit bytes of each body, not the bodies.
    const bytes = statSync(file).size + (statSync(journalOf(file), { throwIfNoEntry: false })?.size ?? 0);
    expect(bytes).toBeLessThan(8 * MB);
    const again = await startSandbox(options);
    sandboxes.push(again);
    expect(logged(again)).toEqual(har);
    expect(billed(again)).toBe(usage);
  }, 180_000);
});
