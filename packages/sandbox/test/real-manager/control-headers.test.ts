import { viaProxy } from '@zone-api/testkit';
import { describe, expect, it } from 'vitest';
import { SHIFT, THROUGH_IDLE_MS, usePair } from './pair.js';

// A proxy port's per-request control headers (`x-lpm-session`, `x-lpm-country`, `x-lpm-fake`, … : the real
// manager 1.570.247's lib/context.js 13-15 and 134-231, lib/session.js 150-187, lib/mixins/server_send.js
// 213-262), played against the real manager and the sandbox side by side (pair.ts; a sandbox port is the
// real one's number + SHIFT): the answers, what the target received, the upstream username and session each
// log entry names, the ban lists after a fake answer fired a rule.

const pair = usePair();
type Side = 'real' | 'sandbox';
const SIDES: Side[] = ['real', 'sandbox'];
const portOf = (side: Side, port: number) => (side === 'real' ? port : port + SHIFT);
const managerOf = (side: Side) => (side === 'real' ? pair.manager.url : pair.sandbox.managerUrl);

interface Entry {
  request: { url: string; headers: Array<{ name: string; value: string }> };
  response: { status: number };
  details: { username?: string; timeline?: Array<{ session?: string }>; proxy_peer?: string | null };
}

/** Each side's log entries of a port, oldest first, once the real one holds `count`. */
async function portLog(port: number, count: number): Promise<Record<Side, Entry[]>> {
  const read = async (side: Side) => {
    const p = portOf(side, port);
    const r = await fetch(`${managerOf(side)}/api/logs?port_from=${p}&port_to=${p}&limit=0`);
    const logs = (await r.json()) as { log: { entries: Entry[] } };
    return logs.log.entries.filter((e) => !e.request.url.includes('mygeo')).sort((a, b) => a.request.url.localeCompare(b.request.url));
  };
  await expect.poll(async () => (await read('real')).length, { message: `the real manager logs ${count} on ${port}` }).toBe(count);
  await pair.sandbox.settled();
  return { real: await read('real'), sandbox: await read('sandbox') };
}

/** A request through each side's port (each to its own path `/<side><path>`) with `headers`: status, body and the headers named. */
async function through(port: number, path: string, headers: Record<string, string>, show: string[] = []) {
  const out = {} as Record<Side, Record<string, unknown>>;
  for (const side of SIDES) {
    const res = await viaProxy(`http://127.0.0.1:${portOf(side, port)}`, `${pair.targetUrl}/${side}${path}`, {
      headers,
      idleMs: THROUGH_IDLE_MS,
    });
    out[side] = {
      status: res.status,
      text: res.text.replaceAll(`/${side}`, ''),
      ...Object.fromEntries(show.map((h) => [h, res.headers[h]])),
    };
  }
  return out;
}

/** What a side's log entry says of the request: its path, status, upstream username, sessions, the control headers it kept. */
const seen = (side: Side, port: number) => (e: Entry) => ({
  path: new URL(e.request.url).pathname.replace(`/${side}`, ''),
  status: e.response.status,
  username: e.details.username?.replaceAll(`${portOf(side, port)}_`, 'PORT_'),
  sessions: (e.details.timeline ?? []).map((t) => t.session?.replaceAll(`${portOf(side, port)}_`, 'PORT_')),
  control: e.request.headers
    .map((h) => h.name.toLowerCase())
    .filter((n) => n.startsWith('x-lpm') || n.startsWith('x-hola'))
    .sort(),
});

