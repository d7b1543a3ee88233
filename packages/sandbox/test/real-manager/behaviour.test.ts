import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Sandbox } from '@zone-api/sandbox';
import { loadBundle, schemaValidator, viaProxy } from '@zone-api/testkit';
import type { RunningRealManager } from '@zone-api/testkit/real-manager';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, fieldsOf, type Reply, startSideBySide, workerCaughtUp } from './pair.js';

// The sandbox behaves as the real local proxy manager 1.570.247 where a call changes state: each case
// below plays the same calls against both (run by `pnpm test:real-manager`, inside a network namespace
// with only loopback) and compares what each answers, value by value, and asserts the real program's
// answer too, so that a case cannot pass by both being wrong alike. Each case uses ports of its own.

const ACCOUNT = {
  customer: 'hl_1a2b3c4d',
  zone: 'static_zone',
  password: 'z8x7c6v5b4n3',
  zones: {
    static_zone: { password: ['z8x7c6v5b4n3'], plan: { type: 'static', ips_type: 'shared' }, perm: 'city asn google peers' },
    res_zone: { password: ['r3s1d3nt9x7w'], plan: { type: 'resident', vip: true }, perm: 'vip city asn' },
  },
};
const doc = loadBundle('manager');
const validator = schemaValidator(doc);

let sandbox: Sandbox;
let manager: RunningRealManager;
let target: Server;
let targetUrl: string;

beforeAll(async () => {
  // A loopback target that answers the status a request asks for in `st=`.
  target = createServer((req, res) => {
    res.statusCode = Number(/[?&]st=(\d{3})/.exec(req.url ?? '')?.[1] ?? 200);
    res.setHeader('content-type', 'text/plain');
    res.end(`hello ${req.url}`);
  });
  await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
  targetUrl = `http://127.0.0.1:${(target.address() as AddressInfo).port}`;
  ({ sandbox, manager } = await startSideBySide(ACCOUNT));
}, 120_000);

afterAll(async () => {
  await manager?.stop();
  await sandbox?.close();
  await new Promise<void>((resolve) => (target ? target.close(() => resolve()) : resolve()));
});

/**
 * Both listen on the same loopback: a proxy port of the sandbox is the real one's number + SHIFT. A call
 * is written once as a function of `at`, which gives each side its number for a port of the case.
 */
const SHIFT = 1000;
type At = (port: number) => number;
type Call = (at: At) => [method: string, path: string, body?: unknown, media?: string];

/** The same call to both; their answers, the real one first. */
async function both(req: Call): Promise<[Reply, Reply]> {
  const real = await call(manager.url, ...req((p) => p));
  const sbx = await call(sandbox.managerUrl, ...req((p) => p + SHIFT));
  return [real, sbx];
}

/** Both answer alike (after `norm`), and the real one is `expected` (a partial match). */
async function same(req: Call, expected: Partial<Reply>, norm: (r: Reply) => unknown = (r) => r) {
  const [real, sbx] = await both(req);
  const [method, path] = req((p) => p);
  expect(real, `real manager: ${method} ${path}`).toMatchObject(expected);
  expect(norm(sbx), `sandbox answers ${method} ${path} as the real manager`).toEqual(norm(real));
  return real;
}

/** A ban's end differs by the milliseconds between the two calls: compared as "has one". */
const bansNorm = (r: Reply) => ({
  ...r,
  body: {
    ips: ((r.body as { ips: Array<string | Record<string, unknown>> }).ips ?? []).map((b) =>
      typeof b === 'string' ? b : { ...b, ...('to' in b ? { to: typeof b.to } : {}) },
    ),
  },
});

async function createBoth(port: number, proxy: Record<string, unknown> = {}) {
  const [real, sbx] = await both((at) => ['POST', '/api/proxies', { proxy: { port: at(port), zone: 'res_zone', ...proxy } }]);
  expect(real.status, JSON.stringify(real.body)).toBe(200);
  expect(sbx.status, JSON.stringify(sbx.body)).toBe(200);
}

