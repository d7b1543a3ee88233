import { readdirSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { BODY_WINDOW_MS, connectionCap, HEADERS_MS } from '../../src/router/connections.js';
import { useTrafficSandbox } from '../helpers.js';

// Client connections that say nothing, go away early or drip (issue 39, finding 1 and "slow clients"):
// connections that closed before their first byte stayed in CLOSE_WAIT on the network's port, one file
// descriptor each, for good; a peer that sent nothing or dripped a body was held as long as it liked on
// the manager API, the network and the ports; and enough of them took every descriptor of the process,
// after which every listener reset every connection. Each listener now ends a connection its peer
// ended, bounds the time of a head and the pace of a body, and answers a connection past its cap.

const fds = () => readdirSync('/proc/self/fd').length;

/** Polls `ok` every 50 ms until it holds or `ms` passed: whether it held. */
async function until(ok: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) return false;
    await new Promise((r) => setTimeout(r, 50));
  }
  return true;
}

/** A connection to loopback `port`, resolved once connected. */
function open(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = connect(port, '127.0.0.1', () => resolve(s));
    s.once('error', reject);
  });
}

/**
 * What the server sent on `socket` until it closed it (or `ms` passed: then `closed` is false); with
 * `head`, resolved as soon as a status line came.
 */
function answerOf(socket: Socket, ms: number, head = false): Promise<{ closed: boolean; text: string }> {
  return new Promise((resolve) => {
    let text = '';
    socket.on('data', (d) => {
      text += d;
      if (head && text.includes('\r\n')) resolve({ closed: socket.destroyed, text });
    });
    socket.on('error', () => undefined);
    const timer = setTimeout(() => resolve({ closed: false, text }), ms);
    socket.once('close', () => {
      clearTimeout(timer);
      resolve({ closed: true, text });
    });
  });
}

describe('client connections are bounded on every listener', () => {
  const ctx = useTrafficSandbox();
  /** Each listener of the sandbox by name: both APIs, the network, a port. */
  const listeners = async () => {
    const created = await ctx.manager.POST('/api/proxies', { body: { proxy: { port: 0, zone: 'res_zone' } } });
    const port = (created.data as { data: { port: number } }).data.port;
    return {
      account: Number(new URL(ctx.sandbox.accountUrl).port),
      manager: Number(new URL(ctx.sandbox.managerUrl).port),
      network: Number(new URL(ctx.sandbox.networkUrl as string).port),
      port,
    };
  };

  it('a connection that closes before its first byte is closed by the sandbox too, and its descriptor let go of', async () => {
    const ports = await listeners();
    const before = fds();
    for (const [name, port] of Object.entries(ports)) {
      const sockets = await Promise.all(Array.from({ length: 100 }, () => open(port)));
      const closed = sockets.map((s) => answerOf(s, HEADERS_MS / 2));
      for (const s of sockets) s.end();
      // Ended by its peer, a connection is ended at once: well before any timeout of the sandbox.
      const all = await Promise.all(closed);
      expect(all.filter((a) => !a.closed).length, name).toBe(0);
    }
    expect(await until(() => fds() <= before + 5, 5_000), `${fds()} descriptors open, ${before} before`).toBe(true);
  });

  it('a connection that sends nothing, or half a head, is closed within the head bound', async () => {
    const ports = await listeners();
    const before = fds();
    const started = Date.now();
    const played = await Promise.all(
      Object.entries(ports).flatMap(([name, port]) =>
        [false, true].map(async (half) => {
          const s = await open(port);
          if (half) s.write('GET /api/version HTTP/1.1\r\nHost: 127.0.0.1\r\n');
          return { name, half, ...(await answerOf(s, HEADERS_MS * 4)) };
        }),
      ),
    );
    expect(played.filter((p) => !p.closed)).toEqual([]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(HEADERS_MS - 100);
    expect(await until(() => fds() <= before + 5, 5_000)).toBe(true);
  }, 60_000);

  it('a body that stalls or drips is ended with a 408 on the manager API, the network and a port', async () => {
    const ports = await listeners();
    const auth = `Basic ${Buffer.from('lum-customer-hl_1a2b3c4d-zone-res_zone:r3s1d3nt9x7w').toString('base64')}`;
    const requests = {
      manager: 'POST /api/proxies HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n',
      network: `POST http://127.0.0.1:9/upload HTTP/1.1\r\nHost: 127.0.0.1:9\r\nProxy-Authorization: ${auth}\r\n`,
      port: 'POST http://127.0.0.1:9/upload HTTP/1.1\r\nHost: 127.0.0.1:9\r\n',
    };
    const played = await Promise.all(
      Object.entries(requests).flatMap(([name, head]) =>
        ['stall', 'drip'].map(async (how) => {
          const s = await open(ports[name as keyof typeof ports]);
          s.write(`${head}Content-Length: 2000000\r\n\r\n${'x'.repeat(1024)}`);
          // A drip of 1 KB a second, bounded by the test's wait (each write skipped once the socket is gone).
          const drip =
            how === 'drip'
              ? setInterval(() => {
                  if (!s.destroyed) s.write('x'.repeat(1024));
                }, 1_000)
              : undefined;
          const answer = await answerOf(s, BODY_WINDOW_MS * 4);
          clearInterval(drip);
          return { name, how, closed: answer.closed, status: answer.text.split('\r\n')[0] };
        }),
      ),
    );
    expect(played).toEqual(
      Object.keys(requests).flatMap((name) =>
        ['stall', 'drip'].map((how) => ({ name, how, closed: true, status: 'HTTP/1.1 408 Request Timeout' })),
      ),
    );
  }, 60_000);

  it('a listener past its cap answers 503 and still serves once connections close; the manager API answers meanwhile', async () => {
    const ports = await listeners();
    const cap = connectionCap();
    const before = fds();
    const held = await Promise.all(Array.from({ length: cap }, () => open(ports.network)));
    const answers = held.map((s) => answerOf(s, HEADERS_MS * 4));
    try {
      const extra = await open(ports.network);
      extra.write('GET http://127.0.0.1:9/ HTTP/1.1\r\nHost: 127.0.0.1:9\r\n\r\n');
      const refused = await answerOf(extra, 5_000, true);
      expect(refused.text.split('\r\n')[0]).toBe('HTTP/1.1 503 Service Unavailable');
      const version = await fetch(`${ctx.sandbox.managerUrl}/api/version`);
      expect(version.status).toBe(200);
    } finally {
      for (const s of held) s.destroy();
    }
    await Promise.all(answers);
    // Both ends of every held connection closed: the client's here, the sandbox's behind it.
    expect(await until(() => fds() <= before + 5, 5_000)).toBe(true);
    const again = await open(ports.network);
    again.write('GET http://127.0.0.1:9/ HTTP/1.1\r\nHost: 127.0.0.1:9\r\n\r\n');
    const served = await answerOf(again, 5_000, true);
    again.destroy();
    // Served by the network again: no credential, its own 407.
    expect(served.text.split('\r\n')[0]).toBe('HTTP/1.1 407 Proxy Authentication Required');
  }, 60_000);
});
