import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';

// The data file's lock: one sandbox at a time on a data file.

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
