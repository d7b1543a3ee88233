import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { createAccountClient } from '@zone-api/account-client';
import { createManagerClient } from '@zone-api/manager-client';
import { freePort, viaProxy } from '@zone-api/testkit';
import { describe, expect, it } from 'vitest';
import { DataFile, foldedOf, journalOf, readState } from '../src/domain/persist.js';
import { fromSections } from '../src/domain/replay.js';
import { Store } from '../src/domain/state.js';
import { defaultSeed, startSandbox } from '../src/index.js';

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
      // Acknowledged means written: the data file (snapshot and journal) holds the change before close() runs.
      const onDisk = readState(file) as { account: { zones: { name: string }[] } };
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

  it("what the real manager keeps as given survives a restart: the settings' empty or unknown zone", async () => {
    const file = join(freshDir(), 'state.json');
    for (const zone of ['', 'no_such_zone']) {
      await withSandbox(file, async (s) => {
        expect((await clients(s).manager.updateSettings({ body: { zone } })).response.status).toBe(200);
      });
      await withSandbox(file, async (s) => {
        expect((await clients(s).manager.getSettings()).data?.zone).toBe(zone);
      });
    }
  });

  it('a stored port an update gave another proxy_type stays stored, read-only, across restarts, and after its delete too', async () => {
    const file = join(freshDir(), 'state.json');
    const send = (base: string, method: string, path: string, body?: unknown) =>
      fetch(`${base}${path}`, {
        method,
        ...(body ? { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } } : {}),
      }).then(async (r) => ({ status: r.status, text: await r.text() }));
    const listed = async (base: string) =>
      (JSON.parse((await send(base, 'GET', '/api/proxies')).text) as { port: number; proxy_type?: string }[])
        .filter((p) => p.port === 24170)
        .map((p) => p.proxy_type);
    await withSandbox(file, async (s) => {
      expect((await send(s.managerUrl, 'POST', '/api/proxies', { proxy: { port: 24170 } })).status).toBe(200);
      expect((await send(s.managerUrl, 'PUT', '/api/proxies/24170', { proxy: { proxy_type: '' } })).status).toBe(200);
    });
    await withSandbox(file, async (s) => {
      expect(await listed(s.managerUrl)).toEqual(['']);
      expect(await send(s.managerUrl, 'PUT', '/api/proxies/24170', { proxy: { zone: 'static_zone' } })).toMatchObject({
        status: 400,
        text: expect.stringContaining('Proxy is read-only'),
      });
      expect((await send(s.managerUrl, 'DELETE', '/api/proxies/24170')).status).toBe(204);
    });
    await withSandbox(file, async (s) => {
      expect(await listed(s.managerUrl)).toEqual(['']);
      expect((await send(s.managerUrl, 'GET', '/api/proxies_running')).text).not.toContain('24170');
      expect((await send(s.managerUrl, 'PUT', '/api/proxies/24170', { proxy: { zone: 'static_zone' } })).status).toBe(400);
      expect((await send(s.managerUrl, 'DELETE', '/api/proxies/24170')).status).toBe(500);
    });
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
          readState(file); // throws on a torn snapshot or a damaged journal
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
      const saved = readState(file) as { account: { zones: { name: string; whitelist: string[] }[] } };
      const whitelist = saved.account.zones.find((z) => z.name === 'static_zone')?.whitelist ?? [];
      expect(whitelist.filter((ip) => ip.startsWith('198.51.100.'))).toHaveLength(40);
    });
  });
});

