import { type ChildProcess, type SpawnOptions, spawn } from 'node:child_process';
import { afterAll, afterEach } from 'vitest';

// Child processes that cannot outlive the test that started them: each is tracked from the moment it
// is spawned (not from when the test gets hold of it), and after each test, whether it passed, failed
// or timed out (vitest runs afterEach while a timed-out test's code is still pending), every one still
// running is sent SIGTERM, then SIGKILL after `graceMs`, and waited for. A worker that exits first
// kills them too.

const ALL = new Set<ChildProcess>();
let exitHook = false;

/** Ends one child: SIGTERM, SIGKILL after `graceMs`; resolves once it has exited. */
export function stopChild(child: ChildProcess, graceMs = 3_000): Promise<void> {
  return new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/**
 * Spawns with `spawn()` and tracks the child; registers (once per file) the hooks that end every
 * child still running after each test and at the end of the file.
 */
export function useChildren(graceMs = 3_000) {
  const mine = new Set<ChildProcess>();
  const stopAll = async () => {
    const live = [...mine];
    mine.clear();
    await Promise.all(live.map((c) => stopChild(c, graceMs)));
  };
  afterEach(stopAll);
  afterAll(stopAll);
  if (!exitHook) {
    exitHook = true;
    process.once('exit', () => {
      for (const c of ALL) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    });
  }
  return {
    spawn(command: string, args: readonly string[], options: SpawnOptions): ChildProcess {
      const child = spawn(command, args, options);
      mine.add(child);
      ALL.add(child);
      child.once('exit', () => {
        mine.delete(child);
        ALL.delete(child);
      });
      return child;
    },
    /** The children started and not yet exited. */
    live: () => [...mine],
  };
}

/** Whether a process id is still running (signal 0 probes without sending anything). */
export function running(pid: number | undefined): boolean {
  if (pid === undefined) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
