import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DataFile, foldedOf, journalOf, readState } from '../../src/domain/persist.js';
import { fromSections } from '../../src/domain/replay.js';
import { Store } from '../../src/domain/state.js';
import { defaultSeed } from '../../src/index.js';
import { fakeState, freshDir, writeWithJournal } from './data-files.js';

// The data file's journal (src/domain/persist.ts, replay.ts): group commit of the changes of one turn,
// a failed write, compaction, a damaged or foreign journal, ports as sections of their own.

describe('DataFile (group commit into a journal)', () => {
  it('the changes of one turn become one record; each caller resolves once its change is written; large sections only when touched', async () => {
    const file = join(freshDir(), 'state.json');
    const { st, journaled } = fakeState(true);
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
    expect(heard).toHaveLength(50);
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
    const { st, journaled } = fakeState(true);
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
    const { st, journaled } = fakeState(true);
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
    const { st, journaled } = fakeState(true);
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
    const records: object[] = [
      { 'port:2': { port: 2, country: 'gb' }, 'port:3': { port: 3 }, port_order: [3, 2] },
      { manager: { settings: { a: 2 }, bans: [] } },
    ];
    writeWithJournal(file, snapshot, records);
    expect(readState(file)).toEqual({
      manager: { settings: { a: 2 }, bans: [], har: [], ports: [{ port: 3 }, { port: 2, country: 'gb' }] },
    });
    // An earlier version wrote the manager whole, its ports with it.
    writeWithJournal(file, snapshot, [...records, { manager: { settings: { a: 3 }, ports: [{ port: 9 }], bans: [] } }]);
    expect(readState(file)).toEqual({ manager: { settings: { a: 3 }, bans: [], har: [], ports: [{ port: 9 }] } });
  });

  it("port fields: a record holds the fields that changed and each port's list of fields; a port re-made on its number takes the fields its list names", () => {
    const file = join(freshDir(), 'state.json');
    const snapshot = JSON.stringify({
      manager: { settings: {}, ports: [{ port: 1, zone: 'a', rules: [1, 2] }, { port: 2 }], bans: [], har: [] },
    });
    writeWithJournal(file, snapshot, [
      { 'port:1:zone': 'b', 'port:1:country': 'us', 'port:1': ['port', 'zone', 'rules', 'country'] },
      { 'port:2': ['port', 'ssl'], 'port:2:ssl': true },
      // Port 1 deleted, then made again without rules: its old rules are no field of it any more.
      { port_order: [2] },
      { 'port:1': ['port', 'zone'], port_order: [2, 1] },
    ]);
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
