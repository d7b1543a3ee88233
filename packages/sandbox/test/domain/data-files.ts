import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, readlinkSync, realpathSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { DataFile, type DataFileOptions, journalOf } from '../../src/domain/persist.js';

// What the unit tests of the data file (persist*.test.ts) and of its writes (atomic.test.ts) share.

/** A new empty folder, by its real path (as /proc names the files open in it). */
export const freshDir = () => realpathSync(mkdtempSync(join(tmpdir(), 'zone-api-persist-')));

/**
 * A state of one section, `small`, and a snapshot that counts how often it was taken. With `large`, a
 * second section, `pools`, is written only when touched (as the Store's large sections) or with all.
 */
export function fakeState(large = false) {
  const st = { small: 0, pools: [0], touched: false, full: 0 };
  const journaled = {
    sectionsJson: (all = false): [string, string][] => {
      const out: [string, string][] = [['small', JSON.stringify(st.small)]];
      if (large && (all || st.touched)) out.push(['pools', JSON.stringify(st.pools)]);
      st.touched = false;
      return out;
    },
    snapshot: () => {
      st.full++;
      return JSON.stringify(large ? { small: st.small, pools: st.pools } : { small: st.small });
    },
  };
  return { st, journaled };
}

/** A data file `state.json` in a new folder, over a fakeState of one section (`options`: the DataFile's). */
export function stateFile(options?: DataFileOptions) {
  const dir = freshDir();
  const file = join(dir, 'state.json');
  const { st, journaled } = fakeState();
  return { dir, file, st, journaled, df: new DataFile(file, journaled, options) };
}

/** Writes `snapshot` as the data file `file` and a journal that follows it with `records` (their sections), numbered from 1. */
export function writeWithJournal(file: string, snapshot: string, records: object[]): void {
  writeFileSync(file, snapshot);
  const lines = [JSON.stringify({ base: createHash('sha256').update(snapshot).digest('hex') })];
  records.forEach((sections, i) => {
    lines.push(JSON.stringify({ seq: i + 1, sections }));
  });
  writeFileSync(journalOf(file), `${lines.join('\n')}\n`);
}

/** The journal's records (after its header line). */
export const records = (file: string) =>
  readFileSync(journalOf(file), 'utf8')
    .split('\n')
    .filter(Boolean)
    .slice(1)
    .map((l) => JSON.parse(l) as { seq: number; sections: Record<string, unknown> });

/** The probe file fileHandleProto leaves in its folder. */
export const PROBE = '.probe';

/** The FileHandle class's prototype (not exported by node): where `sync` and `datasync` are observed. */
export async function fileHandleProto(dir: string) {
  const fh = await open(join(dir, PROBE), 'w');
  await fh.close();
  return Object.getPrototypeOf(fh) as { sync: () => Promise<void>; datasync: () => Promise<void> };
}

/** The files of this process open in `dir` (Linux: /proc/self/fd). */
export function openIn(dir: string): string[] {
  const fds = readdirSync('/proc/self/fd');
  expect(fds.length).toBeGreaterThan(2);
  return fds
    .map((fd) => {
      try {
        return readlinkSync(`/proc/self/fd/${fd}`);
      } catch {
        return ''; // the fd of the listing itself, closed since
      }
    })
    .filter((target) => target === dir || target.startsWith(`${dir}/`));
}
