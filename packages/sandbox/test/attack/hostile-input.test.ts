import { describe, expect, it } from 'vitest';
import { ipInList, isWhitelistEntry } from '../../src/domain/net.js';
import { defaultSeed, startSandbox } from '../../src/index.js';
import { useCliSandbox } from '../cli-sandbox.js';
import { bearer, C, raw } from '../helpers.js';

// What an attack on the sandbox found (hostile patterns, prototype keys, input that gave 500, seeds
// that load but break a read): each answered with a 4xx naming the parameter, or refused at start.
// The sandbox runs as its bin in a child process (useCliSandbox).

// HAR entries with long URLs: a backtracking engine given `^(.+)+!$` runs for longer than the age of the
// universe on one of them; a linear-time one answers at once.
function seedWithLongUrls() {
  const seed = defaultSeed();
  const template = seed.manager.har[0];
  if (!template) throw new Error('the built-in seed has no HAR entry');
  for (let i = 0; i < 20; i++) {
    const e = structuredClone(template);
    e.request.url = `https://example.com/${'a'.repeat(64 + i)}`;
    seed.manager.har.push(e);
  }
  return seed;
}

const { urls, conformance, manager, account } = useCliSandbox(seedWithLongUrls);

describe('GET /api/logs?search: a regular expression matched in linear time', () => {
  it('a catastrophic pattern is answered, with the right entries, and the account API still answers', async () => {
    const [logs, status] = await Promise.all([manager(`/api/logs?search=${encodeURIComponent('^(.+)+!$')}`), account('/api/status')]);
    expect(logs.status).toBe(200);
    expect(logs.json().total).toBe(0);
    expect(status.status).toBe(200);
    const some = await manager(`/api/logs?search=${encodeURIComponent('^https://example\\.com/a{70,}$')}`);
    expect(some.json().total).toBe(14);
  }, 20_000);

  it('a pattern that needs backtracking (backreference, lookaround) is not run: no filter, as the real manager drops an unsafe one', async () => {
    const all = (await manager('/api/logs?limit=0')).json().total;
    expect(all).toBeGreaterThan(0);
    for (const pattern of ['(a)\\1', '(?=a)b']) {
      const r = await manager(`/api/logs?search=${encodeURIComponent(pattern)}&limit=0`);
      expect(r.status, pattern).toBe(200);
      expect(r.json().total, pattern).toBe(all);
    }
  });

  it("a pattern that does not parse: the real manager's 500 text, with the parser's message", async () => {
    for (const [pattern, message] of [
      ['(a', 'Invalid regular expression: /(a/: Unterminated group'],
      ['[z-a]', 'Invalid regular expression: /[z-a]/: Range out of order in character class'],
    ]) {
      const r = await manager(`/api/logs?search=${encodeURIComponent(pattern as string)}`);
      expect(r.status, pattern).toBe(500);
      expect(r.text, pattern).toBe(`Server error: ${message}`);
    }
  });
});

describe('input that gave 500', () => {
  it('GET /api/logs?sort with a prototype key: accepted as any unknown field (in the order of the log), no crash', async () => {
    const plain = (await manager('/api/logs?sort=no_such_field&limit=0')).json().log.entries.map((e: { uuid: string }) => e.uuid);
    expect(plain.length).toBeGreaterThan(0);
    for (const key of ['__proto__', 'constructor', 'toString', 'hasOwnProperty']) {
      const r = await manager(`/api/logs?sort=${key}&limit=0`);
      expect(r.status, key).toBe(200);
      expect(
        r.json().log.entries.map((e: { uuid: string }) => e.uuid),
        key,
      ).toEqual(plain);
    }
  });

  it('req_logs and req_logs/stats with a status.code that is not a code or pattern: 400 naming it', async () => {
    for (const path of ['/api/customer/req_logs', '/api/customer/req_logs/stats']) {
      for (const code of ['5**(', '[0-9]', '5.*', '2000']) {
        const r = await account(`${path}?customer=${C}&status.code=${encodeURIComponent(code)}`);
        expect(r.status, `${path} ${code}`).toBe(400);
        expect(r.json().details).toContainEqual(expect.objectContaining({ field: 'query.status.code' }));
      }
    }
  });

  it('status.code patterns still match: 2**, 2xx and an exact code', async () => {
    const all = (await account(`/api/customer/req_logs?customer=${C}&page_size=1000`)).json() as { status: { code: number } }[];
    const two = all.filter((r) => String(r.status.code).startsWith('2')).length;
    expect(two).toBeGreaterThan(0);
    for (const code of ['2**', '2xx', '2X*']) {
      const r = (await account(`/api/customer/req_logs?customer=${C}&page_size=1000&status.code=${code}`)).json();
      expect(r, code).toHaveLength(two);
    }
    const exact = all[0]?.status.code as number;
    const r = (await account(`/api/customer/req_logs?customer=${C}&page_size=1000&status.code=${exact}`)).json();
    expect(r).toHaveLength(all.filter((x) => x.status.code === exact).length);
  });

  it('a seed whose HAR entry has a URL that is not a URL is refused at start, naming the entry', async () => {
    const seed = defaultSeed();
    (seed.manager.har[0] as { request: { url: string } }).request.url = 'not a url';
    await expect(startSandbox({ accountPort: 0, managerPort: 0, seed })).rejects.toThrow(/\/manager\/har\/0\/request\/url/);
  });
});

