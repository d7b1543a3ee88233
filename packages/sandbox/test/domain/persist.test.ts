import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DataFile, foldedOf, journalOf, readState, removeStaleTemps } from '../../src/domain/persist.js';
import { fakeState, fileHandleProto, freshDir, records, stateFile } from './data-files.js';

// The data file's unit behaviour (persist.ts) beside test/host/persistence.test.ts (whole sandboxes) and the
// crash suites: removeStaleTemps, when it fsyncs, how a failed compaction leaves the folder,
// and how save() gathers and queues its callers.

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

describe('removeStaleTemps', () => {
  it('removes only the temp files of the data file and of its journal, and names them; a missing folder: none', () => {
    const dir = freshDir();
    const file = join(dir, 'state.json');
    const names = ['.state.json.tmp-1-1', '.state.json.journal.tmp-1-2'];
    const kept = ['state.json', 'state.json.journal', '.other.json.tmp-1-1', 'x.state.json.tmp-1'];
    for (const n of [...names, ...kept]) writeFileSync(join(dir, n), 'x');
    expect(removeStaleTemps(file).sort()).toEqual([...names].sort());
    expect(readdirSync(dir).sort()).toEqual([...kept].sort());
    expect(removeStaleTemps(file)).toEqual([]);
    expect(removeStaleTemps(join(dir, 'missing', 'state.json'))).toEqual([]);
  });
});

