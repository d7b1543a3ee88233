import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { request as httpRequest, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import { type AddressInfo, createServer, type Server, type Socket } from 'node:net';
import { createManagerClient } from '@zone-api/manager-client';
import { basicAuth, freePort, peerOf, tunnelThrough, viaProxy } from '@zone-api/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultSeed, startSandbox } from '../../src/index.js';
import { C, listenOnLoopback, RES, RES_PW, type Rec, useTrafficSandbox } from '../helpers.js';

// CONNECT tunnels name their exit peer: the network answers the CONNECT with `x-<brand>-ip`, as the
// provider's super proxy does, and a port reads it, logs it and hands the answer on. As in the real
// manager (proven in the real-manager suite), a port does not check bans on a tunnel it does not open:
// only plain requests and SSL-analyzed ones (traffic.test.ts, traffic-tls.test.ts) avoid a banned
// peer. The target is a loopback TCP echo server this file starts.

const t = useTrafficSandbox();

let echo: Server;
let target: string;
beforeAll(async () => {
  echo = createServer((socket) => socket.pipe(socket));
  target = `127.0.0.1:${await listenOnLoopback(echo)}`;
});
afterAll(() => new Promise<void>((resolve) => echo.close(() => resolve())));

/**
 * A raw CONNECT to `authority` through `proxy`: the answer, the tunnel's socket (paused, so that a
 * test reads it when it means to) and the bytes that came with the answer.
 */
function openTunnel(proxy: string, authority: string, auth?: string): Promise<{ res: IncomingMessage; socket: Socket; head: Buffer }> {
  const p = new URL(proxy);
  return new Promise((resolve, reject) => {
    const req = httpRequest({
      host: p.hostname,
      port: p.port,
      method: 'CONNECT',
      path: authority,
      headers: auth ? { 'proxy-authorization': auth } : {},
      agent: false,
    });
    req.setTimeout(5000, () => req.destroy(new Error('no answer to the CONNECT')));
    req.once('error', reject);
    req.once('connect', (res, socket: Socket, head: Buffer) => {
      socket.pause();
      resolve({ res, socket, head });
    });
    req.end();
  });
}

const portPeerOf = (headers: IncomingHttpHeaders) => peerOf(headers, 'brd');
const zonePeers = () =>
  t.sandbox
    .state()
    .peers.filter((p) => p.zone === RES || p.vip !== undefined)
    .map((p) => p.ip);

describe('CONNECT tunnels name their exit peer', () => {
  it('the network answers a CONNECT with the exit peer in x-<brand>-ip, kept for the session', async () => {
    const auth = basicAuth(`lum-customer-${C}-zone-${RES}-session-tun1`, RES_PW);
    const a = await tunnelThrough(t.sandbox.networkUrl as string, target, { auth });
    expect(a).toMatchObject({ status: 200, echoed: 'ping through the tunnel\n' });
    expect(zonePeers()).toContain(peerOf(a.headers));
    expect(peerOf((await tunnelThrough(t.sandbox.networkUrl as string, target, { auth })).headers)).toBe(peerOf(a.headers));
    // A target that refuses: the network answers 502 with its error headers (nothing was opened).
    const closed = await tunnelThrough(t.sandbox.networkUrl as string, `127.0.0.1:${await freePort()}`, { auth });
    expect(closed.status).toBe(502);
    expect(closed.headers['x-luminati-err-code']).toBe('target_unreachable');
    expect(peerOf(closed.headers)).toBeUndefined();
  });

  it('a port passes the peer on and logs it; a banned peer still carries tunnels, as in the real manager', async () => {
    const { manager } = t;
    const port = await freePort();
    await manager.createProxy({ body: { proxy: { port, zone: RES } } });
    const proxy = `http://127.0.0.1:${port}`;
    try {
      const first = await tunnelThrough(proxy, target);
      expect(first).toMatchObject({ status: 200, echoed: 'ping through the tunnel\n' });
      const peer = portPeerOf(first.headers) as string;
      expect(zonePeers()).toContain(peer);
      // The port's session keeps its peer from one tunnel to the next.
      expect(portPeerOf((await tunnelThrough(proxy, target)).headers)).toBe(peer);
      await expect
        .poll(async () => ((await manager.getLogs({ params: { query: { port_from: port, port_to: port } } })).data as Rec).log.entries)
        .toHaveLength(2);
      const logged = ((await manager.getLogs({ params: { query: { port_from: port, port_to: port } } })).data as Rec).log.entries;
      expect(logged[0]).toMatchObject({
        request: { method: 'CONNECT', url: target },
        response: { status: 200 },
        details: { proxy_peer: peer },
      });

      // Banned for this port (for the target's domain, and for every domain): the real manager checks
      // bans on the requests it reads, not on a tunnel it does not open, so the peer stays.
      await manager.banIp({ params: { path: { port } }, body: { ip: peer, domain: '127.0.0.1' } });
      await manager.banIp({ params: { path: { port } }, body: { ip: peer } });
      const afterBan = await tunnelThrough(proxy, target);
      expect(afterBan).toMatchObject({ status: 200, echoed: 'ping through the tunnel\n' });
      expect(portPeerOf(afterBan.headers)).toBe(peer);
      const logs = ((await manager.getLogs({ params: { query: { port_from: port, port_to: port } } })).data as Rec).log.entries;
      expect(logs.map((e: Rec) => e.details.proxy_peer)).toEqual([peer, peer, peer]);
    } finally {
      await manager.deleteProxy({ params: { path: { port } } });
    }
  });

  it('in process or over TCP (a sandbox whose upstream, --proxy, is the network), a port hands on the peer and the refusals alike', async () => {
    const network = new URL(t.sandbox.networkUrl as string);
    // The upstream given as the real manager's --proxy/--proxy_port: reached over TCP, even when it is a network.
    const seed = defaultSeed();
    seed.manager.ports = [];
    const tcp = await startSandbox({
      accountPort: 0,
      managerPort: 0,
      proxyPorts: true,
      freeProxyPorts: false,
      seed,
      upstream: { host: '127.0.0.1', port: Number(network.port) },
    });
    const sides = [
      { manager: t.manager, port: await freePort() },
      { manager: createManagerClient({ baseUrl: tcp.managerUrl, retry: false, brand: 'pm' }), port: await freePort() },
    ];
    const closed = `127.0.0.1:${await freePort()}`;
    try {
      for (const { manager, port } of sides) {
        expect((await manager.createProxy({ body: { proxy: { port, zone: RES } } })).response.status).toBe(200);
        const open = await tunnelThrough(`http://127.0.0.1:${port}`, target);
        expect(open).toMatchObject({ status: 200, echoed: 'ping through the tunnel\n' });
        expect(zonePeers()).toContain(portPeerOf(open.headers));
        const refused = await tunnelThrough(`http://127.0.0.1:${port}`, closed);
        expect(refused.status).toBe(502);
        expect(refused.headers['x-brd-err-code']).toBe('target_unreachable');
        await expect
          .poll(
            async () => ((await manager.getLogs({ params: { query: { port_from: port, port_to: port } } })).data as Rec).log.entries.length,
          )
          .toBe(2);
        const [last] = ((await manager.getLogs({ params: { query: { port_from: port, port_to: port } } })).data as Rec).log.entries.filter(
          (e: Rec) => e.request.url === closed,
        );
        expect(last).toMatchObject({ request: { method: 'CONNECT' }, response: { status: 502 } });
        // A plain request to it: the network's refusal, handed on the same way.
        const plain = await viaProxy(`http://127.0.0.1:${port}`, `http://${closed}/plain`);
        expect(plain.status).toBe(502);
        expect(plain.headers['x-brd-err-code']).toBe('target_unreachable');
      }
      // The refused tunnels were billed to the Zone by the network, one per port.
      const billed = (await t.account.listRequestLogs({ params: { query: { zone: RES, 'dst.url': closed } } })).data as Rec[];
      expect(billed.map((l) => l.status.code)).toEqual([502, 502]);
    } finally {
      await t.manager.deleteProxy({ params: { path: { port: sides[0]?.port as number } } });
      await tcp.close();
    }
  });
});

describe('a tunnel relays what its target sends without copying it', () => {
  // The relay reads a target in large reads into one buffer per tunnel and writes from that buffer:
  // it must not read again while the client's socket still holds bytes of the last read, or those
  // bytes would be overwritten before they are sent.
  const MB = 1024 * 1024;
  const TOTAL = 128; // MB: far more than the kernel's socket buffers on the way can hold
  const block = randomBytes(MB);
  const chunk = (i: number) => {
    const c = Buffer.from(block);
    c.writeUInt32BE(i, 0);
    return c;
  };

  it('a client that stops reading holds the target back; once it reads, every byte arrives in order', async () => {
    const { manager } = t;
    const expected = createHash('sha256');
    for (let i = 0; i < TOTAL; i++) expected.update(chunk(i));
    let handed = 0;
    const source = createServer(async (socket) => {
      socket.on('error', () => socket.destroy());
      for (let i = 0; i < TOTAL && !socket.destroyed; i++) {
        if (!socket.write(chunk(i))) await once(socket, 'drain');
        handed = i + 1;
      }
      socket.end();
    });
    await listenOnLoopback(source);
    const port = await freePort();
    await manager.createProxy({ body: { proxy: { port, zone: RES } } });
    try {
      const { res, socket, head } = await openTunnel(`http://127.0.0.1:${port}`, `127.0.0.1:${(source.address() as AddressInfo).port}`);
      expect(res.statusCode).toBe(200);
      // The client reads nothing: the target is held back once the buffers on the way are full. The
      // target, the sandbox and the client are sockets of this process, so bytes on the way move within
      // turns of its event loop, not after some wall-clock time: held back is the count handed staying
      // put over 50 turns in a row (at most 20,000 turns), however loaded the machine.
      for (let turns = 0, still = 0, last = -1; turns < 20_000 && still < 50 && handed < TOTAL; turns++) {
        await new Promise((resolve) => setImmediate(resolve));
        still = handed > 0 && handed === last ? still + 1 : 0;
        last = handed;
      }
      expect(handed).toBeGreaterThan(0);
      expect(handed).toBeLessThan(TOTAL);

      // What came with the answer to the CONNECT is the start of what the target sent.
      const received = createHash('sha256').update(head);
      let bytes = head.length;
      socket.on('data', (d: Buffer) => {
        received.update(d);
        bytes += d.length;
      });
      socket.resume();
      await once(socket, 'end');
      socket.destroy();
      expect(bytes).toBe(TOTAL * MB);
      expect(received.digest('hex')).toBe(expected.digest('hex'));
      // The tunnel's log entry counts every byte the target sent.
      await expect
        .poll(async () => ((await manager.getLogs({ params: { query: { port_from: port, port_to: port } } })).data as Rec).log.entries)
        .toHaveLength(1);
      const [entry] = ((await manager.getLogs({ params: { query: { port_from: port, port_to: port } } })).data as Rec).log.entries;
      // (its in_bw and out_bw add the heads of the CONNECT's answer and of the CONNECT)
      expect(entry.response.content.size).toBe(TOTAL * MB);
      expect(entry.details.in_bw).toBeGreaterThan(TOTAL * MB);
      expect(entry.details.in_bw).toBeLessThan(TOTAL * MB + 1024);
    } finally {
      await manager.deleteProxy({ params: { path: { port } } });
      await new Promise<void>((resolve) => source.close(() => resolve()));
    }
  });

  it('a client that goes away, or a target that resets, mid-download ends the tunnel: it is logged, and the sandbox carries on', async () => {
    const { manager } = t;
    // A target that sends without end; a second one that resets its connection after 4 MB.
    const accepted: Socket[] = [];
    const endless = createServer((socket) => {
      accepted.push(socket);
      socket.on('error', () => socket.destroy());
      const pump = () => {
        while (!socket.destroyed && socket.write(block));
        if (!socket.destroyed) socket.once('drain', pump);
      };
      pump();
    });
    const resetting = createServer((socket) => {
      accepted.push(socket);
      socket.on('error', () => socket.destroy());
      for (let i = 0; i < 4; i++) socket.write(block);
      socket.once('drain', () => socket.resetAndDestroy());
    });
    for (const server of [endless, resetting]) await listenOnLoopback(server);
    const port = await freePort();
    await manager.createProxy({ body: { proxy: { port, zone: RES } } });
    /** Opens a tunnel to `server` and reads it until `stop` says so (then destroys it) or it closes: the bytes read. */
    const readThrough = async (server: Server, stop: (bytes: number) => boolean) => {
      const { socket, head } = await openTunnel(`http://127.0.0.1:${port}`, `127.0.0.1:${(server.address() as AddressInfo).port}`);
      return new Promise<number>((resolve) => {
        let bytes = head.length;
        socket.on('error', () => socket.destroy());
        socket.on('data', (d: Buffer) => {
          bytes += d.length;
          if (stop(bytes)) socket.destroy();
        });
        socket.once('close', () => resolve(bytes));
        socket.resume();
      });
    };
    const entries = async () =>
      ((await manager.getLogs({ params: { query: { port_from: port, port_to: port } } })).data as Rec).log.entries as Rec[];
    try {
      expect(await readThrough(endless, (bytes) => bytes >= 8 * MB)).toBeGreaterThanOrEqual(8 * MB);
      await expect.poll(async () => (await entries()).length).toBe(1);
      expect(await readThrough(resetting, () => false)).toBeLessThanOrEqual(4 * MB);
      await expect.poll(async () => (await entries()).length).toBe(2);
      // Both logged with what they carried; the port still tunnels.
      for (const e of await entries()) expect(e.details.in_bw).toBeGreaterThan(0);
      expect(await tunnelThrough(`http://127.0.0.1:${port}`, target)).toMatchObject({ status: 200, echoed: 'ping through the tunnel\n' });
    } finally {
      await manager.deleteProxy({ params: { path: { port } } });
      for (const socket of accepted) socket.destroy();
      for (const server of [endless, resetting]) await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
