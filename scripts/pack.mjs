#!/usr/bin/env node
// Packs every published workspace package (`pnpm pack`, which turns `workspace:*` into versions) into
// one folder, for installing in a project outside this repository until the packages are on a
// registry. Usage: node scripts/pack.mjs [DEST] (default artifacts/packs). Needs `pnpm build` first.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { isMain, root } from '../packages/spec/scripts/lib.mjs';

/** Packs the published packages into `dest`; returns { name: tarball path }. */
export function packAll(dest = join(root, 'artifacts/packs')) {
  mkdirSync(dest, { recursive: true });
  const out = {};
  for (const dir of readdirSync(join(root, 'packages'))) {
    const pkg = JSON.parse(readFileSync(join(root, 'packages', dir, 'package.json'), 'utf8'));
    if (pkg.private) continue;
    const printed = execFileSync('pnpm', ['pack', '--pack-destination', dest], { cwd: join(root, 'packages', dir), encoding: 'utf8' });
    const tgz = printed
      .trim()
      .split('\n')
      .filter((l) => l.endsWith('.tgz'))
      .pop();
    if (!tgz) throw new Error(`pnpm pack printed no tarball for ${pkg.name}`);
    out[pkg.name] = resolve(dest, tgz.split(/[\\/]/).pop());
  }
  return out;
}

if (isMain(import.meta.url)) {
  const packed = packAll(process.argv[2] ? resolve(process.argv[2]) : undefined);
  for (const [name, file] of Object.entries(packed)) console.log(`${name}\t${file}`);
}
