import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { createAccountClient } from '@zone-api/account-client';
import { createManagerClient } from '@zone-api/manager-client';
import { freePort, viaProxy } from '@zone-api/testkit';
import { describe, expect, it } from 'vitest';
import { readState } from '../../src/domain/persist.js';
import { defaultSeed, startSandbox } from '../../src/index.js';
import { freshDir } from '../domain/data-files.js';

const free = { accountPort: 0, managerPort: 0 } as const;
const TOKEN = 'sandbox-token-0001';

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

describe('what is on disk is what memory holds, after every kind of change', () => {
  it('Zones, IPs released to the pool, traffic (usage, request logs, HAR), a deleted Zone: the data file read by another process equals the state', async () => {
    const file = join(freshDir(), 'state.json');
    const target = createServer((_req, res) => res.end('ok'));
    await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
    const targetUrl = `http://127.0.0.1:${(target.address() as AddressInfo).port}/x`;
    const seed = defaultSeed();
    seed.manager.ports = [];
    const s = await startSandbox({ ...free, dataFile: file, seed, networkPort: 0, proxyPorts: true, freeProxyPorts: false });
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
