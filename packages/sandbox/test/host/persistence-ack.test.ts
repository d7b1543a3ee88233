import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startSandbox } from '../../src/index.js';
import { cli } from '../cli-sandbox.js';
import { bearer, C, raw } from '../helpers.js';

// The data file: a change is acknowledged only once it is on disk, and one sandbox holds a data file.

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
      expect(kept.status, kept.text).toBe(201);
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
