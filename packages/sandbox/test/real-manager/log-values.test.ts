import { request as httpRequest } from 'node:http';
import { describe, expect, it } from 'vitest';
import { THROUGH_IDLE_MS, usePair } from './pair.js';
import { normalised, portLog, portOf, SIDES, type Side } from './port-logs.js';

// A proxy port's log entries, field by field, on the real manager 1.570.247 and the sandbox side by side
// (pair.ts): the request's headers as the client spelled them, its hop-by-hop ones and the `Connection`
// the real manager writes (lib/context.js 121-143, util/takeup_util.js 9-34); the answer's headers as
// the upstream sent them, in name order (lib/server.js 11 and 456); the bytes each way counted with them
// (lib/context.js 92-112); no `proxy_peer` where no peer was named (lib/server.js 462); no comment on
// the content (lib/manager.js 476-484). Only what differs between two runs of the real manager itself is
// normalised: ids, times, the port's number, the exit peer's address and the upstream password (parity.yaml).

const pair = usePair();
/** A request through each side's port as a client writes it: `raw` header names and values in this order and spelling. */
function send(port: number, path: string, raw: [string, string][]): Promise<Record<Side, { status: number; headers: string[] }>> {
  const one = (side: Side) =>
    new Promise<{ status: number; headers: string[] }>((resolve) => {
      const req = httpRequest(
        { host: '127.0.0.1', port: portOf(side, port), method: 'GET', path: `${pair.targetUrl}${path}`, headers: raw.flat(), agent: false },
        (res) => {
          res.resume();
          // The names only, in name order: which the answer carries (their order on the wire is not compared).
          res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.rawHeaders.filter((_, i) => i % 2 === 0).sort() }));
        },
      );
      req.on('error', (err) => resolve({ status: 0, headers: [err.message] }));
      req.setTimeout(THROUGH_IDLE_MS, () => req.destroy(new Error('no answer')));
      req.end();
    });
  return Promise.all(SIDES.map(one)).then(([real, sandbox]) => ({ real: real as never, sandbox: sandbox as never }));
}

const host = () => new URL(pair.targetUrl).host;

describe('a port’s log entries, value by value', () => {
  it('request headers as the client spelled them, hop-by-hop ones kept, the real manager’s Connection; answer headers in name order; bytes counted with them', async () => {
    const port = 24800;
    await pair.createBoth(port);
    const sent = await send(port, '/lv-a', [
      ['Host', host()],
      ['User-Agent', 'UA/1'],
      ['accept', '*/*'],
      ['Proxy-Connection', 'keep-alive'],
      ['Keep-Alive', '5'],
      ['X-Mixed-Case', 'a'],
      ['X-Empty', ''],
      ['Connection', 'close'],
    ]);
    expect(sent.real.status).toBe(200);
    expect(sent.sandbox).toEqual(sent.real);
    const second = await send(port, '/lv-b', [
      ['host', host()],
      ['connection', 'close'],
      ['x-lpm-session', 'own1'],
    ]);
    expect(second.sandbox).toEqual(second.real);
    const log = await portLog(pair, port, 2);
    const entries = (log.real.log.entries as Array<{ request: { url: string; headers: unknown }; response: { headers: unknown } }>).sort(
      (a, b) => a.request.url.localeCompare(b.request.url),
    );
    expect(entries.map((e) => e.request.headers)).toEqual([
      [
        { name: 'Host', value: host() },
        { name: 'User-Agent', value: 'UA/1' },
        { name: 'accept', value: '*/*' },
        { name: 'Proxy-Connection', value: 'keep-alive' },
        { name: 'Keep-Alive', value: '5' },
        { name: 'X-Mixed-Case', value: 'a' },
        { name: 'Connection', value: 'keep-alive' },
      ],
      [
        { name: 'host', value: host() },
        { name: 'connection', value: 'close' },
      ],
    ]);
    expect(((entries[0]?.response.headers ?? []) as { name: string }[]).map((h) => h.name)).toEqual([
      'connection',
      'content-length',
      'content-type',
      'date',
      'keep-alive',
      'x-brd-ip',
    ]);
    expect(normalised('sandbox', port, log.sandbox)).toEqual(normalised('real', port, log.real));
  });

  it('a request the network refused (no peers in the country): no proxy_peer, the network’s answer headers, bytes as the real manager counts them', async () => {
    const port = 24801;
    await pair.createBoth(port);
    const sent = await send(port, '/lv-c', [
      ['Host', host()],
      ['x-lpm-country', 'zz'],
    ]);
    expect(sent.real.status).toBe(502);
    expect(sent.sandbox).toEqual(sent.real);
    const log = await portLog(pair, port, 1);
    expect(log.real.log.entries[0]?.details).not.toHaveProperty('proxy_peer');
    expect(normalised('sandbox', port, log.sandbox)).toEqual(normalised('real', port, log.real));
  });
});