describe('DataFile', () => {
  it('by default the journal is fsynced once a second, only when a record was written since; `always` fsyncs each record and runs no timer', async () => {
    const dir = freshDir();
    const proto = await fileHandleProto(dir);
    const datasync = vi.spyOn(proto, 'datasync');
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const file = join(dir, 'state.json');
    const { st, journaled } = fakeState();
    const df = new DataFile(file, journaled);
    await df.save(); // a snapshot: fsynced as it is written, nothing left to fsync
    vi.advanceTimersByTime(1000);
    expect(datasync).toHaveBeenCalledTimes(0);
    st.small = 1;
    await df.save();
    expect(datasync).toHaveBeenCalledTimes(0); // not before the answer
    vi.advanceTimersByTime(999);
    expect(datasync).toHaveBeenCalledTimes(0);
    vi.advanceTimersByTime(1);
    expect(datasync).toHaveBeenCalledTimes(1);
    vi.advanceTimersByTime(3000);
    expect(datasync).toHaveBeenCalledTimes(1); // nothing new
    await df.close();
    st.small = 2;
    vi.advanceTimersByTime(3000);
    expect(datasync).toHaveBeenCalledTimes(1); // the timer stops on close

    datasync.mockClear();
    const file2 = join(dir, 'always.json');
    const always = new DataFile(file2, journaled, { fsync: 'always' });
    await always.save();
    for (let i = 0; i < 3; i++) {
      st.small = 10 + i;
      await always.save();
    }
    expect(datasync).toHaveBeenCalledTimes(3);
    vi.advanceTimersByTime(5000);
    expect(datasync).toHaveBeenCalledTimes(3);
    expect(readState(file2)).toEqual({ small: 12 });
    await always.close();
  });

  it('a failed fsync of the journal is reported on stderr, naming the journal and the error code', async () => {
    const dir = freshDir();
    const proto = await fileHandleProto(dir);
    vi.spyOn(proto, 'datasync').mockRejectedValue(Object.assign(new Error('disk gone'), { code: 'EIO' }));
    const errors = vi.spyOn(console, 'error').mockImplementation(() => {});
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const file = join(dir, 'state.json');
    const { st, journaled } = fakeState();
    const df = new DataFile(file, journaled);
    await df.save();
    st.small = 1;
    await df.save();
    vi.advanceTimersByTime(1000);
    await vi.waitFor(() => expect(errors).toHaveBeenCalledTimes(1));
    expect(errors).toHaveBeenCalledWith(`[zone-api sandbox] the journal ${journalOf(file)} could not be fsynced (EIO)`);
    vi.advanceTimersByTime(1000);
    expect(errors).toHaveBeenCalledTimes(1); // reported once: nothing written since
    vi.useRealTimers();
    await df.close();
  });

  it('`always`: a record whose fsync fails is refused, the journal cut back to the acknowledged records, and the next save writes a snapshot', async () => {
    const dir = freshDir();
    const proto = await fileHandleProto(dir);
    const datasync = vi.spyOn(proto, 'datasync');
    const file = join(dir, 'state.json');
    const { st, journaled } = fakeState();
    const df = new DataFile(file, journaled, { fsync: 'always' });
    await df.save();
    st.small = 1;
    await df.save();
    const before = readFileSync(journalOf(file), 'utf8');
    datasync.mockRejectedValueOnce(Object.assign(new Error('disk gone'), { code: 'EIO' }));
    st.small = 2;
    await expect(df.save()).rejects.toThrow('disk gone');
    expect(readFileSync(journalOf(file), 'utf8')).toBe(before);
    expect(df.acknowledged()).toEqual({ small: 1 });
    const full = st.full;
    // The snapshot it must now write fails too (the journal cannot be set aside): the one after tries again.
    mkdirSync(join(foldedOf(file), 'x'), { recursive: true });
    st.small = 3;
    await expect(df.save()).rejects.toThrow();
    expect(st.full).toBe(full + 1);
    rmSync(foldedOf(file), { recursive: true });
    await df.save();
    expect(st.full).toBe(full + 2);
    expect(records(file)).toEqual([]);
    expect(readState(file)).toEqual({ small: 3 });
    await df.close();
  });

  it('a compaction that fails leaves no temp file and the snapshot as it was, and the next save tries the snapshot again', async () => {
    const { dir, file, st, df } = stateFile({ compactAt: 1 });
    st.small = 1;
    await df.save();
    st.small = 2;
    await df.save(); // a record: the journal is now past compactAt
    const snapshot = readFileSync(file, 'utf8');
    // The journal cannot be set aside: a folder that is not empty stands where it goes.
    mkdirSync(foldedOf(file));
    writeFileSync(join(foldedOf(file), 'x'), 'x');
    st.small = 3;
    const full = st.full;
    await expect(df.save()).rejects.toThrow();
    expect(st.full).toBe(full + 1);
    expect(readdirSync(dir).sort()).toEqual(['state.json', 'state.json.journal', 'state.json.journal.folded'].sort());
    expect(readFileSync(file, 'utf8')).toBe(snapshot);
    expect(readState(file)).toEqual({ small: 2 });
    expect(df.acknowledged()).toEqual({ small: 2 });
    rmSync(foldedOf(file), { recursive: true });
    // Even with nothing changed since, the next write is the snapshot it could not write.
    await df.save();
    expect(st.full).toBe(full + 2);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ small: 3 });
    expect(records(file)).toEqual([]);
    await df.close();
  });

  it('a snapshot that cannot be written at all (its folder gone) is refused and tried again by the next save', async () => {
    const dir = join(freshDir(), 'data');
    mkdirSync(dir);
    const file = join(dir, 'state.json');
    const { st, journaled } = fakeState();
    const df = new DataFile(file, journaled);
    rmSync(dir, { recursive: true });
    await expect(df.save()).rejects.toThrow(/ENOENT/);
    expect(df.acknowledged()).toBeUndefined();
    mkdirSync(dir);
    st.small = 5;
    await df.save();
    expect(readdirSync(dir).sort()).toEqual(['state.json', 'state.json.journal']);
    expect(readState(file)).toEqual({ small: 5 });
    await df.close();
  });

  it('save(): callers of one turn share one write; a caller after the write took the state waits for the next one; nothing changed, no record', async () => {
    const file = join(freshDir(), 'state.json');
    const { st, journaled } = fakeState();
    const sections = vi.spyOn(journaled, 'sectionsJson');
    const df = new DataFile(file, journaled);
    await df.save();
    sections.mockClear();
    st.small = 1;
    const first = df.save();
    const same = df.save();
    expect(same).toBe(first); // gathering: the running write carries it
    await new Promise((resolve) => setImmediate(resolve));
    // The running write has taken the state: a change now needs a write of its own.
    st.small = 2;
    const later = df.save();
    expect(later).not.toBe(first);
    const alsoLater = df.save();
    expect(alsoLater).toBe(later); // one queued write for all who come while one runs
    await Promise.all([first, same, later, alsoLater]);
    expect(records(file).map((r) => r.sections)).toEqual([{ small: 1 }, { small: 2 }]);
    expect(records(file).map((r) => r.seq)).toEqual([1, 2]);
    expect(sections).toHaveBeenCalledTimes(2);
    // Nothing changed: no record.
    await df.save();
    expect(records(file)).toHaveLength(2);
    // After it all, a save starts a write of its own again.
    st.small = 3;
    await df.save();
    expect(records(file).map((r) => r.sections)).toEqual([{ small: 1 }, { small: 2 }, { small: 3 }]);
    // The journal's first line names the snapshot it follows by the SHA-256 of its text, in hex.
    const header = readFileSync(journalOf(file), 'utf8').split('\n', 1)[0];
    expect(header).toBe(JSON.stringify({ base: createHash('sha256').update(readFileSync(file, 'utf8')).digest('hex') }));
    st.small = 4;
    const full = st.full;
    await df.close();
    // Close writes a last snapshot with every change, then removes the journal.
    expect(st.full).toBe(full + 1);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ small: 4 });
    expect(existsSync(journalOf(file))).toBe(false);
    expect(existsSync(foldedOf(file))).toBe(false);
  });

  it('`always`: a caller who comes while a record is being fsynced waits for a write of its own, as do all who come with it', async () => {
    const file = join(freshDir(), 'state.json');
    const { st, journaled } = fakeState();
    const df = new DataFile(file, journaled, { fsync: 'always' });
    await df.save();
    st.small = 1;
    const first = df.save();
    expect(df.save()).toBe(first);
    // The write has taken the state and waits for its fsync.
    await new Promise((resolve) => setImmediate(resolve));
    st.small = 2;
    const later = df.save();
    expect(later).not.toBe(first);
    expect(df.save()).toBe(later);
    await first;
    expect(records(file).map((r) => r.sections)).toEqual([{ small: 1 }]);
    await later;
    expect(records(file).map((r) => r.sections)).toEqual([{ small: 1 }, { small: 2 }]);
    await df.close();
  });

  it('the default compaction point: at least 1 MiB of journal, else four times the snapshot', async () => {
    const file = join(freshDir(), 'state.json');
    const st = { big: '' };
    const journaled = {
      sectionsJson: (): [string, string][] => [['big', JSON.stringify(st.big)]],
      snapshot: () => JSON.stringify({ big: st.big }),
    };
    const df = new DataFile(file, journaled);
    await df.save();
    const snap = () => readFileSync(file, 'utf8');
    // Records of 100 KiB: the journal passes 1 MiB after 11, and the snapshot is only then rewritten.
    let compactedAt = 0;
    for (let i = 1; i <= 14 && !compactedAt; i++) {
      st.big = String(i % 10).repeat(100 * 1024);
      await df.save();
      if (snap().includes(st.big)) compactedAt = i;
    }
    expect(compactedAt).toBe(12);
    // Now the snapshot is 100 KiB: still 1 MiB of journal (more than 4 × 100 KiB) before the next.
    let next = 0;
    for (let i = 1; i <= 14 && !next; i++) {
      st.big = String.fromCharCode(97 + (i % 20)).repeat(100 * 1024);
      await df.save();
      if (snap().includes(st.big)) next = i;
    }
    expect(next).toBe(12);
    // Records of 400 KiB: past 1 MiB after 3, the snapshot then 400 KiB.
    let third = 0;
    for (let i = 1; i <= 6 && !third; i++) {
      st.big = String.fromCharCode(65 + i).repeat(400 * 1024);
      await df.save();
      if (snap().includes(st.big)) third = i;
    }
    expect(third).toBe(4);
    // Now four times the snapshot (1.6 MiB) is the point: 16 records of 100 KiB, the 17th compacts.
    let fourth = 0;
    for (let i = 1; i <= 20 && !fourth; i++) {
      st.big = String.fromCharCode(75 + i).repeat(100 * 1024);
      await df.save();
      if (snap().includes(st.big)) fourth = i;
    }
    expect(fourth).toBe(17);
    await df.close();
  });
});
