import { createServer, type Server } from 'node:net';
import { rawAnswer, tunnelThrough, viaProxy } from '@zone-api/testkit';
import { withoutOpenSslThread } from '@zone-api/testkit/differential';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SHIFT, usePair } from './pair.js';

// A port with `proxy_connection_type: "https"` on the real manager 1.570.247 and on the sandbox, side by
// side (pair.ts; a sandbox port is the real one's number + SHIFT). The real manager then speaks TLS to
// its upstream (lib/requester.js 14-29, lib/mixins/server_send.js 271-279): through the sandbox's
// network, which takes TLS on its port as the provider's super proxy does, both carry requests, tunnels
// and the status check; through an external proxy that speaks no TLS (an HTTP server: the pair's own
// target, which fails the handshake as any server in the clear does), both answer the real manager's
// 502s (the plain one without `x-lpm-error`, whose TLS error text ends in a line break) and log them.

const pair = usePair();
let echo: Server;
let echoAt: string;

beforeAll(async () => {
  echo = createServer((socket) => socket.pipe(socket));
  await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
  echoAt = `127.0.0.1:${(echo.address() as { port: number }).port}`;
});
afterAll(async () => {
  await new Promise<void>((resolve) => (echo ? echo.close(() => resolve()) : resolve()));
});

const sides = (port: number) => [
  { side: 'real manager', port, manager: pair.manager.url },
  { side: 'sandbox', port: port + SHIFT, manager: pair.sandbox.managerUrl },
];

type Entry = {
  request: { method: string; url: string };
  response: { status: number; statusText: string; headers: { name: string; value: string }[] };
  details: { context: string };
};
const logged = async (manager: string, port: number) =>
  ((await (await fetch(`${manager}/api/logs?port_from=${port}&port_to=${port}&limit=50`)).json()) as { log: { entries: Entry[] } }).log
    .entries;

describe('proxy_connection_type https, the real manager and the sandbox side by side', () => {
  it('through the network (which takes TLS): a request, a tunnel and the status check go through on both', async () => {
    await pair.createBoth(24300, { proxy_connection_type: 'https' });
    const answers = [];
    for (const { side, port, manager } of sides(24300)) {
      const res = await viaProxy(`http://127.0.0.1:${port}`, `${pair.targetUrl}/over-tls`);
      const tunnel = await tunnelThrough(`http://127.0.0.1:${port}`, echoAt);
      const status = await (await fetch(`${manager}/api/proxy_status/${port}`)).json();
      answers.push({
        status: res.status,
        text: res.text,
        peerNamed: typeof res.headers['x-brd-ip'],
        tunnel: { status: tunnel.status, echoed: tunnel.echoed },
        check: status,
      });
      expect(answers.at(-1), `${side}\n${pair.manager.output().slice(-2000)}`).toEqual({
        status: 200,
        text: 'hello /over-tls',
        peerNamed: 'string',
        tunnel: { status: 200, echoed: 'ping through the tunnel\n' },
        check: { status: 'ok', status_details: [] },
      });
    }
    expect(answers[1]).toEqual(answers[0]);
  });

  it('through a proxy that speaks no TLS: the same 502s to the client, the same status, the same log', async () => {
    await pair.createBoth(24301, { proxy_connection_type: 'https', ext_proxies: [new URL(pair.targetUrl).host] });
    const seen = [];
    for (const { port, manager } of sides(24301)) {
      const plain = await viaProxy(`http://127.0.0.1:${port}`, `${pair.targetUrl}/refused`);
      const connectAnswer = await rawAnswer(port, `CONNECT ${echoAt} HTTP/1.1\r\nHost: ${echoAt}\r\n\r\n`);
      const check = await (await fetch(`${manager}/api/proxy_status/${port}`)).json();
      let entries: Entry[] = [];
      await expect
        .poll(async () => {
          entries = await logged(manager, port);
          return entries.length;
        })
        .toBe(5);
      seen.push({
        plain: {
          status: plain.status,
          text: plain.text,
          headers: Object.keys(plain.headers)
            .filter((h) => h !== 'date')
            .sort(),
        },
        connect: withoutOpenSslThread(connectAnswer),
        check,
        log: entries
          .map((e) => ({
            method: e.request.method,
            context: e.details.context,
            status: e.response.status,
            statusText: e.response.statusText,
            headers: e.response.headers.map((h) => ({ ...h, value: withoutOpenSslThread(h.value) })),
          }))
          .sort((a, b) => `${a.method}${a.context}`.localeCompare(`${b.method}${b.context}`)),
      });
    }
    const [real, sandbox] = seen;
    expect(real?.plain).toEqual({ status: 502, text: '', headers: ['connection', 'transfer-encoding'] });
    expect(real?.connect).toMatch(
      /^HTTP\/1\.1 502 Proxy Manager - Bad Gateway\r\nConnection: close\r\nx-lpm-error: write EPROTO <thread>:error:.*wrong version number.*\n\r\n\r\n$/,
    );
    expect(real?.check).toEqual({ status: 'Proxy Manager - Bad Gateway', status_details: [] });
    expect(real?.log.map((e) => `${e.method} ${e.context} ${e.status}`)).toEqual([
      'CONNECT RESPONSE 502',
      'GET RESPONSE 502',
      'GET STATUS CHECK 502',
      'GET STATUS CHECK 502',
      'GET STATUS CHECK 502',
    ]);
    expect(sandbox).toEqual(real);
  }, 60_000);
});