describe('DataFile (group commit into a journal)', () => {
  /** A state of two sections: `small` (written on every change) and `pools` (a large one, written when touched). */
  function fakeState() {
    const st = { small: 0, pools: [0], touched: false, full: 0 };
    const journaled = {
      sectionsJson: (all: boolean): [string, string][] => {
        const out: [string, string][] = [['small', JSON.stringify(st.small)]];
        if (all || st.touched) out.push(['pools', JSON.stringify(st.pools)]);
        st.touched = false;
        return out;
      },
      snapshot: () => {
        st.full++;
        return JSON.stringify({ small: st.small, pools: st.pools });
      },
    };
    return { st, journaled };
  }

  it('the changes of one turn become one record; each caller resolves once its change is written; large sections only when touched', async () => {
    const file = join(freshDir(), 'state.json');
    const { st, journaled } = fakeState();
    const df = new DataFile(file, journaled);
    await df.save(); // the first write is a snapshot
    expect(st.full).toBe(1);
    const heard: number[] = [];
    await Promise.all(
      Array.from({ length: 50 }, (_, i) => {
        st.small = i + 1;
        return df.save().then(() => heard.push((readState(file) as { small: number }).small));
      }),
    );
    // By the time a caller hears back, the disk holds its change or a later one.
    expect(heard.every((v) => v === 50)).toBe(true);
    const records = readFileSync(journalOf(file), 'utf8').trim().split('\n').slice(1);
    expect(records).toHaveLength(1);
    expect(JSON.parse(records[0] as string).sections).toEqual({ small: 50 }); // pools untouched: not written
    st.pools = [1, 2, 3];
    st.touched = true;
    await df.save();
    expect(readState(file)).toEqual({ small: 50, pools: [1, 2, 3] });
    expect(st.full).toBe(1); // no snapshot per change
    await df.close();
    // A clean close folds the journal into the snapshot.
    expect(existsSync(journalOf(file))).toBe(false);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ small: 50, pools: [1, 2, 3] });
  });

  it('a failed write refuses its callers and those queued behind it, truncates the journal, and the next save writes a snapshot', async () => {
    const dir = join(freshDir(), 'data');
    mkdirSync(dir);
    const file = join(dir, 'state.json');
    const { st, journaled } = fakeState();
    const df = new DataFile(file, journaled);
    st.small = 1;
    await df.save();
    rmSync(dir, { recursive: true, force: true }); // the open journal now takes writes nobody can read
    st.small = 2;
    const results = await Promise.allSettled([df.save(), df.save()]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect(df.acknowledged()).toEqual({ small: 1, pools: [0] });
    mkdirSync(dir);
    st.small = 7;
    await df.save();
    expect(readState(file)).toEqual({ small: 7, pools: [0] });
    // Not stuck behind the failure: a burst after it is served too, as journal records.
    st.small = 8;
    await Promise.all([df.save(), df.save(), df.save()]);
    expect(readState(file)).toEqual({ small: 8, pools: [0] });
    await df.close();
  });

  it('a journal outgrowing the snapshot is folded into a new one', async () => {
    const file = join(freshDir(), 'state.json');
    const { st, journaled } = fakeState();
    const df = new DataFile(file, journaled, { compactAt: 200 });
    await df.save();
    for (let i = 0; i < 40; i++) {
      st.small = i;
      await df.save();
    }
    expect(st.full).toBeGreaterThan(1);
    expect(readFileSync(journalOf(file), 'utf8').length).toBeLessThan(400);
    expect(readState(file)).toEqual({ small: 39, pools: [0] });
    await df.close();
  });

  it('a last record cut short by a crash is skipped; a journal that follows another snapshot is not applied', async () => {
    const file = join(freshDir(), 'state.json');
    const { st, journaled } = fakeState();
    const df = new DataFile(file, journaled);
    await df.save();
    st.small = 5;
    await df.save();
    const journal = readFileSync(journalOf(file), 'utf8');
    writeFileSync(journalOf(file), `${journal}{"seq":9,"sections":{"small":6`);
    expect(readState(file)).toEqual({ small: 5, pools: [0] });
    writeFileSync(journalOf(file), `${journal}{"seq":9,"sec\n{"seq":10,"sections":{"small":6}}\n`);
    expect(() => readState(file)).toThrow(/journal .* is damaged at line 3/);
    // What a crash after a compaction set the journal aside leaves: before the new snapshot was in place,
    // the old snapshot and its journal set aside (read); after, the new snapshot and that journal (not read).
    rmSync(journalOf(file));
    writeFileSync(foldedOf(file), journal);
    expect(readState(file)).toEqual({ small: 5, pools: [0] });
    writeFileSync(file, JSON.stringify({ small: 9, pools: [4] }));
    expect(readState(file)).toEqual({ small: 9, pools: [4] });
    // A journal with records beside a snapshot it does not follow (edited while stopped): the start stops.
    writeFileSync(journalOf(file), journal);
    expect(() => readState(file)).toThrow(
      /journal .*\.journal holds 1 acknowledged change\(s\) that follow another version of the data file/,
    );
    await df.close();
  });

  it('ports: one section each and their order; a journal of an earlier version (the manager with its ports) still loads', () => {
    const file = join(freshDir(), 'state.json');
    const snapshot = JSON.stringify({ manager: { settings: { a: 1 }, ports: [{ port: 1 }, { port: 2 }], bans: [], har: [] } });
    writeFileSync(file, snapshot);
    const base = JSON.stringify({ base: createHash('sha256').update(snapshot).digest('hex') });
    const record = (sections: object, seq: number) => JSON.stringify({ seq, sections });
    const lines = [
      base,
      record({ 'port:2': { port: 2, country: 'gb' }, 'port:3': { port: 3 }, port_order: [3, 2] }, 1),
      record({ manager: { settings: { a: 2 }, bans: [] } }, 2),
    ];
    writeFileSync(journalOf(file), `${lines.join('\n')}\n`);
    expect(readState(file)).toEqual({
      manager: { settings: { a: 2 }, bans: [], har: [], ports: [{ port: 3 }, { port: 2, country: 'gb' }] },
    });
    // An earlier version wrote the manager whole, its ports with it.
    lines.push(record({ manager: { settings: { a: 3 }, ports: [{ port: 9 }], bans: [] } }, 3));
    writeFileSync(journalOf(file), `${lines.join('\n')}\n`);
    expect(readState(file)).toEqual({ manager: { settings: { a: 3 }, bans: [], har: [], ports: [{ port: 9 }] } });
  });

  it("port fields: a record holds the fields that changed and each port's list of fields; a port re-made on its number takes the fields its list names", () => {
    const file = join(freshDir(), 'state.json');
    const snapshot = JSON.stringify({
      manager: { settings: {}, ports: [{ port: 1, zone: 'a', rules: [1, 2] }, { port: 2 }], bans: [], har: [] },
    });
    writeFileSync(file, snapshot);
    const base = JSON.stringify({ base: createHash('sha256').update(snapshot).digest('hex') });
    const record = (sections: object, seq: number) => JSON.stringify({ seq, sections });
    const lines = [
      base,
      record({ 'port:1:zone': 'b', 'port:1:country': 'us', 'port:1': ['port', 'zone', 'rules', 'country'] }, 1),
      record({ 'port:2': ['port', 'ssl'], 'port:2:ssl': true }, 2),
      // Port 1 deleted, then made again without rules: its old rules are no field of it any more.
      record({ port_order: [2] }, 3),
      record({ 'port:1': ['port', 'zone'], port_order: [2, 1] }, 4),
    ];
    writeFileSync(journalOf(file), `${lines.join('\n')}\n`);
    expect(readState(file)).toEqual({
      manager: {
        settings: {},
        bans: [],
        har: [],
        ports: [
          { port: 2, ssl: true },
          { port: 1, zone: 'b' },
        ],
      },
    });
  });

  it("a Store's sections: each port field its own, made again only when its value is another; they put the state together again", () => {
    const store = new Store(defaultSeed());
    const rules = [{ url: 'a.com' }];
    store.putPort({ port: 24100, zone: 'static_zone', rules } as never);
    store.putPort({ port: 24101, zone: 'static_zone', rules } as never);
    const first = new Map(store.sectionsJson(true));
    expect(first.get('port:24100')).toBe(JSON.stringify(['port', 'zone', 'rules']));
    expect(first.get('port:24100:rules')).toBe(JSON.stringify(rules));
    const cfg = store.ports.get(24101) as Record<string, unknown>;
    store.putPort({ ...cfg, whitelist_ips: ['10.0.0.1'], zone: undefined } as never);
    const next = new Map(store.sectionsJson(false));
    // The same rules are the same text (not made again); the new field is there, the undefined one is not.
    expect(next.get('port:24101:rules')).toBe(first.get('port:24101:rules'));
    expect(next.get('port:24101')).toBe(JSON.stringify(['port', 'rules', 'whitelist_ips']));
    expect(next.has('port:24101:zone')).toBe(false);
    const state = fromSections(next) as { manager: { ports: unknown[] } };
    expect(state.manager.ports).toEqual(JSON.parse(JSON.stringify([...store.ports.values()])));
  });
});

