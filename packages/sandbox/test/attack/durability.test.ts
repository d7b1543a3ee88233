import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '@zone-api/testkit';
import { afterAll, describe, expect, it } from 'vitest';
import { journalOf, readState } from '../../src/domain/persist.js';
import { defaultSeed, startSandbox } from '../../src/index.js';
import { bearer, raw } from '../helpers.js';

// Durability under a hostile or unlucky operator: a snapshot edited while its journal still holds
// acknowledged changes once started without a word and dropped them; a `null` journal line stopped
// the start with "Cannot read properties of null"; a failed save left listeners unlike the state.
const work = mkdtempSync(join(tmpdir(), 'zone-api-durability-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
const free = { accountPort: 0, managerPort: 0 } as const;
const zoneBody = (name: string) => ({ zone: { name }, plan: { type: 'static', ips_type: 'shared' } });

/** A data file as a running sandbox leaves it (snapshot and journal, the zone `kept_zone` only in the journal), copied into `dir`. */
async function runningCopy(dir: string): Promise<string> {
  mkdirSync(dir);
  const live = join(dir, 'live.json');
  const s = await startSandbox({ ...free, dataFile: live });
  try {
    const r = await raw(s.accountUrl, 'POST', '/api/zone', { headers: bearer, body: zoneBody('kept_zone') });
    expect(r.status, r.text).toBe(201);
    const file = join(dir, 'state.json');
    copyFileSync(live, file);
    copyFileSync(journalOf(live), journalOf(file));
    expect(readFileSync(journalOf(file), 'utf8')).toContain('kept_zone');
    return file;
  } finally {
    await s.close();
  }
}

const zones = (state: unknown) => (state as { account: { zones: { name: string }[] } }).account.zones.map((z) => z.name);

describe('a journal beside a snapshot it does not follow', () => {
  it('a re-indented snapshot: the start stops naming both files and how to proceed; nothing is dropped silently', async () => {
    const file = await runningCopy(join(work, 'edited'));
    // Untouched, the copy starts with the journal's change.
    expect(zones(readState(file))).toContain('kept_zone');
    writeFileSync(file, JSON.stringify(JSON.parse(readFileSync(file, 'utf8')), null, 4));
    const refused = startSandbox({ ...free, dataFile: file });
    await expect(refused).rejects.toThrow(
      `The journal ${journalOf(file)} holds 1 acknowledged change(s) that follow another version of the data file ${file}`,
    );
    await expect(refused).rejects.toThrow(/remove .*\.journal/);
    // The operator's choice: keep the edit, drop the journal.
    rmSync(journalOf(file));
    const s = await startSandbox({ ...free, dataFile: file });
    try {
      expect(zones(s.state())).not.toContain('kept_zone');
    } finally {
      await s.close();
    }
  });
});

describe('a journal line that is not a record', () => {
  it('null, a number, a record without sections: the start stops naming the file and the line', async () => {
    const file = await runningCopy(join(work, 'null'));
    const journal = readFileSync(journalOf(file), 'utf8');
    const lines = journal.trimEnd().split('\n').length;
    for (const bad of ['null', '42', '{"seq":7}', '{"seq":7,"sections":null}']) {
      writeFileSync(journalOf(file), `${journal}${bad}\n{"seq":8,"sections":{}}\n`);
      await expect(startSandbox({ ...free, dataFile: file })).rejects.toThrow(
        `The journal ${journalOf(file)} is damaged at line ${lines + 1}: ${bad} is not a record`,
      );
    }
    // Last, too: a line that parses was written whole, so it is no crash's cut.
    writeFileSync(journalOf(file), `${journal}null\n`);
    expect(() => readState(file)).toThrow(`is damaged at line ${lines + 1}`);
  });
});

/** Whether something accepts TCP connections on a loopback port. */
const listens = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.setTimeout(2000, () => socket.destroy());
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
    socket.once('close', () => resolve(false));
  });

describe('a save that fails', () => {
  it('leaves the listeners as the state it went back to: a created port closes, a deleted one listens again', async () => {
    const dir = join(work, 'disk');
    mkdirSync(dir);
    const s = await startSandbox({ ...free, dataFile: join(dir, 'state.json'), networkPort: 0, proxyPorts: true, freeProxyPorts: false });
    try {
      const [kept, lost] = [await freePort(), await freePort()];
      const m = s.managerUrl;
      expect((await raw(m, 'POST', '/api/proxies', { body: { proxy: { port: kept } } })).status).toBe(200);
      expect(await listens(kept)).toBe(true);
      rmSync(dir, { recursive: true, force: true }); // every write now fails
      const created = await raw(m, 'POST', '/api/proxies', { body: { proxy: { port: lost } } });
      expect(created.status, created.text).toBe(503);
      expect(s.state().manager.ports.some((p) => p.port === lost)).toBe(false);
      expect(await listens(lost)).toBe(false);
      const deleted = await raw(m, 'DELETE', `/api/proxies/${kept}`);
      expect(deleted.status, deleted.text).toBe(503);
      expect(s.state().manager.ports.some((p) => p.port === kept)).toBe(true);
      expect(await listens(kept)).toBe(true);
      mkdirSync(dir);
    } finally {
      await s.close().catch(() => {});
    }
  });
});