describe('bans as the real manager keeps them', () => {
  it('a ban list item has `domain: ""` without a domain and `to` only with an end; invalid IPs of banips are dropped', async () => {
    const port = 25200;
    await createBoth(port);
    await same((at) => ['POST', `/api/proxies/${at(port)}/banips`, { ips: ['1.1.1.1', 'not-an-ip', '2.2.2.2'] }], { status: 204 });
    await same((at) => ['POST', `/api/proxies/${at(port)}/banips`, { ips: ['bad'] }], { status: 400, body: 'No ips provided' });
    await same((at) => ['POST', `/api/proxies/${at(port)}/banip`, { ip: '3.3.3.3', domain: 'example.com' }], { status: 204 });
    await same((at) => ['POST', `/api/proxies/${at(port)}/banip`, { ip: '4.4.4.4', ms: 60_000 }], { status: 204 });
    const full = await same((at) => ['GET', `/api/banlist/${at(port)}?full=1`], { status: 200 }, bansNorm);
    expect(full.body).toEqual({
      ips: [
        { ip: '1.1.1.1', domain: '' },
        { ip: '2.2.2.2', domain: '' },
        { ip: '3.3.3.3', domain: 'example.com' },
        { ip: '4.4.4.4', domain: '', to: expect.any(Number) },
      ],
    });
    await same((at) => ['GET', `/api/banlist/${at(port)}`], {
      status: 200,
      body: { ips: ['1.1.1.1', '2.2.2.2', '3.3.3.3|example.com', '4.4.4.4'] },
    });
    await same(() => ['GET', '/api/banlist/25999'], { status: 400, body: 'server does not exist' });
    for (const r of [full])
      expect(validator.validate('#/paths/~1api~1banlist~1{port}/get/responses/200/content/application~1json/schema', r.body)).toBeNull();
  });

  it('unbanip without a domain does not lift a domain ban; unbanips clears every ban of the port whatever the body', async () => {
    const port = 25210;
    await createBoth(port);
    await same((at) => ['POST', `/api/proxies/${at(port)}/banip`, { ip: '3.3.3.3', domain: 'example.com' }], { status: 204 });
    await same((at) => ['POST', `/api/proxies/${at(port)}/banip`, { ip: '5.5.5.5' }], { status: 204 });
    const kept = await same((at) => ['POST', `/api/proxies/${at(port)}/unbanip`, { ip: '3.3.3.3' }], { status: 200 }, bansNorm);
    expect(kept.body).toEqual({
      ips: [
        { ip: '3.3.3.3', domain: 'example.com' },
        { ip: '5.5.5.5', domain: '' },
      ],
    });
    await same((at) => ['POST', `/api/proxies/${at(port)}/unbanip`, { ip: '3.3.3.3', domain: 'example.com' }], {
      status: 200,
      body: { ips: [{ ip: '5.5.5.5', domain: '' }] },
    });
    await same((at) => ['POST', `/api/proxies/${at(port)}/unbanip`, { ip: '3.3.3.3' }], { status: 400, body: 'IP is not banned' });
    await same((at) => ['POST', `/api/proxies/${at(port)}/banip`, { ip: '6.6.6.6', domain: 'example.org' }], { status: 204 });
    // The real manager's worker echoes a ban back to it a moment later; an unban before the echo is undone by it.
    await workerCaughtUp(manager.url, targetUrl, port);
    await same((at) => ['POST', `/api/proxies/${at(port)}/unbanips`, { ip: ['9.9.9.9'] }], { status: 200, body: 'OK' });
    await same((at) => ['GET', `/api/banlist/${at(port)}?full=1`], { status: 200, body: { ips: [] } });
    await same(() => ['POST', '/api/proxies/25998/unbanips', { ip: ['9.9.9.9'] }], {
      status: 500,
      body: 'Server error: No proxy at port 25998',
    });
  });

  it('POST /api/banip bans on the ports it names only, none without `ports`; its `ips` are banned unchecked', async () => {
    const port = 25220;
    await createBoth(port);
    await same(() => ['POST', '/api/banip', { ip: '7.7.7.7' }], { status: 204 });
    await same((at) => ['GET', `/api/banlist/${at(port)}`], { status: 200, body: { ips: [] } });
    await same((at) => ['POST', '/api/banip', { ip: '7.7.7.7', ports: [at(port), 25997] }], { status: 204 });
    await same((at) => ['POST', '/api/banip', { ips: ['8.8.8.8', 'bad'], ports: [at(port)] }], { status: 204 });
    await same((at) => ['POST', '/api/banip', { ip: 'bad', ports: [at(port)] }], { status: 400, body: 'No IP provided' });
    await same((at) => ['GET', `/api/banlist/${at(port)}`], { status: 200, body: { ips: ['7.7.7.7', '8.8.8.8', 'bad'] } });
  });
});

