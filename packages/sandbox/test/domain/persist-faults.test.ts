import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import * as atomic from '../../src/domain/atomic.js';
import { DataFile, foldedOf, journalOf, readState } from '../../src/domain/persist.js';
import { fakeState, freshDir, openIn, stateFile } from './data-files.js';

// The data file (persist.ts) when one step of a compaction fails where the disk cannot be made to fail
// on its own (the journal's temp file, the rename of the new journal after the new snapshot is in
// place), when the journal reaches its compaction point exactly, and the file handles and timer it
// leaves behind. Beside test/domain/persist.test.ts.

vi.mock('../../src/domain/atomic.js', async (original) => {
  const real = await original<typeof import('../../src/domain/atomic.js')>();
  return { ...real, writeTemp: vi.fn(real.writeTemp), commitTemp: vi.fn(real.commitTemp) };
});

const real = await vi.importActual<typeof import('../../src/domain/atomic.js')>('../../src/domain/atomic.js');

const temps = (dir: string) => readdirSync(dir).filter((n) => n.includes('.tmp-'));

afterEach(() => {
  vi.mocked(atomic.writeTemp).mockReset().mockImplementation(real.writeTemp);
  vi.mocked(atomic.commitTemp).mockReset().mockImplementation(real.commitTemp);
  vi.useRealTimers();
});

describe('a compaction that fails half-way', () => {
  it("the journal's temp file cannot be written: the snapshot's temp file is removed, the error is the one that happened, the snapshot stays", async () => {
    const { dir, file, st, df } = stateFile();
    st.small = 1;
    await df.save();
    const snapshot = readFileSync(file, 'utf8');
    const calls = vi.mocked(atomic.writeTemp).mock.calls.length;
    // The next compaction (close) writes the snapshot's temp file, then fails on the journal's.
    vi.mocked(atomic.writeTemp).mockImplementation(async (target, text, seq) => {
      if (target === journalOf(file)) throw Object.assign(new Error('no space left'), { code: 'ENOSPC' });
      return real.writeTemp(target, text, seq);
    });
    st.small = 2;
    await expect(df.close()).rejects.toThrow('no space left');
    const made = vi
      .mocked(atomic.writeTemp)
      .mock.calls.slice(calls)
      .map(([target]) => target);
    expect(made).toEqual([file, journalOf(file)]);
    expect(temps(dir)).toEqual([]);
    expect(readFileSync(file, 'utf8')).toBe(snapshot);
    expect(readState(file)).toEqual({ small: 1 });
  });

  it("the new journal cannot be put in place after the new snapshot is: both temp files gone, the error is the rename's, the next save writes a snapshot", async () => {
    const { dir, file, st, df } = stateFile({ compactAt: 1 });
    await df.save();
    st.small = 1;
    await df.save(); // a record: the journal is past compactAt
    // The rename of the journal's temp file fails as a rename does in commitTemp: the temp file removed, the error thrown.
    let refused = 0;
    vi.mocked(atomic.commitTemp).mockImplementation(async (temp, target) => {
      if (target !== journalOf(file)) return real.commitTemp(temp, target);
      refused++;
      await rm(temp, { force: true });
      throw Object.assign(new Error('rename refused'), { code: 'EIO' });
    });
    st.small = 2;
    const full = st.full;
    await expect(df.save()).rejects.toThrow('rename refused');
    expect(refused).toBe(1);
    expect(st.full).toBe(full + 1);
    expect(temps(dir)).toEqual([]);
    // The new snapshot is in place, with no journal beside it (the old one set aside, not read: it follows the old snapshot).
    expect(readState(file)).toEqual({ small: 2 });
    vi.mocked(atomic.commitTemp).mockImplementation(real.commitTemp);
    // Nothing changed since, and still the next save writes the snapshot (and a journal that follows it).
    await df.save();
    expect(st.full).toBe(full + 2);
    st.small = 3;
    await df.save();
    expect(readState(file)).toEqual({ small: 3 });
    await df.close();
  });
});

describe('the compaction point', () => {
  it('a journal exactly at compactAt takes one more record; one byte past it, the next change is a snapshot', async () => {
    const file = join(freshDir(), 'state.json');
    const { st, journaled } = fakeState();
    // The header (`{"base":"<64 hex digits>"}` and its newline) and one record of `small` as one digit.
    const header = `${JSON.stringify({ base: '0'.repeat(64) })}\n`.length;
    const record = '{"seq":1,"sections":{"small":1}}\n'.length;
    const df = new DataFile(file, journaled, { compactAt: header + record });
    await df.save();
    const full = st.full;
    st.small = 1;
    await df.save();
    expect(readFileSync(journalOf(file), 'utf8')).toHaveLength(header + record);
    st.small = 2;
    await df.save(); // at compactAt, not past it: a record
    expect(st.full).toBe(full);
    expect(readFileSync(journalOf(file), 'utf8').split('\n').filter(Boolean)).toHaveLength(3);
    st.small = 3;
    await df.save(); // past it: a snapshot
    expect(st.full).toBe(full + 1);
    expect(readFileSync(journalOf(file), 'utf8')).toHaveLength(header);
    await df.close();
  });
});

