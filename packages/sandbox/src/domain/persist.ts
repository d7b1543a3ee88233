/**
 * The data file (`--data FILE`): a snapshot of the whole state (`FILE`, the shape of a seed) and a
 * journal beside it (`FILE.journal`, JSON lines) that receives the changes between snapshots.
 *
 * Group commit: callers await `save()`; the changes made in one turn of the event loop become one
 * journal record, written before any of their answers is sent. A record holds only the sections
 * (Store.sectionsJson: each field of each port's configuration is one) whose text differs from the
 * last one written, so a change costs what it changed, whatever the size of the state. The write reaches the operating system before the
 * answer, so every acknowledged change survives the process being killed (`kill -9`). With `fsync:
 * 'always'` each record is also fsynced before the answers, which survives a power loss too, at the
 * disk's pace; by default the journal is fsynced once a second.
 *
 * When the journal outgrows the snapshot (COMPACT_RATIO) — and at start-up, after a failed write
 * and on close — the state is written as a new snapshot (temp file, fsync, rename, so a crash never
 * leaves a torn file) and the journal starts afresh. The journal's first line names the snapshot it
 * follows (a SHA-256 of its text): a journal left behind by a crash between the two renames is never
 * applied to the newer snapshot. A last line cut short by a crash was never acknowledged: it is skipped.
 * A compaction sets the old journal aside (`FILE.journal.folded`) before the new snapshot replaces the
 * old one, so no crash leaves a journal beside a snapshot it does not follow: one found there (the
 * snapshot edited or replaced while the sandbox was stopped) stops the start, naming both files.
 */
