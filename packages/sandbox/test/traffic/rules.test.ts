import { freePort, type RulesTarget, standInProxy, startRulesTarget, tunnelThrough, viaProxy } from '@zone-api/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RES, type Rec, useTrafficSandbox } from '../helpers.js';

// A port's `rules` applied to its traffic (src/traffic/rules.ts), as the real manager applies them: a
// rule's trigger (status, body, URL, request time) tested on each request, its action (ban the exit
// peer, send again with a new session, answer in the upstream's place) changing what the next request
// gets. The same cases run against the real manager in the real-manager suite (rules.test.ts there).

const t = useTrafficSandbox();

let target: RulesTarget;
let targetUrl: string;
let asked: Map<string, number>;

beforeAll(async () => {
  target = await startRulesTarget();
  ({ url: targetUrl, asked } = target);
});
afterAll(() => target?.close());

async function portWith(rules: unknown[], port?: number, more: Record<string, unknown> = {}): Promise<string> {
  const at = port ?? (await freePort());
  const created = await t.manager.createProxy({ body: { proxy: { port: at, zone: RES, rules, ...more } } });
  expect(created.response.status).toBe(200);
  return `http://127.0.0.1:${at}`;
}

const portOf = (proxy: string) => Number(new URL(proxy).port);
/** The ports and sessions of a log entry's timeline. */
const passes = (entry: Rec) => entry.details.timeline.map((p: Rec) => [p.port, p.session]);
/** A rule sending a request that got a 5xx on through `port` (retry_port). */
const onTo = (port: unknown, action: Record<string, unknown> = {}) => ({
  action: { retry_port: port, ...action },
  action_type: 'retry_port',
  trigger_type: 'status',
  status: '5..',
});

/** The log entry of the one request to `path` through `proxy`. */
async function entryOf(proxy: string, path: string): Promise<Rec> {
  const port = Number(new URL(proxy).port);
  let entry: Rec | undefined;
  await expect
    .poll(async () => {
      const logs = (await t.manager.getLogs({ params: { query: { search: path, port_from: port, port_to: port, limit: 10 } } }))
        .data as Rec;
      entry = logs.log.entries.find((e: Rec) => new URL(e.request.url).pathname === path);
      return entry !== undefined;
    })
    .toBe(true);
  return entry as Rec;
}

const banRule = { action: { ban_ip: 60_000 }, action_type: 'ban_ip', trigger_type: 'status', status: '5..' };