describe('per-request control headers on a proxy port', () => {
  it('x-lpm-session and x-lpm-country: that session and country upstream for the one request, the port’s next request a new session; the read headers reach neither the target nor the log', async () => {
    const port = 24700;
    await pair.createBoth(port);
    const control = {
      'x-lpm-session': 'mine1',
      'x-lpm-country': 'US',
      'x-lpm-reserved': '1',
      'x-lpm-keep-alive': '1',
      'x-lpm-user': 'someone',
      'x-hola-agent': 'agent',
      // Not read by the real manager: passed on as any header.
      'x-lpm-zip': '10001',
      'x-lpm-fake-status': '500',
    };
    const a = await through(port, '/cs-a?names=x-lpm', {});
    const b = await through(port, '/cs-b?names=x-lpm', control);
    const c = await through(port, '/cs-c?names=x-lpm', {});
    expect(a.real).toMatchObject({ status: 200, text: 'hello /cs-a?names=x-lpm names=' });
    expect(b.real).toMatchObject({ status: 200, text: 'hello /cs-b?names=x-lpm names=x-lpm-fake-status,x-lpm-zip' });
    for (const r of [a, b, c]) expect(r.sandbox).toEqual(r.real);
    const log = await portLog(port, 3);
    const real = log.real.map(seen('real', port));
    expect(real).toEqual([
      {
        path: '/cs-a',
        status: 200,
        username: 'brd-customer-hl_1a2b3c4d-zone-res_zone-session-PORT_0-debug-none',
        sessions: ['PORT_0'],
        control: [],
      },
      {
        path: '/cs-b',
        status: 200,
        username: 'brd-customer-hl_1a2b3c4d-zone-res_zone-country-us-session-mine1-debug-none',
        sessions: ['mine1'],
        control: ['x-lpm-fake-status', 'x-lpm-zip'],
      },
      {
        path: '/cs-c',
        status: 200,
        username: 'brd-customer-hl_1a2b3c4d-zone-res_zone-session-PORT_1-debug-none',
        sessions: ['PORT_1'],
        control: [],
      },
    ]);
    expect(log.sandbox.map(seen('sandbox', port))).toEqual(real);
  });

  it('x-lpm-country naming a country the Zone has no peers in: the network’s 502 no_peers, passed on by the port', async () => {
    const port = 24701;
    await pair.createBoth(port);
    const r = await through(port, '/cs-zz', { 'x-lpm-country': 'zz' }, ['x-brd-error', 'x-brd-err-code']);
    expect(r.real).toMatchObject({ status: 502, 'x-brd-err-code': 'no_peers' });
    expect(r.sandbox).toEqual(r.real);
    const log = await portLog(port, 1);
    expect(log.sandbox.map(seen('sandbox', port))).toEqual(log.real.map(seen('real', port)));
  });

  it('x-lpm-ip: that exit IP upstream, without a session', async () => {
    const port = 24702;
    await pair.createBoth(port);
    // A peer of the Zone, as the network named it to a first request.
    const first = await through(port, '/cs-ip-a', {}, ['x-brd-ip']);
    const ip = first.real['x-brd-ip'] as string;
    expect(ip).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
    const r = await through(port, '/cs-ip-b', { 'x-lpm-ip': ip }, ['x-brd-ip', 'x-brd-error']);
    expect(r.real, JSON.stringify(r)).toMatchObject({ status: 200, 'x-brd-ip': ip });
    expect(r.sandbox).toEqual(r.real);
    const log = await portLog(port, 2);
    const real = log.real.map(seen('real', port));
    expect(real[1]?.username).toBe(`brd-customer-hl_1a2b3c4d-zone-res_zone-ip-${ip}-debug-none`);
    expect(log.sandbox.map(seen('sandbox', port))).toEqual(real);
  });

  it('x-lpm-fake: a fake answer in place of the upstream’s, the target not asked, the port’s rules fired on it', async () => {
    const port = 24703;
    const ban = { action: { ban_ip: 0 }, action_type: 'ban_ip', trigger_type: 'status', status: '5..' };
    await pair.createBoth(port, { rules: [ban] });
    const fake = { 'x-lpm-fake': '1', 'x-lpm-fake-status': '503', 'x-lpm-fake-peer-ip': '10.11.12.13', 'x-lpm-sleep': '1' };
    const r = await through(port, '/cs-fake', fake, ['x-brd-ip', 'content-type', 'content-length']);
    expect(r.real).toMatchObject({ status: 503, text: '10.11.12.13', 'x-brd-ip': '10.11.12.13' });
    expect(r.sandbox).toEqual(r.real);
    const data = await through(
      port,
      '/cs-fake-data',
      {
        ...fake,
        'x-lpm-fake-status': '200',
        'x-lpm-fake-peer-ip': '10.11.12.14',
        'x-lpm-fake-data': '5',
        'x-lpm-fake-headers': '{"x-a":"b"}',
      },
      ['x-a', 'content-length'],
    );
    expect(data.real).toMatchObject({ status: 200, text: 'SSSSS', 'x-a': 'b', 'content-length': '5' });
    expect(data.sandbox).toEqual(data.real);
    for (const side of SIDES) {
      expect(pair.asked.get(`/${side}/cs-fake`), side).toBeUndefined();
      expect(pair.asked.get(`/${side}/cs-fake-data`), side).toBeUndefined();
    }
    const [realBans, sbxBans] = await pair.both((at) => ['GET', `/api/banlist/${at(port)}?full=1`]);
    expect(realBans.body).toMatchObject({ ips: [{ ip: '10.11.12.13' }] });
    expect(sbxBans.body).toEqual(realBans.body);
    const log = await portLog(port, 2);
    expect(log.sandbox.map((e) => [e.response.status, e.details.proxy_peer])).toEqual(
      log.real.map((e) => [e.response.status, e.details.proxy_peer]),
    );
  });

  it('x-lpm-state without the Zone’s state permission is dropped, x-lpm-city written as a username writes it; a retry keeps the header’s session', async () => {
    const port = 24704;
    const retry = { action: { retry: true }, action_type: 'retry', trigger_type: 'status', status: '503' };
    await pair.createBoth(port, { rules: [retry] });
    const r = await through(port, '/cs-geo?st=503', {
      'x-lpm-session': 'geo1',
      'x-lpm-state': 'NY',
      'x-lpm-city': 'New York',
      'x-lpm-asn': '7922',
    });
    expect(r.real).toMatchObject({ status: 503 });
    expect(r.sandbox).toEqual(r.real);
    const log = await portLog(port, 1);
    const real = log.real.map(seen('real', port));
    expect(real).toEqual([
      {
        path: '/cs-geo',
        status: 503,
        username: 'brd-customer-hl_1a2b3c4d-zone-res_zone-city-newyork-session-geo1-asn-7922-debug-none',
        sessions: ['geo1', 'geo1'],
        control: [],
      },
    ]);
    expect(log.sandbox.map(seen('sandbox', port))).toEqual(real);
  });

  it('x-lpm-fake-headers that is no JSON: the port’s own 502 with the parser’s message, logged', async () => {
    const port = 24705;
    await pair.createBoth(port);
    const r = await through(port, '/cs-bad-fake', { 'x-lpm-fake': '1', 'x-lpm-fake-headers': '{nope', 'x-lpm-sleep': '1' }, [
      'x-lpm-error',
    ]);
    expect(r.real).toMatchObject({ status: 502, text: '', 'x-lpm-error': expect.stringContaining('JSON') });
    expect(r.sandbox).toEqual(r.real);
    const log = await portLog(port, 1);
    expect(log.sandbox.map(seen('sandbox', port))).toEqual(log.real.map(seen('real', port)));
  });

  it('sticky_ip: the session is named after the port, the client’s address (dots as _) and the counter', async () => {
    const port = 24706;
    await pair.createBoth(port, { sticky_ip: true });
    await through(port, '/cs-sticky', {});
    const log = await portLog(port, 1);
    const real = log.real.map(seen('real', port));
    expect(real[0]?.sessions).toEqual(['PORT_127_0_0_1_0']);
    expect(log.sandbox.map(seen('sandbox', port))).toEqual(real);
  });
});