describe('lenient parsing where production is strict', () => {
  // By default every manager path names its port unchecked, as the real manager reads it (a key, `+port`
  // or `==`; manager-coercion.test.ts): proxy_status looks it up as a key, so none of these names port 24000.
  it('a port number in the path is decimal: 0x5DC0, 24000.0 or 2.4e4 do not address port 24000', async () => {
    for (const port of ['0x5DC0', '24000.0', '2.4e4', '+24000 ', '024000']) {
      const r = await raw(urls.manager, 'GET', `/api/proxy_status/${encodeURIComponent(port)}`);
      expect(r.status, port).toBe(200);
      expect(r.json(), port).toEqual({ status: 'Unknown proxy' });
    }
    const ports = (await raw(urls.manager, 'GET', '/api/proxies')).json() as unknown as { port: number }[];
    expect(ports.map((p) => p.port)).toContain(24000);
  });

  it('--strict: a port number in the path is checked, decimal only, and the 400 names it', async () => {
    const strict = await startSandbox({ accountPort: 0, managerPort: 0, strict: true });
    try {
      for (const port of ['0x5DC0', '24000.0', '2.4e4', '+24000 ', 'abc']) {
        const r = await raw(strict.managerUrl, 'GET', `/api/proxy_status/${encodeURIComponent(port)}`);
        expect(r.status, port).toBe(400);
        expect(r.text, port).toContain('path.port');
        expect(
          conformance.manager.check(
            'GET',
            `/api/proxy_status/${encodeURIComponent(port)}`,
            r.status,
            r.headers.get('content-type'),
            r.text,
          ),
        ).toEqual([]);
      }
      expect((await raw(strict.managerUrl, 'GET', '/api/proxy_status/24000')).json()).toHaveProperty('status');
    } finally {
      await strict.close();
    }
  });

  it('an impossible calendar date is refused, naming the parameter, instead of rolling over to the next month', async () => {
    for (const path of [
      `/api/customer/bw?customer=${C}&from=2020-02-30&to=2020-03-05`,
      `/api/customer/bw?customer=${C}&from=2021-02-29&to=2021-03-05`,
      `/api/customer/bw?customer=${C}&from=2020-02-01&to=2020-04-31T00:00:00`,
      '/api/customer/req_logs?ts.from=2020-13-01T00:00:00Z',
    ]) {
      const r = await account(path);
      expect(r.status, path).toBe(400);
      expect(r.text, path).toMatch(/query\.(from|to|ts\.from)/);
      expect(r.text, path).toContain('calendar');
      expect(conformance.account.check('GET', path, r.status, r.headers.get('content-type'), r.text)).toEqual([]);
    }
    // A real leap day is a day like any other.
    const leap = await account(`/api/customer/bw?customer=${C}&from=2020-02-28&to=2020-03-01`);
    expect(leap.status, leap.text).toBe(200);
  });

  it('an IPv6 subnet that is accepted in a whitelist also matches the clients inside it', () => {
    expect(isWhitelistEntry('2001:db8::/32')).toBe(true);
    expect(ipInList('2001:db8:1::5', ['2001:db8::/32'])).toBe(true);
    expect(ipInList('2001:db9::5', ['2001:db8::/32'])).toBe(false);
    expect(ipInList('10.0.0.1', ['2001:db8::/32'])).toBe(false);
    // Decided: 0.0.0.0/0 is a subnet like any other (the provider accepts subnets) and so covers every
    // IPv4 client, as `any` does (the documentation shows `any` as a whitelist value).
    expect(ipInList('203.0.113.9', ['0.0.0.0/0'])).toBe(true);
    expect(ipInList('2001:db8::1', ['0.0.0.0/0'])).toBe(false);
  });

  it('a Zone named __proto__ appears in the bandwidth reports like any other', async () => {
    const created = await raw(urls.account, 'POST', '/api/zone', {
      headers: bearer,
      body: { zone: { name: '__proto__' }, plan: { type: 'static', ips_type: 'shared' } },
    });
    expect(created.status, created.text).toBe(201);
    const bw = (await account(`/api/customer/bw?customer=${C}`)).json()[C];
    expect(Object.keys(bw.data)).toContain('__proto__');
    expect(Object.hasOwn(bw.data, '__proto__')).toBe(true);
    const zone = (await account(`/api/zone/bw?customer=${C}&zone=__proto__`)).json()[C];
    expect(Object.keys(zone.data)).toEqual(['__proto__']);
  });
});
