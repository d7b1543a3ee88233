import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAccountClient } from '@zone-api/account-client';
import { createManagerClient } from '@zone-api/manager-client';
import { describe, expect, it } from 'vitest';
import { Saver, writeFileAtomic } from '../src/domain/persist.js';
import { startSandbox } from '../src/index.js';

const free = { accountPort: 0, managerPort: 0 } as const;
const TOKEN = 'sandbox-token-0001';

function freshDir(): string {
  return mkdtempSync(join(tmpdir(), 'zone-api-sandbox-data-'));
}

async function withSandbox<T>(dataFile: string, fn: (s: Awaited<ReturnType<typeof startSandbox>>) => Promise<T>): Promise<T> {
  const sandbox = await startSandbox({ ...free, dataFile });
  try {
    return await fn(sandbox);
  } finally {
    await sandbox.close();
  }
}

const clients = (s: { accountUrl: string; managerUrl: string }) => ({
  account: createAccountClient({ baseUrl: s.accountUrl, auth: { token: TOKEN }, retry: false }),
  manager: createManagerClient({ baseUrl: s.managerUrl, retry: false }),
});

describe('--data keeps the state across restarts', () => {
  it('changes made before a restart are there after it; without --data they are not', async () => {
    const file = join(freshDir(), 'state.json');
    await withSandbox(file, async (s) => {
      expect(existsSync(file)).toBe(true); // written from the seed at start-up
      const { account, manager } = clients(s);
      await account.createZone({ body: { zone: { name: 'kept_zone', password: 'keptpw' }, plan: { type: 'static', ips: 1 } } });
      await account.setAccountStatus({ body: { status: 'suspend_manual' } });
      await manager.createProxy({ body: { proxy: { port: 24100, zone: 'kept_zone' } } });
      await manager.updateSettings({ body: { logs: 7 } });
      // Acknowledged means written: the file holds the change before close() runs.
      const onDisk = JSON.parse(readFileSync(file, 'utf8'));
      expect(onDisk.account.zones.map((z: { name: string }) => z.name)).toContain('kept_zone');
    });
    await withSandbox(file, async (s) => {
      const { account, manager } = clients(s);
      expect((await account.getZonePasswords({ params: { query: { zone: 'kept_zone' } } })).data).toEqual({ passwords: ['keptpw'] });
      expect((await account.getAccountStatus({ params: { query: {} } })).data?.status).toBe('suspend_manual');
      expect((await manager.listProxies()).data?.map((p) => p.port)).toContain(24100);
      expect((await manager.getSettings()).data?.logs).toBe(7);
      expect(s.credentials.zones.kept_zone).toEqual(['keptpw']);
      // A reset goes back to the seed, and that is saved too.
      await s.reset();
    });
    await withSandbox(file, async (s) => {
      expect((await clients(s).account.getZone({ params: { query: { zone: 'kept_zone' } } })).response.status).toBe(404);
    });
    const memory = await startSandbox(free);
    try {
      expect((await clients(memory).account.getZone({ params: { query: { zone: 'kept_zone' } } })).response.status).toBe(404);
    } finally {
      await memory.close();
    }
  });

  it('a torn temp file from a crash mid-write is ignored and removed; the data file wins', async () => {
    const dir = freshDir();
    const file = join(dir, 'state.json');
    await withSandbox(file, async (s) => {
      await clients(s).account.createZone({ body: { zone: { name: 'before_crash' }, plan: { type: 'resident' } } });
    });
    const good = readFileSync(file, 'utf8');
    // What a crash between write and rename leaves behind: half a JSON document beside the file.
    writeFileSync(join(dir, '.state.json.tmp-99999-3'), good.slice(0, good.length / 2));
    await withSandbox(file, async (s) => {
      expect((await clients(s).account.getZone({ params: { query: { zone: 'before_crash' } } })).response.status).toBe(200);
    });
    expect(readdirSync(dir)).toEqual(['state.json']);
  });

  it('a data file that is not valid state fails start-up instead of being overwritten', async () => {
    const file = join(freshDir(), 'state.json');
    writeFileSync(file, '{"account": {');
    await expect(startSandbox({ ...free, dataFile: file })).rejects.toThrow(/not valid JSON.*move it away/);
    writeFileSync(file, JSON.stringify({ account: {} }));
    await expect(startSandbox({ ...free, dataFile: file })).rejects.toThrow(/Invalid data file/);
    expect(readFileSync(file, 'utf8')).toBe(JSON.stringify({ account: {} }));
  });

  it('writes are atomic: under concurrent changes every read of the file is a whole document', async () => {
    const file = join(freshDir(), 'state.json');
    await withSandbox(file, async (s) => {
      const { account } = clients(s);
      let reads = 0;
      let stop = false;
      const reader = (async () => {
        while (!stop) {
          JSON.parse(readFileSync(file, 'utf8')); // throws on a torn file
          reads++;
          await new Promise((r) => setImmediate(r));
        }
      })();
      await Promise.all(
        Array.from({ length: 40 }, (_, i) => account.addZoneWhitelistIp({ body: { zone: 'static_zone', ip: `198.51.100.${i + 1}` } })),
      );
      stop = true;
      await reader;
      expect(reads).toBeGreaterThan(0);
      const saved = JSON.parse(readFileSync(file, 'utf8'));
      const whitelist = saved.account.zones.find((z: { name: string }) => z.name === 'static_zone').whitelist as string[];
      expect(whitelist.filter((ip) => ip.startsWith('198.51.100.'))).toHaveLength(40);
    });
  });

  it('writeFileAtomic replaces the file in one step and leaves no temp file', async () => {
    const dir = freshDir();
    const file = join(dir, 'x.json');
    await writeFileAtomic(file, '{"v":1}', 1);
    await writeFileAtomic(file, '{"v":2}', 2);
    expect(readFileSync(file, 'utf8')).toBe('{"v":2}');
    expect(readdirSync(dir)).toEqual(['x.json']);
  });
});

