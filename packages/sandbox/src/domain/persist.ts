import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { open, rename, rm } from 'node:fs/promises';
import { hostname } from 'node:os';
import { basename, dirname, join } from 'node:path';

const tempPrefix = (file: string) => `.${basename(file)}.tmp-`;

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

/** Temp files left by a crash mid-write: never read, removed at start-up. Returns their names. */
export function removeStaleTemps(file: string): string[] {
  const prefix = tempPrefix(file);
  let names: string[];
  try {
    names = readdirSync(dirname(file)).filter((n) => n.startsWith(prefix));
  } catch {
    return [];
  }
  for (const n of names) rmSync(join(dirname(file), n), { force: true });
  return names;
}

/** The saved state, or undefined when there is none yet. A file that exists but cannot be parsed is an error. */
export function readState(file: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new Error(`Cannot read the data file ${file}: ${(err as Error).message}`);
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new Error(`The data file ${file} is not valid JSON (${(err as Error).message}); move it away to start from the seed`);
  }
}

/**
 * Group commit: callers await `save()`; the write runs off the event loop, and every change made
 * while it runs is served by the next single write. Under load one write carries the changes of
 * every request that arrived meanwhile, and an answer is still sent only once its change is on disk.
 * When a write fails, its callers and those queued behind it are all refused (the caller rolls
 * memory back to `lastSaved`). (Overlapping writes were measured too: slower, each write costs a
 * snapshot on the event loop.)
 */
export class Saver {
  private running: Promise<void> | undefined;
  private queued: Promise<void> | undefined;
  private seq = 0;
  /** The text of the last write that reached the disk (what a failed save rolls memory back to). */
  lastSaved: string | undefined;

  constructor(
    private readonly file: string,
    private readonly snapshot: () => string,
  ) {}

  save(): Promise<void> {
    if (!this.running) {
      this.running = this.write().finally(() => {
        this.running = undefined;
      });
      return this.running;
    }
    if (!this.queued) {
      // Whether the running write lands or fails, the next caller starts afresh: a failed write
      // refuses the callers queued behind it (their changes are rolled back with it).
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

  private async write(): Promise<void> {
    // Let the requests already read in this turn of the event loop make their changes first.
    await new Promise((resolve) => setImmediate(resolve));
    const text = this.snapshot();
    await writeFileAtomic(this.file, text, ++this.seq);
    this.lastSaved = text;
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
