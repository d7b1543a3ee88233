import { X509Certificate } from 'node:crypto';
import { createServer as createHttpServer, type IncomingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { createManagerClient } from '@zone-api/manager-client';
import { basicAuth, freePort, peerOf, rawAnswer, tunnelThrough, viaProxy } from '@zone-api/testkit';
import { Server as PlainProxy } from 'proxy-chain';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultSeed, type Sandbox, startSandbox } from '../../src/index.js';
import { C, listenOnLoopback, RES, RES_PW, type Rec, useTrafficSandbox } from '../helpers.js';

// TLS between a port and its upstream. The network takes TLS and plain HTTP on its one port, as the
// provider's super proxy does; a port with `proxy_connection_type: "https"` speaks TLS to its upstream
// (no certificate check), as the real manager does, and against an upstream that speaks no TLS answers
// as the real manager 1.570.247 does (observed in the real-manager suite, forwarding-https.test.ts).

const t = useTrafficSandbox();

let target: ReturnType<typeof createHttpServer>;
let targetUrl: string;
let echo: Server;
let echoAt: string;
/** A plain HTTP proxy that speaks no TLS (proxy-chain, forwarding directly): the upstream of `plainUp`. */
let plainProxy: PlainProxy;
/** A sandbox whose ports' upstream (its --proxy) is `plainProxy`. */
let plainUp: Sandbox;
/** A sandbox whose ports' upstream is `t`'s network, reached over TCP (its --proxy), not in process. */
let overTcp: Sandbox;

beforeAll(async () => {
  target = createHttpServer((req, res) => {
    res.setHeader('content-type', 'text/plain');
    res.end(`target answers ${req.method} ${req.url}`);
  });
  targetUrl = `http://127.0.0.1:${await listenOnLoopback(target)}`;
  echo = createServer((socket) => socket.pipe(socket));
  echoAt = `127.0.0.1:${await listenOnLoopback(echo)}`;
  plainProxy = new PlainProxy({ port: 0, host: '127.0.0.1' });
  await plainProxy.listen();
  const seed = defaultSeed();
  seed.manager.ports = [];
  plainUp = await startSandbox({
    accountPort: 0,
    managerPort: 0,
    proxyPorts: true,
    freeProxyPorts: false,
    seed,
    upstream: { host: '127.0.0.1', port: plainProxy.port },
  });
  const network = new URL(t.sandbox.networkUrl as string);
  overTcp = await startSandbox({
    accountPort: 0,
    managerPort: 0,
    proxyPorts: true,
    freeProxyPorts: false,
    seed,
    upstream: { host: '127.0.0.1', port: Number(network.port) },
  });
});
afterAll(async () => {
  await overTcp?.close();
  await plainUp?.close();
  await plainProxy?.close(true);
  await new Promise<void>((resolve) => target.close(() => resolve()));
  await new Promise<void>((resolve) => echo.close(() => resolve()));
});

const networkPort = () => Number(new URL(t.sandbox.networkUrl as string).port);
const auth = (session: string) => basicAuth(`brd-customer-${C}-zone-${RES}-session-${session}`, RES_PW);

/** A request or a CONNECT to the network over TLS, trusting only the sandbox's CA: the answer, and the certificate it presented. */
function overTls(
  method: string,
  path: string,
  session: string,
): Promise<{ status: number; headers: IncomingHttpHeaders; text: string; cert: X509Certificate; socket?: Socket }> {
  return t.sandbox.caCertificate().then(
    (ca) =>
      new Promise((resolve, reject) => {
        const req = httpsRequest({
          host: '127.0.0.1',
          port: networkPort(),
          method,
          path,
          headers: { host: method === 'CONNECT' ? path : new URL(path).host, 'proxy-authorization': auth(session) },
          ca,
          agent: false,
        });
        req.setTimeout(5000, () => req.destroy(new Error('no answer over TLS')));
        req.once('error', reject);
        const certOf = () =>
          new X509Certificate((req.socket as unknown as { getPeerCertificate(d: true): { raw: Buffer } }).getPeerCertificate(true).raw);
        req.once('connect', (res, socket: Socket) =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text: '', cert: certOf(), socket }),
        );
        req.once('response', (res) => {
          let text = '';
          res.on('data', (d) => {
            text += d;
          });
          res.once('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text, cert: certOf() }));
        });
        req.end();
      }),
  );
}