describe('a journal record holds what changed, not the whole state', () => {
  it('20 ports of 1.3 MB each: a settings change, a whitelist every port follows, a ban, an update and a delete of one port each write a record of kilobytes; a restart has them all', async () => {
    const dir = join(work, 'large');
    mkdirSync(dir);
    const file = join(dir, 'state.json');
    const seed = defaultSeed();
    const rules = Array.from({ length: 500 }, (_, i) => ({ url: `example${i}.com`, action: { note: 'x'.repeat(2600) } }));
    const base = 26_000;
    seed.manager.ports = Array.from({ length: 20 }, (_, i) => ({ port: base + i, zone: 'static_zone', rules }) as never);
    const s = await startSandbox({ ...free, dataFile: file, seed });
    const records = () => readFileSync(journalOf(file), 'utf8').trimEnd().split('\n').slice(1);
    const lastRecord = () => records().at(-1) ?? '';
    try {
      const m = s.managerUrl;
      const before = records().length;
      const settings = await raw(m, 'PUT', '/api/settings', { body: { har_limit: 2048 } });
      expect(settings.status, settings.text).toBe(200);
      expect(records()).toHaveLength(before + 1);
      // Written whole, the 20 ports alone were 26 MB in every record.
      expect(lastRecord().length).toBeLessThan(64 * 1024);
      expect(lastRecord()).toContain('"har_limit":2048');
      // The default whitelist reaches every port's whitelist_ips: each port's field, not its rules.
      const whitelist = await raw(m, 'PUT', '/api/settings', { body: { whitelist_ips: ['10.1.2.3'] } });
      expect(whitelist.status, whitelist.text).toBe(200);
      expect(lastRecord().length).toBeLessThan(64 * 1024);
      const followed = Object.keys(JSON.parse(lastRecord()).sections).filter((k) => k.endsWith(':whitelist_ips'));
      expect(followed).toHaveLength(20);
      const added = await raw(m, 'POST', '/api/add_whitelist_ip', { body: { ip: '10.4.5.6' } });
      expect(added.status, added.text).toBe(200);
      expect(lastRecord().length).toBeLessThan(64 * 1024);
      expect(lastRecord()).toContain('10.4.5.6');
      const ban = await raw(m, 'POST', `/api/proxies/${base + 1}/banip`, { body: { ip: '10.9.8.7' } });
      expect(ban.status, ban.text).toBe(204);
      expect(lastRecord().length).toBeLessThan(64 * 1024);
      expect(lastRecord()).toContain('10.9.8.7');
      const updated = await raw(m, 'PUT', `/api/proxies/${base + 3}`, { body: { proxy: { country: 'us' } } });
      expect(updated.status, updated.text).toBe(200);
      // One field of one port changed: that field (and the port's list of fields), not its 1.3 MB of rules.
      expect(lastRecord().length).toBeLessThan(64 * 1024);
      expect(JSON.parse(lastRecord()).sections).toHaveProperty([`port:${base + 3}:country`], 'us');
      const rewritten = await raw(m, 'PUT', `/api/proxies/${base + 4}`, { body: { proxy: { rules: rules.slice(0, 2) } } });
      expect(rewritten.status, rewritten.text).toBe(200);
      expect(JSON.parse(lastRecord()).sections[`port:${base + 4}:rules`]).toHaveLength(2);
      const deleted = await raw(m, 'DELETE', `/api/proxies/${base + 7}`);
      expect(deleted.status, deleted.text).toBe(204);
      expect(lastRecord().length).toBeLessThan(64 * 1024);
      const onDisk = readState(file) as { saved_at?: string; manager: { ports: { port: number }[] } };
      delete onDisk.saved_at;
      expect(onDisk.manager.ports.map((p) => p.port)).toEqual(s.state().manager.ports.map((p) => p.port));
      expect(onDisk).toEqual(JSON.parse(JSON.stringify(s.state())));
    } finally {
      await s.close();
    }
    const again = await startSandbox({ ...free, dataFile: file });
    try {
      const ports = again.state().manager.ports;
      expect(ports).toHaveLength(19);
      expect(ports.find((p) => p.port === base + 3)?.country).toBe('us');
      expect(ports.find((p) => p.port === base + 4)?.rules).toHaveLength(2);
      expect(ports.every((p) => p.whitelist_ips?.includes('10.1.2.3') && p.whitelist_ips.includes('10.4.5.6'))).toBe(true);
      expect(again.state().manager.settings.har_limit).toBe(2048);
      expect(again.state().manager.bans.map((b) => b.ip)).toContain('10.9.8.7');
    } finally {
      await again.close();
    }
  }, 120_000);
});
