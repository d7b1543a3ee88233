import { describe, expect, it } from 'vitest';
import { type At, SHIFT, usePair } from './pair.js';

// How the real manager 1.570.247's express router matches paths and which headers its `/api` answers
// carry, played against it and the sandbox side by side (pair.ts; a sandbox port is the real one's
// number + SHIFT): the status, media type, body and the deprecation headers of each answer compared.

const pair = usePair();

interface Seen {
  status: number;
  media: string | null;
  body: unknown;
  deprecation: string | null;
  sunset: string | null;
}

async function seen(base: string, method: string, path: string, body?: unknown): Promise<Seen> {
  const r = await fetch(`${base}${path}`, {
    method,
    ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
  });
  const text = await r.text();
  const media = r.headers.get('content-type')?.split(';')[0]?.trim() ?? null;
  return {
    status: r.status,
    media,
    body: media === 'application/json' && text ? JSON.parse(text) : text,
    deprecation: r.headers.get('deprecation'),
    sunset: r.headers.get('sunset'),
  };
}

/** The same call to both; the real answer matches `expected`, the sandbox's equals it after `norm`. */
async function same(call: (at: At) => [string, string, unknown?], expected: Partial<Seen>, norm: (s: Seen) => unknown = (s) => s) {
  const [method, path, body] = call((p) => p);
  const real = await seen(pair.manager.url, method, path, body);
  const [m2, p2, b2] = call((p) => p + SHIFT);
  const sbx = await seen(pair.sandbox.managerUrl, m2, p2, b2);
  expect(real, `real manager: ${method} ${path}`).toMatchObject(expected);
  expect(norm(sbx), `sandbox answers ${method} ${path} as the real manager`).toEqual(norm(real));
  return real;
}

const deprecated = { deprecation: 'true', sunset: '01-Nov-23 23:59:59' };
const versionOnly = (s: Seen) => ({ ...s, body: Object.keys(s.body as object).includes('version') });

describe('paths as the real manager matches them', () => {
  it('every /api answer carries Deprecation: true and Sunset: 01-Nov-23 23:59:59', async () => {
    await same(() => ['GET', '/api/version'], { status: 200, ...deprecated }, versionOnly);
    await same(() => ['GET', '/api/proxies'], { status: 200, body: [], ...deprecated });
  });

  it('a path in any case, with or without a trailing slash, is its operation (express: caseSensitive and strict off)', async () => {
    await same(() => ['GET', '/API/VERSION'], { status: 200, ...deprecated }, versionOnly);
    await same(() => ['GET', '/api/Version'], { status: 200, ...deprecated }, versionOnly);
    await same(() => ['GET', '/api/version/'], { status: 200, ...deprecated }, versionOnly);
    await same(() => ['GET', '/api/proxies/'], { status: 200, body: [], ...deprecated });
    await same(() => ['GET', '/api/proxy_status/24900/'], { status: 200, body: { status: 'Unknown proxy' } });
  });

  it('HEAD of a GET route: its status and headers, no body', async () => {
    await same(() => ['HEAD', '/api/version'], { status: 200, media: 'application/json', body: '', ...deprecated });
    await same(() => ['HEAD', '/api/settings'], { status: 200, media: 'application/json', body: '', ...deprecated });
  });
});

describe('POST /api/banip with ports', () => {
  it('a port named as a number bans there; as text it names no port (lib/manager.js 605-611)', async () => {
    await pair.createBoth(24560);
    await same((at) => ['POST', '/api/banip', { ip: '10.1.1.1', ports: [String(at(24560))] }], { status: 204 });
    await same((at) => ['GET', `/api/banlist/${at(24560)}`], { status: 200, body: { ips: [] } });
    await same((at) => ['POST', '/api/banip', { ip: '10.1.1.2', ports: [at(24560)] }], { status: 204 });
    await same((at) => ['GET', `/api/banlist/${at(24560)}`], { status: 200, body: { ips: ['10.1.1.2'] } });
    await same((at) => ['POST', '/api/banip', { ips: ['10.1.1.3'], ports: [String(at(24560)), at(24560)] }], { status: 204 });
    await same((at) => ['GET', `/api/banlist/${at(24560)}`], { status: 200, body: { ips: ['10.1.1.2', '10.1.1.3'] } });
  });
});

/** A body with each `port` of the sandbox's range taken back to the real one's number. */
const portsBack = (s: Seen): Seen => {
  const back = (x: unknown): unknown =>
    Array.isArray(x)
      ? x.map(back)
      : x && typeof x === 'object'
        ? Object.fromEntries(
            Object.entries(x).map(([k, v]) => [k, k === 'port' && typeof v === 'number' && v >= 24000 + SHIFT ? v - SHIFT : back(v)]),
          )
        : x;
  return { ...s, body: back(s.body) };
};

describe('routes of the real manager beyond the documented ones (x-observed in the spec)', () => {
  it('GET /api/proxies/{port}: the stored configuration, as listed; `invalid port number` for a number as text names no stored port', async () => {
    await pair.createBoth(24570, { country: 'us', sticky_ip: true });
    const [listed] = await pair.both(() => ['GET', '/api/proxies']);
    const stored = (listed.body as Array<{ port: number }>).find((p) => p.port === 24570);
    expect(stored).toBeDefined();
    await same(
      (at) => ['GET', `/api/proxies/${at(24570)}`],
      { status: 200, media: 'application/json', body: stored, ...deprecated },
      portsBack,
    );
    const invalid = { status: 400, media: 'text/html', body: 'invalid port number', ...deprecated };
    await same((at) => ['GET', `/api/proxies/0${at(24570)}`], invalid);
    await same(() => ['GET', '/api/proxies/abc'], invalid);
    await same((at) => ['GET', `/api/proxies/${at(24571)}`], invalid);
  });

  it('POST /api/proxy_dup: a copy on the highest running port + 1, answered as stored; the port named as `==` compares; none: 400 naming `port`', async () => {
    await pair.createBoth(24580, { country: 'de', multiply: 2 });
    // The copy takes the port after the highest running one (24581, a duplicate of 24580): 24582.
    const real = await same(
      (at) => ['POST', '/api/proxy_dup', { port: at(24580) }],
      { status: 200, media: 'application/json', ...deprecated },
      portsBack,
    );
    expect(real.body).toMatchObject({ proxy: { port: 24582, country: 'de', multiply: 2, proxy_type: 'persist' } });
    await same((at) => ['GET', `/api/proxies/${at(24582)}`], { status: 200, body: (real.body as { proxy: unknown }).proxy }, portsBack);
    // Running with its duplicates (24582, 24583), as the real manager lists its running ports.
    const running = (s: Seen) => ({ ...s, body: (s.body as Array<{ port: number }>).map((p) => p.port % SHIFT) });
    await same(() => ['GET', '/api/proxies_running'], { status: 200 }, running);
    await same((at) => ['POST', '/api/proxy_dup', { port: String(at(24570)) }], { status: 200 }, portsBack);
    const refused = {
      status: 400,
      media: 'application/json',
      body: { errors: [{ msg: "Cannot set properties of undefined (setting 'port')", field: 'port' }] },
    };
    // A duplicate of a multiplied port is not stored; nor is a port that does not exist; no port at all.
    await same((at) => ['POST', '/api/proxy_dup', { port: at(24581) }], refused);
    await same((at) => ['POST', '/api/proxy_dup', { port: at(24599) }], refused);
    await same(() => ['POST', '/api/proxy_dup', {}], refused);
  });
});
