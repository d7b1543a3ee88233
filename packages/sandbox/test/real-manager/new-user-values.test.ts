import { viaProxy } from '@zone-api/testkit';
import { describe, expect, it } from 'vitest';
import { SHIFT, THROUGH_IDLE_MS, usePair } from './pair.js';

// Issue 34's new-user sequence, value by value: what a new user of the real manager 1.570.247 does in
// the first minutes (a port with per-request sessions and countries through `x-lpm-*` headers, a
// sticky port, the logs read with filters, the statistics with their byte counts), played against the
// real manager and the sandbox side by side (pair.ts; a sandbox port is the real one's number + SHIFT),
// every request to the same target path on both sides, and every value a user reads compared: the
// answers and their exit peers, each log entry's status, URL, upstream username, sessions and byte
// counts under each filter, the totals, and each port's line of recent_stats.

const pair = usePair();
type Side = 'real' | 'sandbox';
const SIDES: Side[] = ['real', 'sandbox'];
const portOf = (side: Side, port: number) => (side === 'real' ? port : port + SHIFT);
const managerOf = (side: Side) => (side === 'real' ? pair.manager.url : pair.sandbox.managerUrl);

const PORT = 24800;
const STICKY = 24801;

interface Entry {
  request: { url: string };
  response: { status: number | string };
  details: {
    username?: string;
    timeline?: Array<{ session?: string }>;
    in_bw: number;
    out_bw: number;
    bw: number;
    proxy_peer?: string | null;
  };
}
interface Logs {
  log: { entries: Entry[] };
  total: number;
  sum_in: number;
  sum_out: number;
}

/** The same request through each side's port: status, body and exit peer by side. */
async function through(port: number, path: string, headers: Record<string, string> = {}) {
  const out = {} as Record<Side, { status: number; text: string; peer: unknown }>;
  for (const side of SIDES) {
    const res = await viaProxy(`http://127.0.0.1:${portOf(side, port)}`, `${pair.targetUrl}${path}`, { headers, idleMs: THROUGH_IDLE_MS });
    out[side] = { status: res.status, text: res.text, peer: res.headers['x-brd-ip'] };
  }
  return out;
}

/** A log query on each side (`q` written with each side's port numbers), each entry as a user reads it, its own port's number as PORT. */
async function logs(q: (at: (p: number) => number) => string) {
  const out = {} as Record<Side, unknown>;
  for (const side of SIDES) {
    const at = (p: number) => portOf(side, p);
    const r = (await (await fetch(`${managerOf(side)}/api/logs?${q(at)}`)).json()) as Logs;
    const name = (t: string | undefined) =>
      t?.replace(new RegExp(`\\b(${at(PORT)}|${at(STICKY)})_`, 'g'), (_m, p: string) => (Number(p) === at(PORT) ? 'PORT_' : 'STICKY_'));
    out[side] = {
      total: r.total,
      sum_in: r.sum_in,
      sum_out: r.sum_out,
      entries: r.log.entries.map((e) => ({
        path: new URL(e.request.url).pathname,
        status: e.response.status,
        username: name(e.details.username),
        sessions: (e.details.timeline ?? []).map((t) => name(t.session)),
        in_bw: e.details.in_bw,
        out_bw: e.details.out_bw,
        bw: e.details.bw,
      })),
    };
  }
  return out;
}

describe('a new user’s first minutes, value by value', () => {
  it('per-request sessions and countries, a sticky session, filtered logs and stats with bytes: the same on both', async () => {
    await pair.createBoth(PORT);
    await pair.createBoth(STICKY, { sticky_ip: true });
    const plain = await through(PORT, '/nu/plain');
    const s1 = await through(PORT, '/nu/s1-a', { 'x-lpm-session': 'nu1', 'x-lpm-country': 'us' });
    const s1again = await through(PORT, '/nu/s1-b', { 'x-lpm-session': 'nu1' });
    const noPeers = await through(PORT, '/nu/zz', { 'x-lpm-country': 'zz' });
    const sticky = [await through(STICKY, '/nu/sticky-a'), await through(STICKY, '/nu/sticky-b')];
    for (const r of [plain, s1, s1again, noPeers, ...sticky]) {
      expect(r.sandbox.status).toBe(r.real.status);
      expect(r.sandbox.text).toBe(r.real.text);
    }
    expect(plain.real.status).toBe(200);
    expect(noPeers.real.status).toBe(502);
    // One session, one peer: the header's session keeps it, and it is the same session upstream on both sides.
    expect(s1again.real.peer).toBe(s1.real.peer);
    expect(s1.sandbox.peer).toBe(s1.real.peer);
    expect(s1again.sandbox.peer).toBe(s1.real.peer);
    expect(sticky[1]?.real.peer).toBe(sticky[0]?.real.peer);
    expect(sticky[1]?.sandbox.peer).toBe(sticky[0]?.sandbox.peer);
    await expect.poll(async () => ((await (await fetch(`${pair.manager.url}/api/logs?limit=0`)).json()) as Logs).total).toBe(6);
    await pair.sandbox.settled();
    const all = await logs((at) => `port_from=${at(PORT)}&port_to=${at(STICKY)}&sort=url`);
    expect((all.real as { entries: unknown[] }).entries).toHaveLength(6);
    expect(all.sandbox).toEqual(all.real);
    const failed = await logs((at) => `port_from=${at(PORT)}&port_to=${at(PORT)}&status_code=502`);
    expect((failed.real as { entries: unknown[] }).entries).toHaveLength(1);
    expect(failed.sandbox).toEqual(failed.real);
    const searched = await logs(() => 'search=s1-&sort=url&sort_desc=1');
    expect((searched.real as { entries: unknown[] }).entries).toHaveLength(2);
    expect(searched.sandbox).toEqual(searched.real);
    const stats = {} as Record<Side, unknown>;
    for (const side of SIDES) {
      const r = (await (await fetch(`${managerOf(side)}/api/recent_stats`)).json()) as {
        ports: Record<string, unknown>;
        total: number;
        success: number;
      };
      const line = (port: number) => ({ ...(r.ports[portOf(side, port)] as object), key: port });
      stats[side] = { port: line(PORT), sticky: line(STICKY), total: r.total, success: r.success };
    }
    expect(stats.real).toMatchObject({ total: 6, success: 5 });
    expect(stats.sandbox).toEqual(stats.real);
  });

  it('request_stats "false": recent_stats empty, and traffic then counts nothing, while the log still has it', async () => {
    const port = 24810;
    await pair.createBoth(port);
    const [realSet, sbxSet] = await pair.both(() => ['PUT', '/api/settings', { request_stats: 'false' }]);
    expect(realSet.status).toBe(200);
    expect(sbxSet.status).toBe(200);
    const r = await through(port, '/nu/no-stats');
    expect(r.sandbox.status).toBe(r.real.status);
    await expect.poll(async () => ((await (await fetch(`${pair.manager.url}/api/logs?search=no-stats`)).json()) as Logs).total).toBe(1);
    await pair.sandbox.settled();
    const empty = { ports: {}, status_code: [], hostname: [], protocol: [], total: 0, success: 0, ssl_enable: true };
    const [real, sbx] = await pair.both(() => ['GET', '/api/recent_stats']);
    expect(real.body).toEqual(empty);
    expect(sbx.body).toEqual(real.body);
    const [realLogs, sbxLogs] = await pair.both(() => ['GET', '/api/logs?search=no-stats']);
    expect((sbxLogs.body as Logs).total).toBe((realLogs.body as Logs).total);
    await pair.both(() => ['PUT', '/api/settings', { request_stats: true }]);
  });
});
