import { createServer, request as httpRequest, type Server } from 'node:http';
import { freePort } from '@zone-api/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { C, listenOnLoopback, RES, RES_PW, useTrafficSandbox } from '../helpers.js';

// Traffic of any size through the network and through a port: no size and no client that goes away
// mid-body ends the process (a body over 64 MB once did, with a TypeError on a null socket inside
// proxy-chain's failure path); the sandbox answers on.
const t = useTrafficSandbox();

let target: Server;
let targetUrl: string;
let received = 0;
beforeAll(async () => {
  target = createServer((req, res) => {
    req.on('data', (c: Buffer) => {
      received += c.length;
    });
    req.on('end', () => res.end('ok'));
  });
  targetUrl = `http://127.0.0.1:${await listenOnLoopback(target)}/upload`;
});
afterAll(() => new Promise<void>((resolve) => target.close(() => resolve())));

const auth = `Basic ${Buffer.from(`lum-customer-${C}-zone-${RES}:${RES_PW}`).toString('base64')}`;
const MB = 1024 * 1024;

/**
 * A POST of `mb` megabytes through `proxy` in absolute-URI form, written as fast as the proxy takes
 * it; `abortAfter` megabytes: the client goes away there. The answer's status (0: none) and text.
 */
function upload(proxy: string, mb: number, abortAfter?: number): Promise<{ status: number; text: string }> {
  const p = new URL(proxy);
  return new Promise((resolve) => {
    const req = httpRequest(
      {
        host: p.hostname,
        port: p.port,
        method: 'POST',
        path: targetUrl,
        headers: { host: new URL(targetUrl).host, 'proxy-authorization': auth, 'content-length': String(mb * MB) },
        agent: false,
      },
      (res) => {
        let text = '';
        res.on('data', (c) => {
          text += c;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
        res.on('error', () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on('error', (err) => resolve({ status: 0, text: err.message }));
    const chunk = Buffer.alloc(MB, 97);
    let sent = 0;
    const write = () => {
      while (sent < mb) {
        if (abortAfter !== undefined && sent >= abortAfter) {
          req.destroy();
          setTimeout(() => resolve({ status: 0, text: 'aborted' }), 50);
          return;
        }
        sent++;
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

describe('a request body of any size through the network', () => {
  it('70 MB: the process lives and the client gets a 413 naming the limit', async () => {
    const r = await upload(t.sandbox.networkUrl as string, 70);
    expect(r.status, r.text).toBe(413);
    expect(r.text).toMatch(/larger than/);
    await stillServes();
  });

  it('a client that goes away mid-body leaves the process serving', async () => {
    await upload(t.sandbox.networkUrl as string, 70, 20);
    await upload(t.sandbox.networkUrl as string, 8, 4);
    await new Promise((r) => setTimeout(r, 200));
    await stillServes();
    const small = await upload(t.sandbox.networkUrl as string, 1);
    expect(small.status, small.text).toBe(200);
  });
});

describe('a request body of any size through a port', () => {
  it('70 MB, and a client that goes away mid-body: the process lives, a 413 names the limit', async () => {
    const port = await freePort();
    const created = await t.manager.createProxy({ body: { proxy: { port, zone: RES } } });
    expect(created.response.status).toBe(200);
    const proxy = `http://127.0.0.1:${port}`;
    const big = await upload(proxy, 70);
    expect(big.status, big.text).toBe(413);
    await upload(proxy, 70, 20);
    await new Promise((r) => setTimeout(r, 200));
    await stillServes();
    const before = received;
    const small = await upload(proxy, 2);
    expect(small.status, small.text).toBe(200);
    expect(received - before).toBe(2 * MB);
  });
});

describe('the HAR log keeps bodies up to har_limit and marks what it cut', () => {
  it('a 5 MB upload through a port: the target gets all of it, the log keeps har_limit bytes and says so', async () => {
    const port = await freePort();
    expect((await t.manager.createProxy({ body: { proxy: { port, zone: RES } } })).response.status).toBe(200);
    const before = received;
    const r = await upload(`http://127.0.0.1:${port}`, 5);
    expect(r.status, r.text).toBe(200);
    expect(received - before).toBe(5 * MB);
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
