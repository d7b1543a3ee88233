#!/usr/bin/env node
// Fails when a committed generated file is stale. openapi-typescript's own `--check` passes silently
// when it reads several APIs from a Redocly config, so this regenerates everything (`pnpm types`),
// compares with what was there, and puts the original files back: the check never changes the tree.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { isMain, root } from '../packages/spec/scripts/lib.mjs';
import { generatedDirs } from './gen-operations.mjs';

/** Regenerates, compares with what was there, puts the originals back; exits 1 naming what was stale. */
function check() {
  const files = generatedDirs().flatMap((d) => readdirSync(d).map((f) => join(d, f)));
  const before = new Map(files.map((f) => [f, readFileSync(f, 'utf8')]));

  let stale = [];
  try {
    execFileSync('pnpm', ['-s', 'types'], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
    const after = generatedDirs().flatMap((d) => readdirSync(d).map((f) => join(d, f)));
    stale = [...new Set([...files, ...after])].filter((f) => {
      try {
        return readFileSync(f, 'utf8') !== before.get(f);
      } catch {
        return true;
      }
    });
  } finally {
    for (const [f, text] of before) writeFileSync(f, text);
  }
  if (stale.length) {
    console.error(`stale generated files (run pnpm types and commit):\n${stale.map((f) => `  ${relative(root, f)}`).join('\n')}`);
    process.exit(1);
  }
  console.log(`generated files are fresh (${files.length} files)`);
}

if (isMain(import.meta.url)) check();
