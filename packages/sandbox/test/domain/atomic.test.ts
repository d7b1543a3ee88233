import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { commitTemp, tempPrefix, writeTemp } from '../../src/domain/atomic.js';
import { fileHandleProto, freshDir, openIn, PROBE } from './data-files.js';

// Files written so that a crash leaves the old text or the new (src/domain/atomic.ts): the temp file
// beside the target, and its rename over it.

const listed = (dir: string) => readdirSync(dir).filter((n) => n !== PROBE);

afterEach(() => {
  vi.restoreAllMocks();
});

describe('writeTemp', () => {
  it("writes the text, fsynced, to a temp file beside the target named by the process and `seq`, the owner's alone; the target is untouched", async () => {
    const dir = freshDir();
    const file = join(dir, 'x.json');
    writeFileSync(file, 'old');
    const sync = vi.spyOn(await fileHandleProto(dir), 'sync');
    const temp = await writeTemp(file, '{"v":1}', 7);
    expect(temp).toBe(join(dir, `.x.json.tmp-${process.pid}-7`));
    expect(tempPrefix(file)).toBe('.x.json.tmp-');
    expect(readFileSync(temp, 'utf8')).toBe('{"v":1}');
    expect(statSync(temp).mode & 0o777).toBe(0o600);
    expect(sync).toHaveBeenCalledTimes(1);
    expect(readFileSync(file, 'utf8')).toBe('old');
    expect(openIn(dir)).toEqual([]);
  });

  it('a write that fails: the temp file removed, its handle closed, the error thrown', async () => {
    const dir = freshDir();
    vi.spyOn(await fileHandleProto(dir), 'sync').mockRejectedValueOnce(Object.assign(new Error('disk gone'), { code: 'EIO' }));
    await expect(writeTemp(join(dir, 'x.json'), 'text', 1)).rejects.toThrow('disk gone');
    expect(listed(dir)).toEqual([]);
    expect(openIn(dir)).toEqual([]);
  });
});

describe('commitTemp', () => {
  it('renames the temp file over the target and fsyncs the folder: the new text, no temp file, nothing held open', async () => {
    const dir = freshDir();
    const file = join(dir, 'x.json');
    writeFileSync(file, '{"v":1}');
    const sync = vi.spyOn(await fileHandleProto(dir), 'sync');
    const temp = await writeTemp(file, '{"v":2}', 2);
    sync.mockClear();
    await commitTemp(temp, file);
    expect(readFileSync(file, 'utf8')).toBe('{"v":2}');
    expect(listed(dir)).toEqual(['x.json']);
    expect(sync).toHaveBeenCalledTimes(1); // the folder's
    expect(openIn(dir)).toEqual([]);
  });

  it('a rename that fails: the temp file removed, the error thrown, the target as it was', async () => {
    const dir = freshDir();
    const target = join(dir, 'x.json');
    mkdirSync(join(target, 'inside'), { recursive: true }); // a folder that is not empty: no file is renamed over it
    const temp = await writeTemp(target, 'text', 3);
    await expect(commitTemp(temp, target)).rejects.toThrow(/EISDIR|ENOTEMPTY|EEXIST/);
    expect(existsSync(temp)).toBe(false);
    expect(readdirSync(target)).toEqual(['inside']);
  });

  it("a folder that cannot be fsynced (some file systems refuse): still committed, the folder's handle closed", async () => {
    const dir = freshDir();
    const file = join(dir, 'x.json');
    const temp = await writeTemp(file, 'new', 4);
    const sync = vi
      .spyOn(await fileHandleProto(dir), 'sync')
      .mockRejectedValue(Object.assign(new Error('not supported'), { code: 'EINVAL' }));
    await commitTemp(temp, file);
    expect(sync).toHaveBeenCalledTimes(1);
    expect(readFileSync(file, 'utf8')).toBe('new');
    expect(openIn(dir)).toEqual([]);
  });
});