describe('what is on disk is what memory holds, after every kind of change', () => {
  it('Zones, IPs released to the pool, traffic (usage, request logs, HAR), a deleted Zone: the data file read by another process equals the state', async () => {
    const file = join(freshDir(), 'state.json');
    const target = createServer((_req, res) => res.end('ok'));
    await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
    const targetUrl = `http://127.0.0.1:${(target.address() as AddressInfo).port}/x`;
    const seed = defaultSeed();
    seed.manager.ports = [];
    const s = await startSandbox({ ...free, dataFile: file, seed, networkPort: 0, proxyPorts: true });
    try {
      const { account, manager } = clients(s);
      /** The disk holds what memory holds (traffic saves after answering: wait for it, bounded). */
      const sameOnDisk = async (what: string) => {
        const disk = () => {
          const d = readState(file) as { saved_at?: string };
          delete d.saved_at;
          return d;
        };
        // Equal as values (the order of keys is not the state's business).
        for (let i = 0; i < 50 && !isDeepStrictEqual(disk(), JSON.parse(JSON.stringify(s.state()))); i++)
          await new Promise((r) => setTimeout(r, 20));
        expect(disk(), what).toEqual(s.state());
      };
      await account.createZone({ body: { zone: { name: 'disk_zone' }, plan: { type: 'static', ips: 2 } } });
      await sameOnDisk('createZone');
      const ips = (await account.listZoneIps({ params: { query: { zone: 'disk_zone' } } })).data as { ips: { ip: string }[] };
      await account.removeZoneIps({ body: { zone: 'disk_zone', ips: [ips.ips[0]?.ip as string] } });
      await sameOnDisk('removeZoneIps (released_at in the pool)');
      const auth = `Basic ${Buffer.from(`lum-customer-${s.credentials.customer}-zone-dc_zone_2:${s.credentials.zones.dc_zone_2?.[0]}`).toString('base64')}`;
      expect((await viaProxy(s.networkUrl as string, targetUrl, { auth })).status).toBe(200);
      await sameOnDisk('a request through the network (usage, req_logs)');
      const port = await freePort();
      expect((await manager.createProxy({ body: { proxy: { port, zone: 'dc_zone_2' } } })).response.status).toBe(200);
      expect((await viaProxy(`http://127.0.0.1:${port}`, targetUrl)).status).toBe(200);
      await sameOnDisk('a request through a port (HAR)');
      // A tunnel, logged with its authority as the URL, as the real manager logs one.
      const authority = new URL(targetUrl).host;
      await new Promise<void>((resolve, reject) => {
        const req = httpRequest({ host: '127.0.0.1', port, method: 'CONNECT', path: authority, agent: false });
        req.once('error', reject);
        req.once('connect', (_res, socket) => {
          socket.once('close', () => resolve());
          socket.end();
        });
        req.end();
      });
      for (let i = 0; i < 50 && !s.state().manager.har.some((e) => e.request.url === authority); i++)
        await new Promise((r) => setTimeout(r, 20));
      await sameOnDisk('a tunnel through a port (HAR)');
      // A port's configuration is a journal section of its own: changed, moved and deleted ports too.
      const other = await freePort();
      expect((await manager.createProxy({ body: { proxy: { port: other, zone: 'dc_zone_2' } } })).response.status).toBe(200);
      expect((await manager.updateProxy({ params: { path: { port } }, body: { proxy: { country: 'gb' } } })).response.status).toBe(200);
      await sameOnDisk('updateProxy');
      await manager.banIp({ params: { path: { port } }, body: { ip: '10.1.1.1' } });
      await sameOnDisk('banIp');
      expect((await manager.deleteProxy({ params: { path: { port: other } } })).response.status).toBe(204);
      await sameOnDisk('deleteProxy');
      await account.deleteZone({ body: { zone: 'disk_zone' } });
      await sameOnDisk('deleteZone');
      await account.deleteZone({ body: { zone: 'mob_zone' } });
      await sameOnDisk('deleteZone of a Zone with peers');
    } finally {
      await s.close();
      target.close();
    }
    // Another sandbox starts from the file: every entry of it passes the start's checks, the tunnel's too.
    const again = await startSandbox({ ...free, dataFile: file });
    try {
      expect(again.state().manager.har.map((e) => e.request.method)).toContain('CONNECT');
    } finally {
      await again.close();
    }
  });
});