describe('Saver (group commit)', () => {
  it('one write carries every change made while the previous write ran, and each caller resolves once its change is on disk', async () => {
    const dir = freshDir();
    const file = join(dir, 'state.json');
    let value = 0;
    let snapshots = 0;
    const saver = new Saver(file, () => {
      snapshots++;
      return JSON.stringify({ value });
    });
    const done: number[] = [];
    const saves = Array.from({ length: 50 }, (_, i) => {
      value = i + 1;
      return saver.save().then(() => {
        // By the time a caller hears back, the disk holds its change or a later one.
        done.push(JSON.parse(readFileSync(file, 'utf8')).value);
      });
    });
    await Promise.all(saves);
    expect(JSON.parse(readFileSync(file, 'utf8')).value).toBe(50);
    expect(done.every((v) => v === 50)).toBe(true);
    expect(snapshots).toBeLessThanOrEqual(2);
    expect(saver.lastSaved).toBe(JSON.stringify({ value: 50 }));
  });

  it('a failed write refuses its callers and those queued behind it; the next save after it writes again', async () => {
    const dir = freshDir();
    const file = join(dir, 'state.json');
    let fail = true;
    let value = 0;
    const saver = new Saver(file, () => {
      if (fail) throw new Error('disk full');
      return JSON.stringify({ value });
    });
    const first = saver.save();
    const queued = saver.save();
    const results = await Promise.allSettled([first, queued]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    fail = false;
    value = 7;
    await saver.save();
    expect(JSON.parse(readFileSync(file, 'utf8')).value).toBe(7);
    // Not stuck behind the failure: a burst after it is served too.
    value = 8;
    await Promise.all([saver.save(), saver.save(), saver.save()]);
    expect(JSON.parse(readFileSync(file, 'utf8')).value).toBe(8);
  });
});
