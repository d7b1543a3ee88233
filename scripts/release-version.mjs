#!/usr/bin/env node
// `pnpm release:version`: the versioning step of a release. Runs `changeset version` (bumps the
// packages named by the pending changesets and writes their CHANGELOGs); when @zone-api/spec got a new
// version, writes it into `info.version` of specs/*/openapi.yaml, rebundles, and keeps the new bundles
// in packages/spec/released/ as the baseline of the next breaking-change check. Review and commit
// the result; README.md "Releasing a spec change" has the whole flow.
import { spawnSync } from 'node:child_process';
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { bundle } from '../packages/spec/scripts/bundle.mjs';
import { apis, bundleFile, isMain, root } from '../packages/spec/scripts/lib.mjs';

const specPackage = join(root, 'packages/spec/package.json');
const specVersion = () => JSON.parse(readFileSync(specPackage, 'utf8')).version;

/** Sets `info.version` in an OpenAPI YAML source, touching only that line. */
export function setInfoVersion(text, version) {
  const lines = text.split('\n');
  const info = lines.findIndex((l) => /^info:\s*$/.test(l));
  if (info < 0) throw new Error('no top-level `info:` block');
  for (let i = info + 1; i < lines.length && !/^\S/.test(lines[i]); i++) {
    if (/^ {2}version:/.test(lines[i])) {
      lines[i] = `  version: ${version}`;
      return lines.join('\n');
    }
  }
  throw new Error('no `version` in the `info` block');
}

if (isMain(import.meta.url)) {
  const before = specVersion();
  const res = spawnSync(join(root, 'node_modules/.bin/changeset'), ['version'], { cwd: root, stdio: 'inherit' });
  if (res.status !== 0) process.exit(res.status ?? 1);
  const after = specVersion();
  if (after === before) {
    console.log(`@zone-api/spec stays at ${before}: no changeset names it, so the specs and the baseline are unchanged`);
    process.exit(0);
  }
  for (const api of apis()) {
    const file = join(root, api.root);
    writeFileSync(file, setInfoVersion(readFileSync(file, 'utf8'), after));
    console.log(`${api.root}: info.version ${before} -> ${after}`);
  }
  await bundle();
  for (const api of apis()) {
    copyFileSync(bundleFile(api.name, { ext: 'json' }), join(root, 'packages/spec/released', `${api.name}.openapi.json`));
  }
  console.log(`packages/spec/released/: the ${after} bundles are now the baseline of \`pnpm breaking\``);
  console.log('next: review the diff (CHANGELOGs, versions), run pnpm build && pnpm test, commit, tag and publish');
}
