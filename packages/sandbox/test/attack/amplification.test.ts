import { createServer, type Server } from 'node:http';
import { freePort, viaProxy } from '@zone-api/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HAR_LIMITS } from '../../src/domain/har.js';
import { MULTIPLY_BYTES_LIMIT, PORTS_LIMIT } from '../../src/manager/multiply.js';
import { BODY_DEPTH_LIMIT } from '../../src/router/depth.js';
import { listenOnLoopback, RES, useTrafficSandbox } from '../helpers.js';

// Resource amplification: one small request that asks the sandbox to hold or walk far more than it
// sent. `multiply` with a large config (700 copies of 1.3 MB: out of memory), `rules` nested 3,000
// deep (a 500, the stack run out), `logs: 2147483647` (the HAR log without bound). Each is bounded,
// with an answer naming the field where there is one to give.
const t = useTrafficSandbox();
const api = () => t.sandbox.managerUrl as string;
const post = (path: string, body: unknown, method = 'POST') =>
  fetch(`${api()}${path}`, { method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

describe('a body nested deeper than the bound', () => {
  it('rules nested 3,000 deep: 400 naming where, no port created, the list still answers', async () => {
    const port = await freePort();
    const rules: Record<string, unknown> = {};
    let at = rules;
    for (let i = 0; i < 3000; i++) {
      const next: Record<string, unknown> = {};
      at.a = next;
      at = next;
    }
    const before = (await t.manager.listProxies()).data?.length ?? -1;
    expect(before).toBeGreaterThanOrEqual(0);
    const r = await post('/api/proxies', { proxy: { port, zone: RES, rules: [rules] } });
    const text = await r.text();
    expect(r.status, text).toBe(400);
    expect(text).toContain('body.proxy.rules[0].a');
    expect(text).toContain(`nests deeper than ${BODY_DEPTH_LIMIT} levels`);
    const after = await t.manager.listProxies();
    expect(after.response.status).toBe(200);
    expect(after.data?.length).toBe(before);
    expect(after.data?.some((p) => p.port === port)).toBe(false);
  });

  it('a body nested just within the bound is read', async () => {
    const port = await freePort();
    let deep: unknown = 'x';
    // proxy (1) and rules (2) and the rule (3): the rest of the levels nest inside it.
    for (let i = 0; i < BODY_DEPTH_LIMIT - 3; i++) deep = { a: deep };
    const r = await post('/api/proxies', { proxy: { port, zone: RES, rules: [{ action: { x: deep } }] } });
    expect(r.status, await r.text()).not.toBe(500);
  });
});

describe('multiply', () => {
  it('700 copies of a 1.3 MB config: 400 naming multiply, nothing created', async () => {
    const port = await freePort();
    const before = (await t.manager.listProxies()).data?.length ?? -1;
    const rules = Array.from({ length: 500 }, (_, i) => ({ url: `example${i}.com`, note: 'x'.repeat(2600) }));
    const r = await post('/api/proxies', { proxy: { port, zone: RES, multiply: 700, rules } });
    const body = (await r.json()) as { errors: { msg: string; field?: string }[] };
    expect(r.status).toBe(400);
    expect(body.errors[0]?.field).toBe('multiply');
    expect(body.errors[0]?.msg).toContain(`more than ${MULTIPLY_BYTES_LIMIT}`);
    expect((await t.manager.listProxies()).data?.length).toBe(before);
  });

  it('more ports than the real manager’s ports_limit: its 400', async () => {
    const port = await freePort();
    const r = await post('/api/proxies', { proxy: { port: Math.min(port, 50_000), zone: RES, multiply: PORTS_LIMIT + 1 } });
    const body = (await r.json()) as { errors: { msg: string }[] };
    expect(r.status).toBe(400);
    expect(body.errors[0]?.msg).toBe(`number of many proxy ports exceeding the limit: ${PORTS_LIMIT}`);
  });
});

describe('logs: 2147483647', () => {
  let target: Server;
  let url: string;
  const ANSWER = 3 * 1024 * 1024;
  beforeAll(async () => {
    const body = Buffer.alloc(ANSWER, 121);
    target = createServer((_req, res) => res.end(body));
    url = `http://127.0.0.1:${await listenOnLoopback(target)}/big`;
  });
  afterAll(() => new Promise<void>((resolve) => target.close(() => resolve())));

  it('is accepted as the real manager accepts it, and the log holds at most its bytes bound', async () => {
    const settings = await post('/api/settings', { logs: 2147483647, har_limit: 8 * 1024 * 1024 }, 'PUT');
    expect(settings.status, await settings.text()).toBe(200);
    const port = await freePort();
    expect((await t.manager.createProxy({ body: { proxy: { port, zone: RES } } })).response.status).toBe(200);
    const requests = Math.ceil(HAR_LIMITS.bytes / ANSWER) + 6;
    for (let i = 0; i < requests; i++) {
      const r = await viaProxy(`http://127.0.0.1:${port}`, `${url}?n=${i}`);
      expect(r.status).toBe(200);
    }
    const har = t.sandbox.state().manager.har.filter((e) => e.request.url.startsWith(url));
    const kept = har.reduce((n, e) => n + (e.response.content.text?.length ?? 0), 0);
    expect(har.length).toBeGreaterThan(0);
    expect(har.length).toBeLessThan(requests);
    expect(kept).toBeLessThanOrEqual(HAR_LIMITS.bytes);
    // The newest stays; the oldest went.
    expect(har.at(-1)?.request.url).toBe(`${url}?n=${requests - 1}`);
    expect(har.some((e) => e.request.url === `${url}?n=0`)).toBe(false);
  });
});

describe('a form body is read within bounds (the manager reads forms as the real one, with qs)', () => {
  // body-parser 1.20.3 as the real manager sets it up: at most 10,000 parameters and 32 levels, past
  // either its 500 `Server Error` (compared with the real one in body-fields.test.ts).
  const post = (body: string) =>
    fetch(`${t.sandbox.managerUrl}/api/proxies`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body,
    });
  it('10,000 parameters are read, every one; one more is refused whole (500), nothing stored', async () => {
    const port = await freePort();
    const fields = (n: number) => Array.from({ length: n }, (_, i) => `proxy[f${i}]=1`);
    const over = await post([`proxy[port]=${port}`, `proxy[zone]=${RES}`, ...fields(9_999)].join('&'));
    expect([over.status, await over.text()]).toEqual([500, 'Server Error']);
    expect(t.sandbox.state().manager.ports.some((p) => p.port === port)).toBe(false);
    const r = await post([`proxy[port]=${port}`, `proxy[zone]=${RES}`, ...fields(9_998)].join('&'));
    expect(r.status, await r.text()).toBe(200);
    const stored = t.sandbox.state().manager.ports.find((p) => p.port === port) as unknown as Record<string, unknown>;
    expect(Object.keys(stored).filter((k) => /^f\d+$/.test(k))).toHaveLength(9_998);
    await fetch(`${t.sandbox.managerUrl}/api/proxies/${port}`, { method: 'DELETE' });
  });

  it('a name nested past 32 levels is refused (500), one within them read', async () => {
    const port = await freePort();
    const deep = await post(`proxy[port]=${port}&proxy[zone]=${RES}&proxy[d]${'[a]'.repeat(40)}=x`);
    expect([deep.status, await deep.text()]).toEqual([500, 'Server Error']);
    const r = await post(`proxy[port]=${port}&proxy[zone]=${RES}&proxy[d]${'[a]'.repeat(31)}=x`);
    expect(r.status, await r.text()).toBe(200);
    const stored = t.sandbox.state().manager.ports.find((p) => p.port === port) as unknown as Record<string, unknown>;
    let depth = 0;
    for (let at = stored.d as Record<string, unknown> | undefined; at && typeof at === 'object'; at = Object.values(at)[0] as never)
      depth++;
    expect(depth).toBe(31);
    await fetch(`${t.sandbox.managerUrl}/api/proxies/${port}`, { method: 'DELETE' });
  });
});