type HarEntry = { request: { url: string }; response: { status: number | string; content: { text?: string } } };
type Logs = { log: { entries: HarEntry[] }; total: number };
const paths = (r: Reply) => (r.body as Logs).log.entries.map((e) => new URL(e.request.url).pathname);

/** Sends `paths` through the port on both (each its own number), and waits until both logged them all. */
async function traffic(port: number, sent: string[], tag: string) {
  for (const [base, at] of [
    [manager.url, port],
    [sandbox.managerUrl, port + SHIFT],
  ] as const) {
    const answers: string[] = [];
    for (const p of sent) {
      const r = await viaProxy(`http://127.0.0.1:${at}`, `${targetUrl}${p}`);
      answers.push(`${r.status} ${r.text.slice(0, 200)}`);
    }
    await expect
      // Counted here, not with `search`: the real manager's search finds nothing logged after a search
      // that found nothing (its log store keeps the empty result), so the first search waits for all.
      .poll(
        async () =>
          ((await call(base, 'GET', '/api/logs?limit=0')).body as Logs).log.entries.filter((e) => e.request.url.includes(tag)).length,
        {
          timeout: 10_000,
          message: `${base === manager.url ? 'real manager' : 'sandbox'} logged the requests through ${at} (answers: ${answers.join('; ')})`,
        },
      )
      .toBe(sent.length)
      .catch(async (err) => {
        const all = (await call(base, 'GET', '/api/logs?limit=0')).body as Logs;
        throw new Error(
          `${err}\nlogged: ${all.total} ${all.log.entries.map((e) => e.request.url).join(' ')}\n${manager.output().slice(-3000)}`,
        );
      });
  }
}

