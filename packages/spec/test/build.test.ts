import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runSteps } from '../../../scripts/build.mjs';

// `pnpm build` skips a step whose inputs and outputs are those of its last successful run. The rules,
// on steps that copy files in a scratch folder: what runs again, and when.

const base = mkdtempSync(join(tmpdir(), 'zone-api-build-'));
afterAll(() => rmSync(base, { recursive: true, force: true }));
const cache = join(base, 'cache/build.json');
const write = (f: string, text: string) => writeFileSync(join(base, f), text);
mkdirSync(join(base, 'out'));
write('pnpm-lock.yaml', 'lock 1');
write('in.txt', 'one');

let failNext = false;
const steps = [
  {
    name: 'copy',
    run: () => {
      if (failNext) throw new Error('copy failed');
      write('out/copy.txt', readFileSync(join(base, 'in.txt'), 'utf8'));
    },
    inputs: () => ['in.txt'],
    outputs: () => (existsSync(join(base, 'out/copy.txt')) ? ['out/copy.txt'] : []),
  },
  { name: 'always', run: () => undefined },
];
const build = (force = false) => runSteps(steps, { base, cache, force, log: () => undefined });

describe('the build runs a step again only when it must', () => {
  it('runs every step the first time, then only those without inputs', async () => {
    expect(await build()).toEqual(['copy', 'always']);
    expect(await build()).toEqual(['always']);
  });

  it('runs a step again when an input, the lockfile or an output changed', async () => {
    write('in.txt', 'two');
    expect(await build()).toEqual(['copy', 'always']);
    expect(readFileSync(join(base, 'out/copy.txt'), 'utf8')).toBe('two');
    write('pnpm-lock.yaml', 'lock 2');
    expect(await build()).toEqual(['copy', 'always']);
    write('out/copy.txt', 'edited by hand');
    expect(await build()).toEqual(['copy', 'always']);
    rmSync(join(base, 'out/copy.txt'));
    expect(await build()).toEqual(['copy', 'always']);
    expect(await build()).toEqual(['always']);
  });

  it('keeps no record of a failed step, and force runs everything', async () => {
    failNext = true;
    await expect(build(true)).rejects.toThrow('copy failed');
    failNext = false;
    expect(await build()).toEqual(['copy', 'always']);
    expect(await build(true)).toEqual(['copy', 'always']);
  });
});
