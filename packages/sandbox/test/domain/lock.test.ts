import { existsSync, mkdtempSync, readFileSync, realpathSync, statSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { lockDataFile } from '../../src/domain/lock.js';

// The data file's lock (src/domain/lock.ts): one sandbox at a time on a data file.

const freshFile = () => join(realpathSync(mkdtempSync(join(tmpdir(), 'zone-api-lock-'))), 'state.json');
/** A process id no process has (above Linux's largest `pid_max`). */
const GONE = 2 ** 22 + 1;

afterEach(() => {
  vi.restoreAllMocks();
});

describe('lockDataFile', () => {
  it("writes `<file>.lock` naming this process, its host and when, the owner's alone; release removes it and the file can be locked again", () => {
    const file = freshFile();
    const before = Date.now();
    const release = lockDataFile(file);
    const lock = `${file}.lock`;
    const owner = JSON.parse(readFileSync(lock, 'utf8'));
    expect(owner).toEqual({ pid: process.pid, host: hostname(), started: expect.any(String) });
    expect(Date.parse(owner.started)).toBeGreaterThanOrEqual(before - 1000);
    expect(readFileSync(lock, 'utf8').endsWith('}\n')).toBe(true);
    expect(statSync(lock).mode & 0o777).toBe(0o600);
    release();
    expect(existsSync(lock)).toBe(false);
    expect(() => release()).not.toThrow(); // released twice, or its lock removed by hand: nothing to do
    lockDataFile(file)();
    expect(existsSync(lock)).toBe(false);
  });

  it('a second lock while a live process holds it fails, naming the holder and the lock file; the lock stays', () => {
    const file = freshFile();
    const release = lockDataFile(file);
    const text = readFileSync(`${file}.lock`, 'utf8');
    const { started } = JSON.parse(text);
    expect(() => lockDataFile(file)).toThrow(
      `The data file ${file} is in use by another sandbox (pid ${process.pid} on ${hostname()}, since ${started}); stop it, or remove ${file}.lock if that process is gone`,
    );
    expect(readFileSync(`${file}.lock`, 'utf8')).toBe(text);
    release();
  });

  it('a process that exists but is not ours to signal (EPERM) is alive: the lock is not taken', () => {
    const file = freshFile();
    writeFileSync(`${file}.lock`, JSON.stringify({ pid: GONE, host: hostname(), started: 'then' }));
    const kill = vi.spyOn(process, 'kill').mockImplementation(() => {
      throw Object.assign(new Error('not permitted'), { code: 'EPERM' });
    });
    expect(() => lockDataFile(file)).toThrow(`in use by another sandbox (pid ${GONE} on ${hostname()}, since then)`);
    expect(kill).toHaveBeenCalledWith(GONE, 0);
  });

  it('a lock left by a process of this machine that is gone, or cut short, is taken over', () => {
    const file = freshFile();
    for (const left of [JSON.stringify({ pid: GONE, host: hostname(), started: 'then' }), '{"pid":', '{}']) {
      writeFileSync(`${file}.lock`, left);
      const release = lockDataFile(file);
      expect(JSON.parse(readFileSync(`${file}.lock`, 'utf8')).pid, left).toBe(process.pid);
      release();
    }
  });

  it('a lock of another machine is never taken over, even when its pid is gone here', () => {
    const file = freshFile();
    writeFileSync(`${file}.lock`, JSON.stringify({ pid: GONE, host: 'elsewhere', started: 'then' }));
    expect(() => lockDataFile(file)).toThrow(`in use by another sandbox (pid ${GONE} on elsewhere, since then)`);
  });

  it('a lock that cannot be written (no such folder) fails naming the data file and why', () => {
    const file = join(freshFile(), 'missing', 'state.json');
    expect(() => lockDataFile(file)).toThrow(new RegExp(`^Cannot lock the data file ${file}: ENOENT`));
  });

  it('a lock another process takes again after each removal: two tries, then a refusal naming the lock file', async () => {
    vi.resetModules();
    const fs = await vi.importActual<typeof import('node:fs')>('node:fs');
    let writes = 0;
    vi.doMock('node:fs', () => ({
      ...fs,
      writeFileSync: () => {
        writes++;
        throw Object.assign(new Error('exists'), { code: 'EEXIST' });
      },
      readFileSync: () => '{}',
      rmSync: () => undefined,
    }));
    try {
      const { lockDataFile: racing } = await import('../../src/domain/lock.js');
      const file = join(tmpdir(), 'taken', 'state.json');
      expect(() => racing(file)).toThrow(`Cannot lock the data file ${file}: another process keeps taking ${file}.lock`);
      expect(writes).toBe(2);
    } finally {
      vi.doUnmock('node:fs');
      vi.resetModules();
    }
  });
});
