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