describe('what a data file holds open', () => {
  it('one journal handle while it runs, however many compactions; none and no timer after close', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const { dir, file, st, journaled, df } = stateFile({ compactAt: 1 });
    expect(vi.getTimerCount()).toBe(1); // the fsync interval
    for (let i = 1; i <= 4; i++) {
      st.small = i;
      await df.save();
    }
    expect(st.full).toBeGreaterThanOrEqual(3);
    expect(openIn(dir)).toEqual([journalOf(file)]);
    await df.close();
    expect(openIn(dir)).toEqual([]);
    expect(vi.getTimerCount()).toBe(0);
    // `always` fsyncs each record itself: no timer at all.
    const always = new DataFile(join(dir, 'always.json'), journaled, { fsync: 'always' });
    expect(vi.getTimerCount()).toBe(0);
    await always.save();
    await always.close();
    expect(openIn(dir)).toEqual([]);
  });
});

describe('records and the journal they follow', () => {
  it('a record holds only the sections changed, several in one line; a snapshot asks for every section', async () => {
    const file = join(freshDir(), 'state.json');
    const st = { a: 0, b: 0, big: 'x' };
    const journaled = {
      // `big` is large: given only to a snapshot (`all`), as the Store gives its large sections when untouched.
      sectionsJson: (all: boolean): [string, string][] => [
        ['a', JSON.stringify(st.a)],
        ['b', JSON.stringify(st.b)],
        ...(all ? [['big', JSON.stringify(st.big)] as [string, string]] : []),
      ],
      snapshot: () => JSON.stringify(st),
    };
    const calls = vi.spyOn(journaled, 'sectionsJson');
    const df = new DataFile(file, journaled);
    await df.save();
    expect(calls.mock.calls).toEqual([[true]]);
    st.a = 1;
    st.b = 2;
    await df.save();
    st.b = 3;
    await df.save();
    expect(calls.mock.calls).toEqual([[true], [false], [false]]);
    const lines = readFileSync(journalOf(file), 'utf8').split('\n').filter(Boolean).slice(1);
    expect(lines).toEqual(['{"seq":1,"sections":{"a":1,"b":2}}', '{"seq":2,"sections":{"b":3}}']);
    expect(readState(file)).toEqual({ a: 1, b: 3, big: 'x' });
    await df.close();
  });

  it('a journal with records that follows another snapshot stops the start, naming both files, how many changes and what to do', async () => {
    const { file, st, df } = stateFile();
    await df.save();
    st.small = 1;
    await df.save();
    st.small = 2;
    await df.save();
    // The snapshot edited while the sandbox was stopped: its SHA-256 is no longer the journal's first line.
    writeFileSync(file, '{"small":7}');
    const journal = journalOf(file);
    expect(() => readState(file)).toThrow(
      `The journal ${journal} holds 2 acknowledged change(s) that follow another version of the data file ${file}: ` +
        `it was edited or replaced while the sandbox was stopped, and starting would lose them. To keep ${file} as it is ` +
        `and drop those changes, remove ${journal}; to keep them, put back the version of ${file} they follow ` +
        `(its SHA-256 is in the journal's first line), start and stop the sandbox once, then edit ${file} again`,
    );
    await df.close().catch(() => undefined);
  });

  it('a journal whose folder was removed while it runs refuses the record (ENOENT, "the data file was removed"); the next save writes a snapshot', async () => {
    const dir = join(freshDir(), 'data');
    mkdirSync(dir);
    const file = join(dir, 'state.json');
    const { st, journaled } = fakeState();
    const df = new DataFile(file, journaled);
    await df.save();
    rmSync(dir, { recursive: true });
    st.small = 1;
    const full = st.full;
    await expect(df.save()).rejects.toMatchObject({ message: 'the data file was removed', code: 'ENOENT' });
    expect(st.full).toBe(full);
    mkdirSync(dir);
    await df.save();
    expect(st.full).toBe(full + 1);
    expect(readState(file)).toEqual({ small: 1 });
    await df.close();
  });

  it('callers queued behind a write that fails are refused too (their change was not written); the next save starts afresh', async () => {
    const { file, st, df } = stateFile({ compactAt: 1 });
    await df.save();
    st.small = 1;
    await df.save(); // a record: the next write is a compaction
    // The journal cannot be set aside: a folder that is not empty stands where it goes.
    mkdirSync(join(foldedOf(file), 'x'), { recursive: true });
    st.small = 2;
    const first = df.save();
    await new Promise((resolve) => setImmediate(resolve));
    st.small = 3;
    const queued = df.save();
    expect(queued).not.toBe(first);
    const [a, b] = await Promise.allSettled([first, queued]);
    expect(a.status).toBe('rejected');
    expect(b.status).toBe('rejected');
    expect(readState(file)).toEqual({ small: 1 });
    rmSync(foldedOf(file), { recursive: true });
    await df.save();
    expect(readState(file)).toEqual({ small: 3 });
    await df.close();
  });
});
