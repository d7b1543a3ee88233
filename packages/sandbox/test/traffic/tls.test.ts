import { X509Certificate } from 'node:crypto';
import { createServer, type Server } from 'node:https';
import { freePort } from '@zone-api/testkit';
import { ProxyAgent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SandboxCa } from '../../src/traffic/ca.js';
import { listenOnLoopback, RES, type Rec, useTrafficSandbox } from '../helpers.js';

// SSL analyzing: a port with `ssl: true` terminates the TLS of a CONNECT with a certificate signed by
// the sandbox's CA (handed out by GET /__sandbox/ca), so HTTPS requests are logged in full; without
// it, HTTPS is tunnelled and logged as a tunnel. The target is an HTTPS server on loopback whose
// certificate comes from a CA of this test, which the sandbox is told to trust (targetCa).

const targetCa = await SandboxCa.create();
const t = useTrafficSandbox({ targetCa: [targetCa.certificate] });

let target: Server;
let targetUrl: string;

beforeAll(async () => {
  target = createServer(await targetCa.pemFor('127.0.0.1'), (req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ secure: true, path: req.url }));
  });
  targetUrl = `https://127.0.0.1:${await listenOnLoopback(target)}`;
});
afterAll(() => new Promise<void>((resolve) => target.close(() => resolve())));

async function viaTunnel(proxy: string, url: string, trust: string) {
  const agent = new ProxyAgent({ uri: proxy, requestTls: { ca: trust } });
  try {
    const res = await request(url, { dispatcher: agent });
    return { status: res.statusCode, text: await res.body.text() };
  } finally {
    await agent.close();
  }
}

const entriesOf = async (port: number) =>
  ((await t.manager.getLogs({ params: { query: { port_from: port, port_to: port } } })).data as Rec).log.entries as Rec[];

describe('SSL analyzing', () => {
  it('GET /__sandbox/ca hands out the CA that signs what an ssl port presents', async () => {
    const res = await fetch(`${t.sandbox.managerUrl}/__sandbox/ca`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/application\/x-pem-file/);
    const pem = await res.text();
    expect(pem).toBe(await t.sandbox.caCertificate());
    const ca = new X509Certificate(pem);
    expect(ca.ca).toBe(true);
    expect(ca.subject).toMatch(/zone-api sandbox CA/);
  });

  it('an ssl port terminates TLS with the sandbox CA and logs the HTTPS request in full', async () => {
    const port = await freePort();
    await t.manager.createProxy({ body: { proxy: { port, zone: RES, ssl: true } } });
    try {
      const pem = (await t.sandbox.caCertificate()) as string;
      const res = await viaTunnel(`http://127.0.0.1:${port}`, `${targetUrl}/inside?q=1`, pem);
      expect(res, res.text).toEqual({ status: 200, text: '{"secure":true,"path":"/inside?q=1"}' });
      const [entry] = await entriesOf(port);
      expect(entry).toMatchObject({
        request: { method: 'GET', url: `${targetUrl}/inside?q=1`, host: '127.0.0.1', httpVersion: 'unknown', queryString: [] },
        response: { status: 200, content: { mimeType: 'application/json', text: '{"secure":true,"path":"/inside?q=1"}' } },
        details: { port, protocol: 'https', success: 1 },
      });
      // The exit peer, named in the network's answer to the port's CONNECT, is logged, and bans apply.
      const peer = entry?.details.proxy_peer as string;
      expect(t.sandbox.state().peers.map((p) => p.ip)).toContain(peer);
      await t.manager.banIp({ params: { path: { port } }, body: { ip: peer } });
      expect((await viaTunnel(`http://127.0.0.1:${port}`, `${targetUrl}/after-ban`, pem)).status).toBe(200);
      const after = (await entriesOf(port)).find((e) => String(e.request.url).endsWith('/after-ban'));
      expect(after?.details.proxy_peer).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
      expect(after?.details.proxy_peer).not.toBe(peer);
      // A client that trusts only the target's own CA refuses the port's certificate: it is the sandbox's.
      await expect(viaTunnel(`http://127.0.0.1:${port}`, `${targetUrl}/x`, targetCa.certificate)).rejects.toThrow();
    } finally {
      await t.manager.deleteProxy({ params: { path: { port } } });
    }
  });

  it('without ssl, HTTPS is tunnelled end to end and logged as a tunnel', async () => {
    const port = await freePort();
    await t.manager.createProxy({ body: { proxy: { port, zone: RES } } });
    try {
      const res = await viaTunnel(`http://127.0.0.1:${port}`, `${targetUrl}/tunnelled`, targetCa.certificate);
      expect(res.status).toBe(200);
      await expect.poll(async () => (await entriesOf(port)).length).toBe(1);
      // The target is not on port 443: the real manager logs the network's answer and the protocol `http`.
      expect((await entriesOf(port))[0]).toMatchObject({
        request: { method: 'CONNECT' },
        response: { status: 200, statusText: 'Connection established' },
        details: { protocol: 'http' },
      });
    } finally {
      await t.manager.deleteProxy({ params: { path: { port } } });
    }
  });
});

describe('SSL analyzing and the target', () => {
  it('a target whose certificate the sandbox does not trust is a 502 naming the TLS error, unless the port is insecure', async () => {
    const stranger = await SandboxCa.create();
    const other = createServer(await stranger.pemFor('127.0.0.1'), (_req, res) => res.end('untrusted'));
    const url = `https://127.0.0.1:${await listenOnLoopback(other)}/`;
    const port = await freePort();
    await t.manager.createProxy({ body: { proxy: { port, zone: RES, ssl: true } } });
    try {
      const pem = (await t.sandbox.caCertificate()) as string;
      const refused = await viaTunnel(`http://127.0.0.1:${port}`, url, pem);
      expect(refused.status).toBe(502);
      expect(refused.text).toMatch(/The HTTPS target 127\.0\.0\.1:\d+ failed: [A-Z_]+ \(/);
      await t.manager.updateProxy({ params: { path: { port } }, body: { proxy: { insecure: true } } });
      expect(await viaTunnel(`http://127.0.0.1:${port}`, url, pem)).toEqual({ status: 200, text: 'untrusted' });
    } finally {
      await t.manager.deleteProxy({ params: { path: { port } } });
      other.close();
    }
  });
});