import { createHash } from 'node:crypto';
import { fstatSync, ftruncateSync, readdirSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { type FileHandle, open, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';

import { commitTemp, tempPrefix, writeTemp } from './atomic.js';
import { fromSections, Replay } from './replay.js';

export const journalOf = (file: string) => `${file}.journal`;
/** The journal a compaction set aside until the new snapshot is in place (see DataFile.compact). */
export const foldedOf = (file: string) => `${file}.journal.folded`;
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** The journal is folded into a new snapshot once it is this many times the snapshot's size (and at least COMPACT_MIN bytes). */
const COMPACT_RATIO = 4;
const COMPACT_MIN = 1024 * 1024;
/** How often the journal is fsynced when records are not fsynced one by one. */
const FSYNC_INTERVAL_MS = 1000;

/** Temp files left by a crash mid-write (of the snapshot or the journal): never read, removed at start-up. Returns their names. */
export function removeStaleTemps(file: string): string[] {
  const prefixes = [tempPrefix(file), tempPrefix(journalOf(file))];
  let names: string[];
  try {
    names = readdirSync(dirname(file)).filter((n) => prefixes.some((p) => n.startsWith(p)));
  } catch {
    return [];
  }
  for (const n of names) rmSync(join(dirname(file), n), { force: true });
  return names;
}

type Data = Record<string, unknown> & { manager?: Record<string, unknown> };

/** A file's text, or undefined when there is none. */
function readIfThere(file: string, what: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new Error(`Cannot read the ${what} ${file}: ${(err as Error).message}`);
  }
}

const headerOf = (snapshot: string) => JSON.stringify({ base: sha256(snapshot) });

/**
 * The saved state: the snapshot with the journal's records applied, or undefined when there is no
 * data file yet. A snapshot that exists but cannot be parsed is an error; so is a journal record that
 * is not a record (named by file and line) unless it is the last line and not JSON (cut short by a
 * crash, never acknowledged), and a journal with records that follows another snapshot.
 */
export function readState(file: string): unknown {
  const text = readIfThere(file, 'data file');
  if (text === undefined) return undefined;
  let data: Data;
  try {
    data = JSON.parse(text);
  } catch (err) {
    throw new Error(`The data file ${file} is not valid JSON (${(err as Error).message}); move it away to start from the seed`);
  }
  const base = headerOf(text);
  let name = journalOf(file);
  let journal = readIfThere(name, 'journal');
  // A compaction stopped before its new snapshot was in place: the journal it set aside still follows this one.
  const folded = journal === undefined ? readIfThere(foldedOf(file), 'journal') : undefined;
  if (folded?.split('\n', 1)[0] === base) [name, journal] = [foldedOf(file), folded];
  if (journal === undefined) return data;
  const replay = new Replay(data);
  const lines = journal.split('\n');
  if (lines.at(-1) === '') lines.pop();
  const header = lines.shift();
  if (header !== base) {
    if (!lines.length) return data; // nothing was acknowledged after it
    throw new Error(
      `The journal ${name} holds ${lines.length} acknowledged change(s) that follow another version of the data file ${file}: ` +
        `it was edited or replaced while the sandbox was stopped, and starting would lose them. To keep ${file} as it is ` +
        `and drop those changes, remove ${name}; to keep them, put back the version of ${file} they follow ` +
        `(its SHA-256 is in the journal's first line), start and stop the sandbox once, then edit ${file} again`,
    );
  }
  lines.forEach((line, i) => {
    const where = `The journal ${name} is damaged at line ${i + 2}`;
    const away = `move it away to start from ${file} alone (the changes from that line on are then lost)`;
    let record: unknown;
    try {
      record = JSON.parse(line);
    } catch (err) {
      if (i === lines.length - 1) return; // cut short by a crash: never acknowledged
      throw new Error(`${where} (${(err as Error).message}); ${away}`);
    }
    const sections = (record as { sections?: unknown } | null)?.sections;
    if (typeof record !== 'object' || !sections || typeof sections !== 'object' || Array.isArray(sections))
      throw new Error(`${where}: ${line.slice(0, 40)} is not a record ({"seq":…,"sections":{…}}); ${away}`);
    for (const [section, value] of Object.entries(sections)) replay.apply(section, value);
  });
  return replay.result();
}

/** What the data file needs from the state. */
export interface Journaled {
  /** Every section with `all`, else the small ones and the large ones changed since the last call; as [name, JSON text]. */
  sectionsJson(all: boolean): [string, string][];
  /** The whole state as the snapshot's JSON text. */
  snapshot(): string;
}

export interface DataFileOptions {
  /** `always`: fsync each record before its answers; `interval` (default): once a second. */
  fsync?: 'always' | 'interval';
  /** Journal size (bytes) past which it is folded into a new snapshot. Default: COMPACT_RATIO × the snapshot, at least COMPACT_MIN. */
  compactAt?: number;
}

/**
 * The data file of a running sandbox (see the top of this file). `save()` is the group commit;
 * `acknowledged()` is the state as the disk holds it (what a failed save rolls memory back to).
 */
export class DataFile {
  private journal: FileHandle | undefined;
  /** Bytes of the journal that hold acknowledged records. */
  private size = 0;
  private snapshotSize = 0;
  private seq = 0;
  private temps = 0;
  /** Each section's text as last acknowledged. */
  private acked = new Map<string, string>();
  /** The next write must be a snapshot: at start, after a failed write. */
  private compactNext = true;
  private unsynced = false;
  private running: Promise<void> | undefined;
  /** The running write is still waiting for this turn's changes. */
  private gathering = false;
  private queued: Promise<void> | undefined;
  private readonly timer: NodeJS.Timeout | undefined;

  constructor(
    readonly file: string,
    private readonly state: Journaled,
    private readonly options: DataFileOptions = {},
  ) {
    if (options.fsync !== 'always') {
      this.timer = setInterval(() => this.syncSoon(), FSYNC_INTERVAL_MS);
      this.timer.unref();
    }
  }

  /** Resolves once every change made before it is written; rejects when that write failed. */
  save(): Promise<void> {
    // A write that has not yet taken the state carries this caller's change too.
    if (this.running && this.gathering) return this.running;
    if (!this.running) {
      this.running = this.write().finally(() => {
        this.running = undefined;
      });
      return this.running;
    }
    if (!this.queued) {
      // Whether the running write lands or fails, the next caller starts afresh.
      this.queued = this.running.then(
        () => {
          this.queued = undefined;
          return this.save();
        },
        (err: unknown) => {
          this.queued = undefined;
          throw err;
        },
      );
    }
    return this.queued;
  }

  /** The state as last acknowledged (whole sections), or undefined before the first write. */
  acknowledged(): unknown {
    return this.acked.size ? fromSections(this.acked) : undefined;
  }

  /** A last snapshot (the journal is then removed) and the file closed. */
  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.compactNext = true;
    try {
      await this.save();
    } finally {
      await this.closeJournal();
    }
    // The journal the last snapshot's compaction just made; a set-aside one only if a compaction stopped half-way.
    rmSync(journalOf(this.file));
    rmSync(foldedOf(this.file), { force: true });
  }

  private async write(): Promise<void> {
    // Let the requests already read in this turn of the event loop make their changes first.
    this.gathering = true;
    await new Promise((resolve) => setImmediate(resolve));
    this.gathering = false;
    const fd = this.journal?.fd;
    const limit = this.options.compactAt ?? Math.max(COMPACT_MIN, COMPACT_RATIO * this.snapshotSize);
    if (this.compactNext || fd === undefined || this.size > limit) {
      return this.compact();
    }
    // Only what changed since the last record: a section whose text is the acknowledged one is left out.
    const sections = this.state.sectionsJson(false).filter(([k, v]) => this.acked.get(k) !== v);
    if (!sections.length) return;
    const line = `{"seq":${++this.seq},"sections":{${sections.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',')}}}\n`;
    const bytes = Buffer.from(line);
    try {
      let done = 0;
      while (done < bytes.length) done += writeSync(fd, bytes, done);
      // An open file whose folder was removed takes writes that no restart will ever read.
      if (fstatSync(fd).nlink === 0) throw Object.assign(new Error('the data file was removed'), { code: 'ENOENT' });
      if (this.options.fsync === 'always') await this.journal?.datasync();
    } catch (err) {
      try {
        ftruncateSync(fd, this.size);
      } catch {
        // The journal is rewritten by the next write's snapshot anyway.
      }
      this.compactNext = true;
      throw err;
    }
    this.size += bytes.length;
    this.unsynced = true;
    for (const [k, v] of sections) this.acked.set(k, v);
  }

  /**
   * The state as a new snapshot, and a journal that follows it. The old journal is set aside before
   * the old snapshot is replaced: a crash in between leaves the old snapshot with its journal (set
   * aside, still read) or the new snapshot with the old journal set aside (no longer read).
   */
  private async compact(): Promise<void> {
    const sections = this.state.sectionsJson(true);
    const text = this.state.snapshot();
    const header = `${headerOf(text)}\n`;
    const journal = journalOf(this.file);
    try {
      const snapshot = await writeTemp(this.file, text, ++this.temps);
      const follower = await writeTemp(journal, header, ++this.temps).catch(async (err) => {
        await rm(snapshot); // just written
        throw err;
      });
      try {
        await rename(journal, foldedOf(this.file)).catch((err: NodeJS.ErrnoException) => {
          if (err.code !== 'ENOENT') throw err;
        });
        await commitTemp(snapshot, this.file);
        await commitTemp(follower, journal);
      } catch (err) {
        await Promise.all([rm(snapshot, { force: true }), rm(follower, { force: true })]);
        throw err;
      }
      await rm(foldedOf(this.file), { force: true });
      await this.closeJournal();
      this.journal = await open(journal, 'a', 0o600);
      this.size = Buffer.byteLength(header);
    } catch (err) {
      this.compactNext = true;
      throw err;
    }
    this.snapshotSize = Buffer.byteLength(text);
    this.compactNext = false;
    this.unsynced = false;
    this.acked = new Map(sections);
  }

  private syncSoon(): void {
    if (!this.unsynced || !this.journal) return;
    this.unsynced = false;
    this.journal.datasync().catch((err: NodeJS.ErrnoException) => {
      console.error(`[zone-api sandbox] the journal ${journalOf(this.file)} could not be fsynced (${err.code ?? err.message})`);
    });
  }

  /** Closes the journal once its pending fsync, if any, is done. */
  private async closeJournal(): Promise<void> {
    const fh = this.journal;
    this.journal = undefined;
    await fh?.close().catch(() => {});
  }
}
