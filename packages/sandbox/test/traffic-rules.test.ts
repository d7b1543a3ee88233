import { freePort, type RulesTarget, startRulesTarget, viaProxy } from '@zone-api/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RES, type Rec, useTrafficSandbox } from './helpers.js';

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

async function portWith(rules: unknown[]): Promise<string> {
  const port = await freePort();
  const created = await t.manager.createProxy({ body: { proxy: { port, zone: RES, rules } } });
  expect(created.response.status).toBe(200);
  return `http://127.0.0.1:${port}`;
}

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
    // Each retry took a new session.
    expect(entry.details.timeline[0].session).not.toBe(`${new URL(proxy).port}_0`);
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
});