const logsOf = async (sandbox: Sandbox, port: number) => {
  const manager = createManagerClient({ baseUrl: sandbox.managerUrl, retry: false, brand: 'pm' });
  return ((await manager.getLogs({ params: { query: { port_from: port, port_to: port } } })).data as Rec).log.entries as Rec[];
};

describe('the network takes TLS and plain HTTP on one port', () => {
  it('a request and a CONNECT over TLS are served as in the clear, under a certificate of the sandbox CA', async () => {
    const plain = await overTls('GET', `${targetUrl}/over-tls`, 'tls1');
    expect(plain).toMatchObject({ status: 200, text: 'target answers GET /over-tls' });
    expect(peerOf(plain.headers, 'brd')).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
    // The certificate: for the address asked for, issued by the sandbox's CA (the request above trusted only it).
    const ca = new X509Certificate((await t.sandbox.caCertificate()) as string);
    expect(plain.cert.checkIssued(ca)).toBe(true);
    expect(plain.cert.checkIP('127.0.0.1')).toBe('127.0.0.1');

    const tunnel = await overTls('CONNECT', echoAt, 'tls2');
    expect(tunnel.status).toBe(200);
    expect(peerOf(tunnel.headers, 'brd')).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
    const socket = tunnel.socket as Socket;
    socket.write('ping over tls\n');
    const [echoed] = (await new Promise((resolve) => socket.once('data', (d) => resolve([String(d)])))) as string[];
    socket.destroy();
    expect(echoed).toBe('ping over tls\n');

    // In the clear on the same port, as before.
    const clear = await viaProxy(t.sandbox.networkUrl as string, `${targetUrl}/in-clear`, { auth: auth('clear1') });
    expect(clear).toMatchObject({ status: 200, text: 'target answers GET /in-clear' });
    // Each billed to the Zone, whichever way it came.
    const billed = (await t.account.listRequestLogs({ params: { query: { zone: RES } } })).data as Rec[];
    const urls = billed.map((l) => l.dst.url);
    expect(urls).toEqual(expect.arrayContaining([`${targetUrl}/over-tls`, echoAt, `${targetUrl}/in-clear`]));
  });

  it('a client that names a host (SNI) gets a certificate for it; one that opens TLS and goes away leaves the network serving', async () => {
    const ca = (await t.sandbox.caCertificate()) as string;
    const cert = await new Promise<X509Certificate>((resolve, reject) => {
      const s = tlsConnect({ host: '127.0.0.1', port: networkPort(), servername: 'super.proxy.test', ca }, () => {
        resolve(new X509Certificate(s.getPeerCertificate(true).raw));
        s.destroy();
      });
      s.once('error', reject);
    });
    expect(cert.checkHost('super.proxy.test')).toBe('super.proxy.test');
    // A handshake's first byte, then nothing: the connection is dropped when it goes, the network serves on.
    const half = connect(networkPort(), '127.0.0.1');
    await new Promise((resolve) => half.once('connect', resolve));
    half.end(Buffer.from([0x16, 0x03, 0x01]));
    await new Promise((resolve) => half.once('close', resolve));
    const after = await viaProxy(t.sandbox.networkUrl as string, `${targetUrl}/after`, { auth: auth('after1') });
    expect(after.status).toBe(200);
  });
});

