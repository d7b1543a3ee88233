import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ipInList, isWhitelistEntry } from '../src/domain/net.js';
import { defaultSeed, startSandbox, validateSeed } from '../src/index.js';
import { LOG_LINE_MAX, LOG_MAX } from '../src/manager/context.js';
import { bearer, C, Conformance, docs, raw } from './helpers.js';

// What an attack on the sandbox found (hostile patterns, prototype keys, input that gave 500, seeds
// that load but break a read): each answered with a 4xx naming the parameter, or refused at start.
// The sandbox runs as its bin in a child process: a request that held its event loop would then fail
// this suite by its timeout instead of freezing the test runner with it.

const cli = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
const conformance = { account: new Conformance(docs.account), manager: new Conformance(docs.manager) };
const urls = { account: '', manager: '' };
let child: ChildProcess | undefined;
let dir: string;

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

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'zone-api-hardening-'));
  const seedFile = join(dir, 'seed.json');
  writeFileSync(seedFile, JSON.stringify(seedWithLongUrls()));
  const proc = spawn(process.execPath, [cli, '--no-traffic', '--account-port', '0', '--manager-port', '0', '--seed', seedFile], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child = proc;
  await new Promise<void>((resolve, reject) => {
    let out = '';
    proc.stdout?.on('data', (d) => {
      out += d;
      const a = /account API {2}(http:\/\/\S+)/.exec(out);
      const m = /manager API {2}(http:\/\/\S+)/.exec(out);
      if (a?.[1] && m?.[1] && out.includes('control')) {
        urls.account = a[1];
        urls.manager = m[1];
        resolve();
      }
    });
    proc.stderr?.on('data', (d) => {
      out += d;
    });
    proc.once('exit', (code) => reject(new Error(`the sandbox exited ${code}: ${out}`)));
  });
}, 30_000);
afterAll(() => {
  child?.kill('SIGKILL');
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function manager(path: string) {
  const r = await raw(urls.manager, 'GET', path);
  expect(conformance.manager.check('GET', path.split('?')[0] as string, r.status, r.headers.get('content-type'), r.text)).toEqual([]);
  return r;
}
async function account(path: string) {
  const r = await raw(urls.account, 'GET', path, { headers: bearer });
  expect(conformance.account.check('GET', path.split('?')[0] as string, r.status, r.headers.get('content-type'), r.text)).toEqual([]);
  return r;
}

describe('GET /api/logs?search: a regular expression matched in linear time', () => {
  it('a catastrophic pattern is answered, with the right entries, and the account API still answers', async () => {
    const [logs, status] = await Promise.all([manager(`/api/logs?search=${encodeURIComponent('^(.+)+!$')}`), account('/api/status')]);
    expect(logs.status).toBe(200);
    expect(logs.json().total).toBe(0);
    expect(status.status).toBe(200);
    const some = await manager(`/api/logs?search=${encodeURIComponent('^https://example\\.com/a{70,}$')}`);
    expect(some.json().total).toBe(14);
  }, 20_000);

  it('a pattern that needs backtracking (backreference, lookaround) or does not parse: 400 naming query.search', async () => {
    for (const pattern of ['(a)\\1', '(?=a)b', '(a', '[z-a]']) {
      const r = await manager(`/api/logs?search=${encodeURIComponent(pattern)}`);
      expect(r.status, pattern).toBe(400);
      expect(r.text, pattern).toContain('query.search');
    }
  });
});

describe('input that gave 500', () => {
  it('GET /api/logs?sort with a prototype key: 400 naming query.sort', async () => {
    for (const key of ['__proto__', 'constructor', 'toString', 'hasOwnProperty']) {
      const r = await manager(`/api/logs?sort=${key}`);
      expect(r.status, key).toBe(400);
      expect(r.text).toContain('query.sort');
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
  it('a port number in the path is decimal: 0x5DC0, 24000.0 or 2.4e4 do not address port 24000', async () => {
    for (const port of ['0x5DC0', '24000.0', '2.4e4', '+24000 ']) {
      const r = await raw(urls.manager, 'DELETE', `/api/proxies/${encodeURIComponent(port)}`);
      expect(r.status, port).toBe(400);
      expect(r.text, port).toContain('path.port');
      expect(
        conformance.manager.check('DELETE', `/api/proxies/${encodeURIComponent(port)}`, r.status, r.headers.get('content-type'), r.text),
      ).toEqual([]);
    }
    const ports = (await raw(urls.manager, 'GET', '/api/proxies')).json() as unknown as { port: number }[];
    expect(ports.map((p) => p.port)).toContain(24000);
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
    expect(created.status, created.text).toBe(200);
    const bw = (await account(`/api/customer/bw?customer=${C}`)).json()[C];
    expect(Object.keys(bw.data)).toContain('__proto__');
    expect(Object.hasOwn(bw.data, '__proto__')).toBe(true);
    const zone = (await account(`/api/zone/bw?customer=${C}&zone=__proto__`)).json()[C];
    expect(Object.keys(zone.data)).toEqual(['__proto__']);
  });
});

describe('memory: the general log is capped by size, not by lines', () => {
  it('1,000 restarts of 2,000 ports keep the log under LOG_MAX characters, lines cut at LOG_LINE_MAX', async () => {
    const created = await raw(urls.manager, 'POST', '/api/proxies', { body: { proxy: { port: 30000, multiply: 2000 } } });
    expect(created.status, created.text).toBe(200);
    for (let i = 0; i < 1000; i++) expect((await raw(urls.manager, 'POST', '/api/restart')).status).toBe(200);
    const log = await raw(urls.manager, 'GET', '/api/general_logs?limit=100000');
    expect(log.status).toBe(200);
    const lines = log.text.split('\n');
    expect(lines.length).toBeGreaterThan(400);
    expect(log.text.length - (lines.length - 1)).toBeLessThanOrEqual(LOG_MAX);
    expect(Math.max(...lines.map((l) => l.length))).toBeLessThanOrEqual(LOG_LINE_MAX + 60);
    expect(lines.at(-1)).toMatch(/restart: ports 24000, 24001, 30000, 30001/);
  }, 60_000);
});

describe('a change the API accepts always leaves a state that loads', () => {
  it.each([...new Set(defaultSeed().account.zones.map((z) => z.name))])(
    'deleting Zone %s, then restarting on the data file and seeding from GET /__sandbox/state',
    async (zone) => {
      const work = mkdtempSync(join(tmpdir(), 'zone-api-delete-'));
      const dataFile = join(work, 'state.json');
      try {
        const first = await startSandbox({ accountPort: 0, managerPort: 0, dataFile });
        const del = await raw(first.accountUrl, 'DELETE', '/api/zone', { headers: bearer, body: { customer: C, zone } });
        expect(del.status, del.text).toBe(200);
        const state = (await raw(first.accountUrl, 'GET', '/__sandbox/state')).json();
        await first.close();
        validateSeed(state, { account: docs.account, manager: docs.manager }); // throws when the state would not load
        expect(state.usage.filter((u: { zone: string }) => u.zone === zone)).toEqual([]);
        expect(state.req_logs.filter((r: { zone: string }) => r.zone === zone)).toEqual([]);
        const again = await startSandbox({ accountPort: 0, managerPort: 0, dataFile });
        try {
          const zones = (await raw(again.accountUrl, 'GET', `/api/zone/get_active_zones?customer=${C}`, { headers: bearer })).json();
          expect(zones.map((z: { name: string }) => z.name)).not.toContain(zone);
          const reseeded = await startSandbox({ accountPort: 0, managerPort: 0, seed: state });
          await reseeded.close();
        } finally {
          await again.close();
        }
      } finally {
        rmSync(work, { recursive: true, force: true });
      }
    },
  );
});

describe('persistence: acknowledged only once on disk, one sandbox per data file', () => {
  const zoneBody = (name: string) => ({ zone: { name }, plan: { type: 'static', ips_type: 'shared' } });

  it('a second sandbox on the same data file does not start, and names the holder', async () => {
    const work = mkdtempSync(join(tmpdir(), 'zone-api-lock-'));
    const dataFile = join(work, 'state.json');
    try {
      const first = await startSandbox({ accountPort: 0, managerPort: 0, dataFile });
      await expect(startSandbox({ accountPort: 0, managerPort: 0, dataFile })).rejects.toThrow(
        new RegExp(`in use by another sandbox \\(pid ${process.pid} on `),
      );
      await first.close();
      const again = await startSandbox({ accountPort: 0, managerPort: 0, dataFile });
      await again.close();
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  });

  it('a save that fails answers 503 and leaves memory as the disk has it; the next change that saves is kept', async () => {
    const work = mkdtempSync(join(tmpdir(), 'zone-api-savefail-'));
    const dir = join(work, 'data');
    mkdirSync(dir);
    const dataFile = join(dir, 'state.json');
    const sandbox = await startSandbox({ accountPort: 0, managerPort: 0, dataFile });
    try {
      const before = sandbox.state();
      rmSync(dir, { recursive: true, force: true }); // every write now fails
      const refused = await raw(sandbox.accountUrl, 'POST', '/api/zone', { headers: bearer, body: zoneBody('lost_zone') });
      expect(refused.status, refused.text).toBe(503);
      expect(refused.json().error).toMatch(/could not be saved to the data file \(ENOENT\), so it was not made/);
      expect(sandbox.state()).toEqual(before);
      mkdirSync(dir);
      const kept = await raw(sandbox.accountUrl, 'POST', '/api/zone', { headers: bearer, body: zoneBody('kept_zone') });
      expect(kept.status, kept.text).toBe(200);
      const names = JSON.parse(readFileSync(dataFile, 'utf8')).account.zones.map((z: { name: string }) => z.name);
      expect(names).toContain('kept_zone');
      expect(names).not.toContain('lost_zone');
    } finally {
      await sandbox.close().catch(() => {});
      rmSync(work, { recursive: true, force: true });
    }
  });

  it('every acknowledged change survives kill -9 (the journal is written before the answer)', async () => {
    const work = mkdtempSync(join(tmpdir(), 'zone-api-kill9-'));
    const dataFile = join(work, 'state.json');
    const proc = spawn(process.execPath, [cli, '--no-traffic', '--account-port', '0', '--manager-port', '0', '--data', dataFile], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = '';
        proc.stdout?.on('data', (d) => {
          out += d;
          const a = /account API {2}(http:\/\/\S+)/.exec(out);
          if (a?.[1] && out.includes('control')) resolve(a[1]);
        });
        proc.once('exit', (code) => reject(new Error(`exited ${code}: ${out}`)));
      });
      // 300 changes in flight, the process killed in the middle of them: what was answered 200 must be on disk.
      const acked: string[] = [];
      const sends = Array.from({ length: 300 }, (_, i) => {
        const ip = `198.51.${100 + Math.floor(i / 250)}.${(i % 250) + 1}`;
        return raw(url, 'POST', '/api/zone/whitelist', { headers: bearer, body: { customer: C, zone: 'static_zone', ip } }).then(
          (r) => {
            if (r.status === 201) acked.push(ip);
            if (acked.length === 100) proc.kill('SIGKILL');
          },
          () => {},
        );
      });
      await Promise.all(sends);
      proc.kill('SIGKILL'); // when fewer than 100 were answered (the assertion below then fails)
      await new Promise<void>((resolve) =>
        proc.exitCode !== null || proc.signalCode !== null ? resolve() : proc.once('exit', () => resolve()),
      );
      expect(proc.signalCode).toBe('SIGKILL');
      expect(acked.length).toBeGreaterThanOrEqual(100);
      const again = await startSandbox({ accountPort: 0, managerPort: 0, dataFile });
      try {
        const whitelist = again.state().account.zones.find((z) => z.name === 'static_zone')?.whitelist ?? [];
        expect(acked.filter((ip) => !whitelist.includes(ip))).toEqual([]);
      } finally {
        await again.close();
      }
    } finally {
      proc.kill('SIGKILL');
      rmSync(work, { recursive: true, force: true });
    }
  });

  it('a final save that fails on SIGTERM is reported in one line, exit code 1', async () => {
    const work = mkdtempSync(join(tmpdir(), 'zone-api-finalsave-'));
    const dir = join(work, 'data');
    mkdirSync(dir);
    const proc = spawn(
      process.execPath,
      [cli, '--no-traffic', '--account-port', '0', '--manager-port', '0', '--data', join(dir, 'state.json')],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let err = '';
    proc.stderr?.on('data', (d) => (err += d));
    await new Promise<void>((resolve) => proc.stdout?.on('data', (d) => String(d).includes('control') && resolve()));
    rmSync(dir, { recursive: true, force: true });
    const code = await new Promise<number | null>((resolve) => {
      proc.once('exit', (c) => resolve(c));
      proc.kill('SIGTERM');
    });
    rmSync(work, { recursive: true, force: true });
    expect(code).toBe(1);
    expect(err.trim().split('\n')).toHaveLength(1);
    expect(err).toMatch(/final save to .* failed \(ENOENT\)/);
    expect(err).not.toMatch(/\n\s+at /);
  });
});
