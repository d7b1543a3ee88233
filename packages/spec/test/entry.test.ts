import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { repoRoot } from '@zone-api/testkit';
import { afterAll, describe, expect, it } from 'vitest';

// The build scripts run their work only when started directly (`node scripts/x.mjs`, `node packages/spec/scripts/x.mjs`). That test used
// to be `import.meta.url === 'file://' + argv[1]`, false in a checkout whose path has a space or
// non-ASCII characters: the script then did nothing and exited 0 (the release gate passed unchecked).

const dir = mkdtempSync(join(tmpdir(), 'zone api ü-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function probe(where: string) {
  mkdirSync(where, { recursive: true });
  const file = join(where, 'probe.mjs');
  const lib = pathToFileURL(join(repoRoot, 'packages/spec/scripts/lib.mjs')).href;
  writeFileSync(file, `import { isMain } from ${JSON.stringify(lib)};\nconsole.log(isMain(import.meta.url));\n`);
  return file;
}
const run = (file: string) => spawnSync(process.execPath, [file], { encoding: 'utf8' }).stdout.trim();

describe('packages/spec/scripts/lib.mjs isMain', () => {
  it('is true for the started script in a path with a space and non-ASCII characters, and through a symlink', () => {
    const file = probe(join(dir, 'a b', 'é'));
    expect(run(file)).toBe('true');
    symlinkSync(join(dir, 'a b'), join(dir, 'link to it'));
    expect(run(join(dir, 'link to it', 'é', 'probe.mjs'))).toBe('true');
  });

  it('is false for a module imported by another script', () => {
    const inner = probe(join(dir, 'inner dir'));
    const outer = join(dir, 'outer.mjs');
    writeFileSync(outer, `await import(${JSON.stringify(pathToFileURL(inner).href)});\n`);
    expect(run(outer)).toBe('false');
  });

  it('every script that runs on its own decides so with isMain', () => {
    const scripts = ['scripts', 'packages/spec/scripts'].flatMap((d) =>
      readdirSync(join(repoRoot, d))
        .filter((f) => f.endsWith('.mjs'))
        .map((f) => join(repoRoot, d, f)),
    );
    for (const f of scripts) expect(readFileSync(f, 'utf8'), f).not.toMatch(/import\.meta\.url === /);
    expect(scripts.filter((f) => readFileSync(f, 'utf8').includes('isMain(import.meta.url)')).length).toBeGreaterThan(5);
  });
});
