import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DataFile, foldedOf, journalOf, readState } from '../../src/domain/persist.js';
import { fakeState, freshDir } from './data-files.js';

// What the data file's reader (persist.ts readState) reads and refuses: the snapshot, the journal's
// records and the journal a compaction set aside. Beside persist.test.ts.

describe('readState', () => {
  it('no data file: undefined; a data file or journal that cannot be read names which and why', () => {
    const dir = freshDir();
    const file = join(dir, 'state.json');
    expect(readState(file)).toBeUndefined();
    mkdirSync(file);
    expect(() => readState(file)).toThrow(new RegExp(`^Cannot read the data file ${file}: .*EISDIR`));
    rmSync(file, { recursive: true });
    writeFileSync(file, '{"small":1}');
    expect(readState(file)).toEqual({ small: 1 });
    mkdirSync(journalOf(file));
    expect(() => readState(file)).toThrow(new RegExp(`^Cannot read the journal ${journalOf(file)}: .*EISDIR`));
    rmSync(journalOf(file), { recursive: true });
    mkdirSync(foldedOf(file));
    expect(() => readState(file)).toThrow(new RegExp(`^Cannot read the journal ${foldedOf(file)}: .*EISDIR`));
  });

  it('a snapshot that is not JSON is refused, naming the file', () => {
    const file = join(freshDir(), 'state.json');
    writeFileSync(file, '{"small":');
    expect(() => readState(file)).toThrow(`The data file ${file} is not valid JSON (`);
  });

  it('a journal line that is JSON but no record is refused with its line, its start and what to do, even as the last line', async () => {
    const file = join(freshDir(), 'state.json');
    const { st, journaled } = fakeState();
    const df = new DataFile(file, journaled);
    await df.save();
    st.small = 3;
    await df.save();
    await df.close();
    // A journal beside the snapshot it follows, then one line that is not a record.
    const df2 = new DataFile(file, journaled);
    await df2.save();
    st.small = 4;
    await df2.save();
    const journal = readFileSync(journalOf(file), 'utf8');
    expect(readState(file)).toEqual({ small: 4 });
    const bad = [
      'null',
      '[]',
      '"text"',
      '7',
      '{}',
      '{"seq":2}',
      '{"sections":null}',
      '{"sections":5}',
      '{"sections":"ab"}',
      '{"sections":[1]}',
    ];
    for (const line of bad) {
      for (const last of [true, false]) {
        writeFileSync(journalOf(file), `${journal}${line}\n${last ? '' : '{"seq":9,"sections":{"small":9}}\n'}`);
        expect(() => readState(file), line).toThrow(
          `The journal ${journalOf(file)} is damaged at line 3: ${line} is not a record ({"seq":…,"sections":{…}}); move it away to start from ${file} alone (the changes from that line on are then lost)`,
        );
      }
    }
    // The line is named by its first 40 characters.
    const long = `{"seq":3,"sections":[${'1,'.repeat(40)}1]}`;
    writeFileSync(journalOf(file), `${journal}${long}\n`);
    expect(() => readState(file)).toThrow(`line 3: ${long.slice(0, 40)} is not a record`);
    // A record whose sections are empty is a record: nothing to apply.
    writeFileSync(journalOf(file), `${journal}{"seq":3,"sections":{}}\n`);
    expect(readState(file)).toEqual({ small: 4 });
    // Not JSON and not the last line: damaged, with JSON's reason.
    writeFileSync(journalOf(file), `${journal}{"seq\n{"seq":9,"sections":{"small":9}}\n`);
    expect(() => readState(file)).toThrow(/^The journal .* is damaged at line 3 \(.+\); move it away/);
    // A last line that is not JSON was cut short by a crash, never acknowledged: skipped.
    writeFileSync(journalOf(file), `${journal}{"seq":3,"sections":{"sma`);
    expect(readState(file)).toEqual({ small: 4 });
    // A journal without its last newline still has its last record applied.
    writeFileSync(journalOf(file), `${journal}{"seq":3,"sections":{"small":8}}`);
    expect(readState(file)).toEqual({ small: 8 });
    await df2.close();
  });

  it('a journal of another snapshot with no records (only its header) is left unread; a set-aside journal is read only when no journal is there', async () => {
    const file = join(freshDir(), 'state.json');
    writeFileSync(file, '{"small":1}');
    writeFileSync(journalOf(file), `${JSON.stringify({ base: 'another' })}\n`);
    expect(readState(file)).toEqual({ small: 1 });
    writeFileSync(journalOf(file), '');
    expect(readState(file)).toEqual({ small: 1 });
    // The set-aside journal follows this snapshot, but a journal is there: the set-aside one is not read.
    const { journaled } = fakeState();
    const df = new DataFile(file, journaled);
    await df.save();
    const header = readFileSync(journalOf(file), 'utf8');
    writeFileSync(foldedOf(file), `${header}{"seq":1,"sections":{"small":6}}\n`);
    expect(readState(file)).toEqual({ small: 0 });
    rmSync(journalOf(file));
    expect(readState(file)).toEqual({ small: 6 });
    // A set-aside journal of another snapshot is not read.
    writeFileSync(foldedOf(file), `${JSON.stringify({ base: 'another' })}\n{"seq":1,"sections":{"small":6}}\n`);
    expect(readState(file)).toEqual({ small: 0 });
    await df.close();
  });
});
