// `pnpm mock`'s command line: help and mistakes are answered with its usage, never a stack trace.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../..', import.meta.url));
const mock = (...args: string[]) =>
  spawnSync(process.execPath, [join(root, 'packages/spec/scripts/mock.mjs'), ...args], { cwd: root, encoding: 'utf8', timeout: 20_000 });
const STACK = /^\s+at /m;

describe('pnpm mock on the command line', () => {
  it('--help and -h print the usage and exit 0', () => {
    for (const flag of ['--help', '-h']) {
      const run = mock(flag);
      expect(run.status, run.stderr).toBe(0);
      expect(run.stdout).toContain('usage: pnpm mock [account|manager] [--port N]');
      expect(run.stdout + run.stderr).not.toMatch(STACK);
    }
  });

  it('an unknown option or a port that is not a number: the reason and the usage, exit 2, no stack', () => {
    const unknown = mock('--bogus');
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toContain("Unknown option '--bogus'");
    const port = mock('--port', 'x');
    expect(port.status).toBe(2);
    expect(port.stderr).toContain('--port takes a number');
    for (const run of [unknown, port]) {
      expect(run.stderr).toContain('usage: pnpm mock');
      expect(run.stderr).not.toMatch(STACK);
    }
  });
});