describe('a port with proxy_connection_type https speaks TLS to its upstream', () => {
  it('to the network, in process and over TCP: requests, tunnels and the status check go through', async () => {
    for (const sandbox of [t.sandbox, overTcp]) {
      const manager = createManagerClient({ baseUrl: sandbox.managerUrl, retry: false, brand: 'pm' });
      const port = await freePort();
      expect((await manager.createProxy({ body: { proxy: { port, zone: RES, proxy_connection_type: 'https' } } })).response.status).toBe(
        200,
      );
      try {
        const res = await viaProxy(`http://127.0.0.1:${port}`, `${targetUrl}/https-port`);
        expect(res).toMatchObject({ status: 200, text: 'target answers GET /https-port' });
        expect(await tunnelThrough(`http://127.0.0.1:${port}`, echoAt)).toMatchObject({ status: 200, echoed: 'ping through the tunnel\n' });
        expect((await manager.getProxyStatus({ params: { path: { port } } })).data).toMatchObject({ status: 'ok' });
      } finally {
        await manager.deleteProxy({ params: { path: { port } } });
      }
    }
  });

  it('to an upstream that speaks no TLS: the real manager’s 502s, the plain one without x-lpm-error, each logged with the TLS error', async () => {
    const manager = createManagerClient({ baseUrl: plainUp.managerUrl, retry: false, brand: 'pm' });
    const port = await freePort();
    const plainPort = await freePort();
    await manager.createProxy({ body: { proxy: { port, zone: RES, proxy_connection_type: 'https' } } });
    await manager.createProxy({ body: { proxy: { port: plainPort, zone: RES } } });
    // The same upstream in the clear carries the request: it is the TLS that fails.
    expect(await viaProxy(`http://127.0.0.1:${plainPort}`, `${targetUrl}/clear`)).toMatchObject({ status: 200 });

    const res = await viaProxy(`http://127.0.0.1:${port}`, `${targetUrl}/refused`);
    expect(res).toMatchObject({ status: 502, text: '' });
    expect(res.headers['x-lpm-error']).toBeUndefined();
    expect(res.headers).toMatchObject({ connection: 'close', 'transfer-encoding': 'chunked' });
    const raw = await rawAnswer(port, `GET ${targetUrl}/raw HTTP/1.1\r\nHost: x\r\n\r\n`);
    expect(raw.split('\r\n')[0]).toBe('HTTP/1.1 502 Proxy Manager - Bad Gateway');

    // A CONNECT: the answer's head holds the TLS error as it came, line break and all.
    const connectAnswer = await rawAnswer(port, `CONNECT ${echoAt} HTTP/1.1\r\nHost: ${echoAt}\r\n\r\n`);
    expect(connectAnswer).toMatch(
      /^HTTP\/1\.1 502 Proxy Manager - Bad Gateway\r\nConnection: close\r\nx-lpm-error: write EPROTO [0-9A-F]+:error:[0-9A-F]+:SSL routines:[^\r\n]*wrong version number[^\r\n]*\n\r\n\r\n$/,
    );

    // The status check reads the 502's status text (no x-lpm-error came), after got's two retries.
    expect((await manager.getProxyStatus({ params: { path: { port } } })).data).toEqual({
      status: 'Proxy Manager - Bad Gateway',
      status_details: [],
    });

    const entries = await logsOf(plainUp, port);
    const tlsError = /^write EPROTO .*wrong version number.*\n$/;
    for (const e of entries) {
      expect(e.response).toMatchObject({ status: 502, statusText: '', content: { size: 0 } });
      expect(e.response.headers).toEqual([
        { name: 'Connection', value: 'close' },
        { name: 'x-lpm-error', value: expect.stringMatching(tlsError) },
      ]);
    }
    expect(entries.map((e) => [e.request.method, e.details.context]).sort()).toEqual(
      [
        ['CONNECT', 'RESPONSE'],
        ['GET', 'RESPONSE'],
        ['GET', 'RESPONSE'],
        ['GET', 'STATUS CHECK'],
        ['GET', 'STATUS CHECK'],
        ['GET', 'STATUS CHECK'],
      ].sort(),
    );
  }, 30_000);
});