describe('rules applied to a port’s traffic', () => {
  it('ban_ip on a status: the peer that answered it is banned on the port, the next request gets another peer', async () => {
    const proxy = await portWith([banRule]);
    const port = Number(new URL(proxy).port);
    const ok = await viaProxy(proxy, `${targetUrl}/ban-a`);
    expect(ok.status).toBe(200);
    const first = ok.headers['x-brd-ip'];
    // The same session (and peer) while nothing matched.
    expect((await viaProxy(proxy, `${targetUrl}/ban-b`)).headers['x-brd-ip']).toBe(first);
    expect((await t.manager.getBanList({ params: { path: { port } } })).data).toEqual({ ips: [] });
    // A 503 matches `5..`: the answer is handed on, its peer banned for a minute, and the session replaced.
    const failed = await viaProxy(proxy, `${targetUrl}/ban-c?st=503`);
    expect(failed.status).toBe(503);
    expect(failed.headers['x-brd-ip']).toBe(first);
    const full = (await t.manager.getBanList({ params: { path: { port }, query: { full: '1' } } })).data as Rec;
    expect(full.ips).toHaveLength(1);
    expect(full.ips[0]).toMatchObject({ ip: first, domain: '' });
    expect(full.ips[0].to - Date.now()).toBeGreaterThan(50_000);
    const next = await viaProxy(proxy, `${targetUrl}/ban-d`);
    expect(next.status).toBe(200);
    expect(next.headers['x-brd-ip']).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
    expect(next.headers['x-brd-ip']).not.toBe(first);
    // The log lists the rule that ran with the request that triggered it, and no rule for the others.
    expect((await entryOf(proxy, '/ban-c')).details.rules).toEqual([{ ...banRule, type: 'after_hdr' }]);
    expect((await entryOf(proxy, '/ban-d')).details.rules).toEqual([]);
  });

  it('an inactive rule, or a status that does not match, does nothing', async () => {
    const proxy = await portWith([
      { ...banRule, active: false },
      { ...banRule, status: '404' },
    ]);
    const port = Number(new URL(proxy).port);
    expect((await viaProxy(proxy, `${targetUrl}/none-a?st=500`)).status).toBe(500);
    expect((await t.manager.getBanList({ params: { path: { port } } })).data).toEqual({ ips: [] });
    expect((await entryOf(proxy, '/none-a')).details.rules).toEqual([]);
  });

  it('ban_ip_domain bans the peer for the request’s domain only', async () => {
    const proxy = await portWith([{ ...banRule, action: { ban_ip_domain: 0 }, action_type: 'ban_ip_domain' }]);
    const port = Number(new URL(proxy).port);
    const res = await viaProxy(proxy, `${targetUrl}/dom-a?st=500`);
    const full = (await t.manager.getBanList({ params: { path: { port }, query: { full: '1' } } })).data as Rec;
    expect(full.ips).toEqual([{ ip: res.headers['x-brd-ip'], domain: '127.0.0.1' }]);
  });

  it('retry on a status sends the request again with a new session, as often as the rule says, then hands on the last answer', async () => {
    const rule = { action: { retry: true, retries: 2 }, action_type: 'retry', trigger_type: 'status', status: '502' };
    const proxy = await portWith([rule]);
    const res = await viaProxy(proxy, `${targetUrl}/retry-a?st=502`);
    expect(res.status).toBe(502);
    expect(asked.get('/retry-a')).toBe(3);
    const entry = await entryOf(proxy, '/retry-a');
    expect(entry.details.rules).toEqual([{ ...rule, type: 'after_hdr' }]);
    // Each retry took a new session; the timeline has a step for each time it was sent.
    const port = portOf(proxy);
    expect(passes(entry)).toEqual([0, 1, 2].map((n) => [port, `${port}_${n}`]));
  });

  it('a rule on the body: the answer is read whole, tested, and handed on whole', async () => {
    const rule = { action: { ban_ip: 0 }, action_type: 'ban_ip', trigger_type: 'body', body: 'captcha' };
    const proxy = await portWith([rule]);
    const port = Number(new URL(proxy).port);
    const plain = await viaProxy(proxy, `${targetUrl}/body-a`);
    expect(plain.text).toBe('hello /body-a');
    expect((await t.manager.getBanList({ params: { path: { port } } })).data).toEqual({ ips: [] });
    const hit = await viaProxy(proxy, `${targetUrl}/body-b?captcha`);
    expect(hit.text).toBe('please solve the captcha');
    expect((await t.manager.getBanList({ params: { path: { port } } })).data).toEqual({ ips: [hit.headers['x-brd-ip']] });
    expect((await entryOf(proxy, '/body-b')).details.rules).toEqual([{ ...rule, type: 'after_body' }]);
  });

  it('null_response on a URL answers 200 "NULL" without asking the target', async () => {
    const rule = { action: { null_response: true }, action_type: 'null_response', trigger_type: 'url', url: 'blocked' };
    const proxy = await portWith([rule]);
    const res = await viaProxy(proxy, `${targetUrl}/blocked-a`);
    expect(res.status).toBe(200);
    expect(res.text).toBe('');
    expect(asked.get('/blocked-a')).toBeUndefined();
    expect((await viaProxy(proxy, `${targetUrl}/open-a`)).text).toBe('hello /open-a');
    const entry = await entryOf(proxy, '/blocked-a');
    expect(entry.response.status).toBe(200);
    expect(entry.details.rules).toEqual([{ ...rule, type: 'before_send' }]);
  });

  it('an invalid regular expression never matches', async () => {
    const proxy = await portWith([{ ...banRule, status: '(' }]);
    const port = Number(new URL(proxy).port);
    expect((await viaProxy(proxy, `${targetUrl}/bad-re?st=500`)).status).toBe(500);
    expect((await t.manager.getBanList({ params: { path: { port } } })).data).toEqual({ ips: [] });
  });

  it('retry_port: the request is sent again through the other port, whose answer and log entry it is; the first port keeps its session', async () => {
    const other = await portWith([], undefined, { headers: [{ name: 'x-second', value: 'two' }] });
    const rule = onTo(portOf(other));
    const proxy = await portWith([rule], undefined, { headers: [{ name: 'x-first', value: 'one' }] });
    const before = await viaProxy(proxy, `${targetUrl}/wf-0`);
    const moved = await viaProxy(proxy, `${targetUrl}/wf-a?st=503&hdr=x-second`);
    expect(moved.status).toBe(503);
    // Sent on with the other port's headers too, through the other port's session.
    expect(moved.text).toBe('hello /wf-a?st=503&hdr=x-second x-second=two');
    expect(moved.headers['x-brd-ip']).toBe((await viaProxy(other, `${targetUrl}/wf-b`)).headers['x-brd-ip']);
    expect(moved.headers['x-brd-ip']).not.toBe(before.headers['x-brd-ip']);
    expect(asked.get('/wf-a')).toBe(2);
    // Sent to another port, the first keeps its session (no refresh) and has no entry of it.
    expect((await viaProxy(proxy, `${targetUrl}/wf-c`)).headers['x-brd-ip']).toBe(before.headers['x-brd-ip']);
    const entry = await entryOf(other, '/wf-a');
    expect(entry.details.port).toBe(portOf(other));
    expect(entry.details.rules).toEqual([{ ...rule, type: 'after_hdr' }]);
    expect(passes(entry)).toEqual([
      [portOf(proxy), `${portOf(proxy)}_0`],
      [portOf(other), `${portOf(other)}_0`],
    ]);
    // The log shows the request's headers as the first port sent them.
    expect(entry.request.headers).toContainEqual({ name: 'x-first', value: 'one' });
    expect(entry.request.headers).not.toContainEqual({ name: 'x-second', value: 'two' });
    const none = await t.manager.getLogs({ params: { query: { search: '/wf-a', port_from: portOf(proxy), port_to: portOf(proxy) } } });
    expect((none.data as Rec).log.entries).toEqual([]);
  });

  it('retry_port to its own port sends it again with a new session; a loop ends when each rule ran once', async () => {
    const own = await freePort();
    const self = await portWith([onTo(own)], own);
    expect((await viaProxy(self, `${targetUrl}/self-a?st=503`)).status).toBe(503);
    expect(asked.get('/self-a')).toBe(2);
    expect(passes(await entryOf(self, '/self-a'))).toEqual([
      [own, `${own}_0`],
      [own, `${own}_1`],
    ]);
    const [a, b] = [await freePort(), await freePort()];
    await portWith([onTo(b)], a);
    await portWith([onTo(String(a))], b);
    expect((await viaProxy(`http://127.0.0.1:${a}`, `${targetUrl}/loop-a?st=503`)).status).toBe(503);
    expect(asked.get('/loop-a')).toBe(3);
    const entry = await entryOf(`http://127.0.0.1:${a}`, '/loop-a');
    expect(entry.details.rules).toEqual([
      { ...onTo(b), type: 'after_hdr' },
      { ...onTo(String(a)), type: 'after_hdr' },
    ]);
    expect(passes(entry).map(([p]: [number]) => p)).toEqual([a, b, a]);
  });

  it('retry_port with retry: the rule runs again on each pass, up to 20 retries', async () => {
    const own = await freePort();
    const proxy = await portWith([onTo(own, { retry: true })], own);
    expect((await viaProxy(proxy, `${targetUrl}/many-a?st=503`)).status).toBe(503);
    expect(asked.get('/many-a')).toBe(21);
    expect((await entryOf(proxy, '/many-a')).details.timeline).toHaveLength(21);
  });

  it('retry_port to a port that does not exist: the request is left unanswered and logged nowhere', async () => {
    const proxy = await portWith([onTo(await freePort())]);
    const res = await viaProxy(proxy, `${targetUrl}/gone-a?st=503`, { idleMs: 1500 });
    expect(res).toEqual({ status: 0, headers: {}, text: 'no answer in 1500 ms' });
    expect(asked.get('/gone-a')).toBe(1);
    await t.sandbox.settled();
    const logs = await t.manager.getLogs({ params: { query: { search: '/gone-a' } } });
    expect((logs.data as Rec).log.entries).toEqual([]);
  });

  it('the route header sends a request through the port it names before any rule, and is not passed on', async () => {
    const other = await portWith([]);
    const proxy = await portWith([onTo(portOf(other))]);
    const route = { 'x-lpm-route': String(portOf(other)) };
    const routed = await viaProxy(proxy, `${targetUrl}/route-a?hdr=x-lpm-route`, { headers: route });
    expect(routed.text).toBe('hello /route-a?hdr=x-lpm-route x-lpm-route=');
    expect(routed.headers['x-brd-ip']).toBe((await viaProxy(other, `${targetUrl}/route-b`)).headers['x-brd-ip']);
    const entry = await entryOf(other, '/route-a');
    expect(entry.details.rules).toEqual([]);
    expect(entry.request.headers.map((h: Rec) => h.name)).not.toContain('x-lpm-route');
    expect(passes(entry).map(([p]: [number]) => p)).toEqual([portOf(proxy), portOf(other)]);
    // The first port's rules do not run on the answer of the port it was routed to.
    expect((await viaProxy(proxy, `${targetUrl}/route-c?st=503`, { headers: route })).status).toBe(503);
    expect(asked.get('/route-c')).toBe(1);
    // Its own port: the port's sessions refreshed; no such port: no answer.
    const own = await viaProxy(other, `${targetUrl}/route-d`, { headers: { 'x-lpm-route': String(portOf(other)) } });
    expect(own.headers['x-brd-ip']).not.toBe(routed.headers['x-brd-ip']);
    expect(passes(await entryOf(other, '/route-d'))).toEqual([
      [portOf(other), `${portOf(other)}_0`],
      [portOf(other), `${portOf(other)}_1`],
    ]);
    const lost = await viaProxy(other, `${targetUrl}/route-e`, { headers: { 'x-lpm-route': 'nowhere' }, idleMs: 1500 });
    expect(lost.status).toBe(0);
    expect(asked.get('/route-e')).toBeUndefined();
  });

  it('the route header on a CONNECT: the tunnel goes through the port it names and is logged there', async () => {
    const other = await portWith([]);
    const proxy = await portWith([]);
    const authority = new URL(targetUrl).host;
    const line = `GET /tun-a HTTP/1.1\r\nhost: ${authority}\r\nconnection: close\r\n\r\n`;
    const opened = await tunnelThrough(proxy, authority, { line, headers: { 'x-lpm-route': String(portOf(other)) } });
    expect(opened.status).toBe(200);
    expect(opened.headers['x-brd-ip']).toBe((await viaProxy(other, `${targetUrl}/tun-b`)).headers['x-brd-ip']);
    expect(opened.echoed).toContain('hello /tun-a');
    await t.sandbox.settled();
    const logs = (await t.manager.getLogs({ params: { query: { port_from: portOf(other), port_to: portOf(other) } } })).data as Rec;
    const tunnel = logs.log.entries.find((e: Rec) => e.request.method === 'CONNECT');
    expect(tunnel.details.port).toBe(portOf(other));
    expect(passes(tunnel)).toEqual([
      [portOf(proxy), `${portOf(proxy)}_0`],
      [portOf(other), `${portOf(other)}_0`],
    ]);
    const lost = tunnelThrough(proxy, authority, { line, timeoutMs: 1500, headers: { 'x-lpm-route': 'nowhere' } });
    await expect(lost).rejects.toThrow('no answer to the CONNECT');
  });
  it("a tunnelled CONNECT's own 502 runs the port's status rules: a retry sends it once more, a null_response answers 501 NULL, another rule is listed in the 502's entry", async () => {
    // A stand-in external proxy that hangs up on every CONNECT to the target, counting them.
    const authority = new URL(targetUrl).host;
    const hang = await standInProxy(authority);
    const ext_proxies = [hang.address];
    const on502 = { trigger_type: 'status', status: '502' };
    const ban = { action: { ban_ip: 0 }, action_type: 'ban_ip', trigger_type: 'status', status: '5..' };
    const logOf = async (proxy: string) => {
      await t.sandbox.settled();
      const q = { port_from: portOf(proxy), port_to: portOf(proxy) };
      return ((await t.manager.getLogs({ params: { query: q } })).data as Rec).log.entries.map((e: Rec) => [
        e.request.method,
        e.response.status,
        e.details.rules,
      ]);
    };
    try {
      // retry: sent twice whatever `retries` says, the same 502 answered, nothing logged.
      const retrying = await portWith([{ ...on502, action: { retry: true, retries: 2 }, action_type: 'retry' }], undefined, {
        ext_proxies,
      });
      const again = await tunnelThrough(retrying, authority);
      expect([again.status, again.statusMessage, again.headers['x-lpm-error'], hang.sent]).toEqual([
        502,
        'Proxy Manager - Bad Gateway',
        'socket hang up',
        2,
      ]);
      expect(await logOf(retrying)).toEqual([]);
      // null_response: 501 NULL (a plain request's is 200), sent once, nothing logged.
      hang.sent = 0;
      const nulled = await portWith([{ ...on502, action: { null_response: true }, action_type: 'null_response' }], undefined, {
        ext_proxies,
      });
      const nothing = await tunnelThrough(nulled, authority);
      expect([nothing.status, nothing.statusMessage, nothing.headers['x-lpm-error'], hang.sent]).toEqual([501, 'NULL', undefined, 1]);
      expect(await logOf(nulled)).toEqual([]);
      // Another rule: the 502 answered and logged with it.
      hang.sent = 0;
      const banning = await portWith([ban], undefined, { ext_proxies });
      expect((await tunnelThrough(banning, authority)).status).toBe(502);
      expect(hang.sent).toBe(1);
      expect(await logOf(banning)).toEqual([['CONNECT', 502, [{ ...ban, type: 'after_hdr' }]]]);
      // A retry whose second CONNECT is answered: the tunnel opened, logged with the rule, both passes in its timeline.
      const opening = await standInProxy(authority, 2);
      const retry = { ...on502, action: { retry: true }, action_type: 'retry' };
      const reopened = await portWith([retry], undefined, { ext_proxies: [opening.address] });
      try {
        const opened = await tunnelThrough(reopened, authority);
        expect([opened.status, opened.echoed, opening.sent]).toEqual([200, 'ping through the tunnel\n', 2]);
      } finally {
        opening.close();
      }
      expect(await logOf(reopened)).toEqual([['CONNECT', 200, [{ ...retry, type: 'after_hdr' }]]]);
      const at = portOf(reopened);
      const entry = ((await t.manager.getLogs({ params: { query: { port_from: at, port_to: at } } })).data as Rec).log.entries[0];
      expect(passes(entry)).toEqual([
        [at, `${at}_0`],
        [at, `${at}_1`],
      ]);
      // No rule: logged with none.
      const bare = await portWith([], undefined, { ext_proxies });
      expect((await tunnelThrough(bare, authority)).status).toBe(502);
      expect(await logOf(bare)).toEqual([['CONNECT', 502, []]]);
    } finally {
      hang.close();
    }
  });
});
