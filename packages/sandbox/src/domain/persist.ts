/**
 * The data file (`--data FILE`): a snapshot of the whole state (`FILE`, the shape of a seed) and a
 * journal beside it (`FILE.journal`, JSON lines) that receives the changes between snapshots.
 *
 * Group commit: callers await `save()`; the changes made in one turn of the event loop become one
 * journal record, written before any of their answers is sent. A record holds the state's small
 * sections whole and its large ones (Store.sectionsJson) only when they changed, so a change costs
 * a few kilobytes whatever the size of the state. The write reaches the operating system before the
 * answer, so every acknowledged change survives the process being killed (`kill -9`). With `fsync:
 * 'always'` each record is also fsynced before the answers, which survives a power loss too, at the
 * disk's pace; by default the journal is fsynced once a second.
 *
 * When the journal outgrows the snapshot (COMPACT_RATIO) — and at start-up, after a failed write
 * and on close — the state is written as a new snapshot (temp file, fsync, rename, so a crash never
 * leaves a torn file) and the journal starts afresh. The journal's first line names the snapshot it
 * follows (a SHA-256 of its text): a journal left behind by a crash between the two renames is never
 * applied to the newer snapshot. A last line cut short by a crash was never acknowledged: it is skipped.
 */
import { createHash } from 'node:crypto';
import { fstatSync, ftruncateSync, readdirSync, readFileSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { type FileHandle, open, rename, rm } from 'node:fs/promises';
import { hostname } from 'node:os';
import { basename, dirname, join } from 'node:path';

const tempPrefix = (file: string) => `.${basename(file)}.tmp-`;
export const journalOf = (file: string) => `${file}.journal`;
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** The journal is folded into a new snapshot once it is this many times the snapshot's size (and at least COMPACT_MIN bytes). */
const COMPACT_RATIO = 4;
const COMPACT_MIN = 1024 * 1024;
/** How often the journal is fsynced when records are not fsynced one by one. */
const FSYNC_INTERVAL_MS = 1000;

/** First half of writeFileAtomic: the text in a fsynced temp file, whose path it returns. */
async function writeTemp(file: string, text: string, seq: number): Promise<string> {
  const temp = join(dirname(file), `${tempPrefix(file)}${process.pid}-${seq}`);
  const fh = await open(temp, 'w', 0o600);
  try {
    await fh.writeFile(text);
    await fh.sync();
  } catch (err) {
    await fh.close().catch(() => {});
    await rm(temp, { force: true });
    throw err;
  }
  await fh.close();
  return temp;
}

/** Second half: the temp file renamed over the target, then the directory fsynced. */
async function commitTemp(temp: string, file: string): Promise<void> {
  try {
    await rename(temp, file);
  } catch (err) {
    await rm(temp, { force: true });
    throw err;
  }
  try {
    const dh = await open(dirname(file), 'r');
    try {
      await dh.sync();
    } finally {
      await dh.close();
    }
  } catch {
    // Some file systems refuse to fsync a directory; the rename is still atomic there.
  }
}

/**
 * Writes `text` to `file` so that a crash at any moment leaves either the old or the new file,
 * never a torn one: write a temp file in the same directory, fsync it, rename it over the target
 * (atomic on POSIX within one file system), then fsync the directory so the rename itself survives.
 * Off the event loop: requests keep being served while it runs.
 */
export async function writeFileAtomic(file: string, text: string, seq: number): Promise<void> {
  await commitTemp(await writeTemp(file, text, seq), file);
}

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

/** Puts one journal section into the state: `har` is the manager's, the rest are top-level keys. */
function applySection(data: Data, name: string, value: unknown): void {
  if (name === 'har') data.manager = { ...data.manager, har: value };
  else if (name === 'manager') data.manager = { ...(value as object), har: data.manager?.har };
  else data[name] = value;
}

/** The state a list of sections (as Store.sectionsJson gives them) makes. */
export function fromSections(sections: Iterable<[string, string]>): unknown {
  const data: Data = {};
  for (const [name, text] of sections) applySection(data, name, JSON.parse(text));
  return data;
}

/**
 * The saved state: the snapshot with the journal's records applied, or undefined when there is no
 * data file yet. A snapshot that exists but cannot be parsed is an error; so is a journal record
 * that does not parse unless it is the last line (cut short by a crash, never acknowledged).
 */
export function readState(file: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new Error(`Cannot read the data file ${file}: ${(err as Error).message}`);
  }
  let data: Data;
  try {
    data = JSON.parse(text);
  } catch (err) {
    throw new Error(`The data file ${file} is not valid JSON (${(err as Error).message}); move it away to start from the seed`);
  }
  let journal: string;
  try {
    journal = readFileSync(journalOf(file), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return data;
    throw new Error(`Cannot read the journal ${journalOf(file)}: ${(err as Error).message}`);
  }
  const lines = journal.split('\n');
  if (lines.at(-1) === '') lines.pop();
  const header = lines.shift();
  // A journal that follows another snapshot (a crash between the snapshot's rename and the journal's) is older than this one.
  if (header === undefined || header !== JSON.stringify({ base: sha256(text) })) return data;
  lines.forEach((line, i) => {
    let record: { sections: Record<string, unknown> };
    try {
      record = JSON.parse(line);
    } catch (err) {
      if (i === lines.length - 1) return; // cut short by a crash: never acknowledged
      throw new Error(
        `The journal ${journalOf(file)} is damaged at line ${i + 2} (${(err as Error).message}); move it away to start from ${file} alone`,
      );
    }
    for (const [name, value] of Object.entries(record.sections)) applySection(data, name, value);
  });
  return data;
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
    rmSync(journalOf(this.file), { force: true });
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
    const sections = this.state.sectionsJson(false);
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

  /** The state as a new snapshot, and a journal that follows it. */
  private async compact(): Promise<void> {
    const sections = this.state.sectionsJson(true);
    const text = this.state.snapshot();
    try {
      await writeFileAtomic(this.file, text, ++this.temps);
      const header = `${JSON.stringify({ base: sha256(text) })}\n`;
      await writeFileAtomic(journalOf(this.file), header, ++this.temps);
      await this.closeJournal();
      this.journal = await open(journalOf(this.file), 'a', 0o600);
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

interface LockOwner {
  pid: number;
  host: string;
  started: string;
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/**
 * Takes the data file for this process: an exclusive lock file beside it (`<file>.lock`, created with
 * O_EXCL) naming the holder. A second sandbox on the same file fails to start, naming the holder; a
 * lock left by a process of this machine that no longer runs (killed with -9) is taken over.
 * Returns the release function.
 */
export function lockDataFile(file: string): () => void {
  const lock = `${file}.lock`;
  const me: LockOwner = { pid: process.pid, host: hostname(), started: new Date().toISOString() };
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(lock, `${JSON.stringify(me)}\n`, { flag: 'wx', mode: 0o600 });
      return () => rmSync(lock, { force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw new Error(`Cannot lock the data file ${file}: ${(err as Error).message}`);
    }
    let owner: Partial<LockOwner> = {};
    try {
      owner = JSON.parse(readFileSync(lock, 'utf8'));
    } catch {
      // A lock file cut short by a crash: treated as stale below.
    }
    const stale = typeof owner.pid !== 'number' || (owner.host === me.host && !alive(owner.pid));
    if (!stale) {
      throw new Error(
        `The data file ${file} is in use by another sandbox (pid ${owner.pid} on ${owner.host}, since ${owner.started}); ` +
          `stop it, or remove ${lock} if that process is gone`,
      );
    }
    rmSync(lock, { force: true });
  }
  throw new Error(`Cannot lock the data file ${file}: another process keeps taking ${lock}`);
}