describe('log filters as the real manager reads them', () => {
  it('limit=0 is all, port_from alone is ignored, any sort_desc is descending, an unknown sort is accepted, a bad search is its 500', async () => {
    const port = 25230;
    await createBoth(port);
    await traffic(port, ['/flt-a?st=200', '/flt-c?st=404', '/flt-b?st=200'], 'flt-');
    const sorted = (r: Reply) => ({ ...r, body: paths(r).sort() });
    const inOrder = (r: Reply) => ({ ...r, body: paths(r) });
    await same(() => ['GET', '/api/logs?search=flt-&limit=0'], { status: 200 }, sorted);
    expect(sorted(await call(manager.url, 'GET', '/api/logs?search=flt-&limit=0')).body).toEqual(['/flt-a', '/flt-b', '/flt-c']);
    await same((at) => ['GET', `/api/logs?search=flt-&port_from=${at(port) + 1}`], { status: 200 }, sorted);
    expect(paths(await call(manager.url, 'GET', `/api/logs?search=flt-&port_from=${port + 1}`))).toHaveLength(3);
    await same((at) => ['GET', `/api/logs?search=flt-&port_from=${at(port) + 1}&port_to=${at(port) + 5}`], { status: 200 }, sorted);
    expect(paths(await call(manager.url, 'GET', `/api/logs?search=flt-&port_from=${port + 1}&port_to=${port + 5}`))).toEqual([]);
    const desc = await same(() => ['GET', '/api/logs?search=flt-&sort=url&sort_desc=false'], { status: 200 }, inOrder);
    expect(paths(desc)).toEqual(['/flt-c', '/flt-b', '/flt-a']);
    await same(() => ['GET', '/api/logs?search=flt-&sort=url'], { status: 200 }, inOrder);
    await same(() => ['GET', '/api/logs?search=flt-&sort=no_such_field'], { status: 200 }, sorted);
    await same(() => ['GET', '/api/logs?search=flt-&status_code=4**'], { status: 200 }, sorted);
    expect(paths(await call(manager.url, 'GET', '/api/logs?search=flt-&status_code=4**'))).toEqual(['/flt-c']);
    const bad = await same(() => ['GET', '/api/logs?search=('], { status: 500 });
    expect(bad).toMatchObject({ media: 'text/html', body: 'Server error: Invalid regular expression: /(/: Unterminated group' });
    expect(validator.validate('#/paths/~1api~1logs/get/responses/500/content/text~1html/schema', bad.body)).toBeNull();
  });

  it('general_logs?limit=0 is the whole log', async () => {
    const [real, sbx] = await both(() => ['GET', '/api/general_logs?limit=0']);
    const [realTail, sbxTail] = await both(() => ['GET', '/api/general_logs?limit=2']);
    for (const [all, tail] of [
      [real, realTail],
      [sbx, sbxTail],
    ] as const) {
      expect(all.status).toBe(200);
      expect((tail.body as string).split('\n')).toHaveLength(2);
      expect((all.body as string).split('\n').length).toBeGreaterThan(2);
    }
  });
});

describe('settings as the real manager applies them', () => {
  const pick = (r: Reply) => ({
    ...fieldsOf('zone', 'logs', 'har_limit')(r),
    fixed: ((r.body as Record<string, unknown>).fixed_whitelist_ips as string[]).includes('9.9.9.9'),
  });
  it('an unknown zone is stored, logs: true is 1 and false 0 (nothing logged), har_limit caps the logged bodies, fixed_whitelist_ips is not set', async () => {
    const port = 25240;
    await createBoth(port);
    const set = await same(
      () => ['PUT', '/api/settings', { zone: 'no_such_zone', logs: true, har_limit: 12, fixed_whitelist_ips: ['9.9.9.9'] }],
      { status: 200 },
      pick,
    );
    expect(pick(set)).toEqual({ status: 200, zone: 'no_such_zone', logs: 1, har_limit: 12, fixed: false });
    // har_limit: the next request's body is kept up to 12 bytes; logs: 1 keeps only that one.
    await traffic(port, ['/settings-har-limit-body'], 'settings-har');
    const kept = (r: Reply) => ({ total: (r.body as Logs).total, texts: (r.body as Logs).log.entries.map((e) => e.response.content.text) });
    const logged = await same(() => ['GET', '/api/logs?limit=0'], { status: 200 }, kept);
    expect(kept(logged)).toEqual({ total: 1, texts: ['hello /setti'] });
    await same(
      () => ['PUT', '/api/settings', { logs: false, zone: 'static_zone', har_limit: 1024 }],
      { status: 200, body: expect.objectContaining({ logs: 0 }) },
      pick,
    );
    // logs: 0: a request is not logged (the one entry stays).
    for (const at of [port, port + SHIFT]) await viaProxy(`http://127.0.0.1:${at}`, `${targetUrl}/settings-not-logged`);
    await new Promise((r) => setTimeout(r, 500));
    await same(() => ['GET', '/api/logs?search=not-logged'], { status: 200, body: expect.objectContaining({ total: 0 }) }, kept);
    await same(() => ['PUT', '/api/settings', { logs: 1000 }], { status: 200 }, pick);
  });
});
