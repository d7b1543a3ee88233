#!/usr/bin/env node
// The published variants of each bundle, next to it in packages/spec/dist (run by `pnpm bundle`):
//   <name>.openapi.deref.json     the 3.1 bundle with every $ref inlined, for tools that do not resolve refs
//   <name>.openapi-3.0.{json,yaml} the OpenAPI 3.0.3 down-conversion, for tools that do not read 3.1
// Their losses are listed in packages/spec/README.md.
import { readFileSync, writeFileSync } from 'node:fs';
import { stringify } from 'yaml';
import { downConvert } from './downconvert.mjs';
import { apis, bundleFile, distDir, isMain, quiet, tool } from './lib.mjs';

export const derefPath = (name) => `${distDir}/${name}.openapi.deref.json`;
export const openapi30Path = (name, ext = 'json') => `${distDir}/${name}.openapi-3.0.${ext}`;

export async function writeArtifacts(name) {
  const res = await tool('redocly', [
    'bundle',
    bundleFile(name, { ext: 'json' }),
    '--dereferenced',
    '--ext',
    'json',
    '-o',
    derefPath(name),
  ]);
  if (!res.ok) {
    console.error(quiet(res.out));
    throw new Error(`dereferencing ${name} failed`);
  }
  const doc30 = downConvert(JSON.parse(readFileSync(bundleFile(name, { ext: 'json' }), 'utf8')));
  writeFileSync(openapi30Path(name, 'json'), `${JSON.stringify(doc30, null, 2)}\n`);
  // No anchors/aliases: some 3.0 tools' YAML readers do not resolve them.
  writeFileSync(openapi30Path(name, 'yaml'), stringify(doc30, { aliasDuplicateObjects: false, lineWidth: 0 }));
  console.log(`derived  ${name} -> packages/spec/dist/${name}.openapi.deref.json, ${name}.openapi-3.0.{json,yaml}`);
}

if (isMain(import.meta.url)) {
  try {
    await Promise.all(apis().map((api) => writeArtifacts(api.name)));
  } catch (e) {
    console.error(e.message);
    process.exit(1);
  }
}
