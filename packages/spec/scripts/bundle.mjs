#!/usr/bin/env node
// Bundles each API of redocly.yaml into packages/spec/dist/<name>.openapi.{yaml,json}, adds the code
// samples of every operation (samples.mjs), then derives the dereferenced and OpenAPI 3.0.3 variants
// from each (artifacts.mjs).
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { parseDocument } from 'yaml';
import { writeArtifacts } from './artifacts.mjs';
import { apis, bundleFile, distDir, isMain, quiet, tool } from './lib.mjs';
import { addCodeSamples } from './samples.mjs';

/**
 * Writes `x-codeSamples` into both bundles of an API: built from the JSON one, set on the same
 * operations of the YAML one (which keeps the rest of Redocly's output as it was).
 */
function writeCodeSamples(name) {
  const json = JSON.parse(readFileSync(bundleFile(name, { ext: 'json' }), 'utf8'));
  const count = addCodeSamples(name, json);
  writeFileSync(bundleFile(name, { ext: 'json' }), `${JSON.stringify(json, null, 2)}\n`);
  const yaml = parseDocument(readFileSync(bundleFile(name, { ext: 'yaml' }), 'utf8'));
  for (const [path, item] of Object.entries(json.paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (op && typeof op === 'object' && op['x-codeSamples']) yaml.setIn(['paths', path, method, 'x-codeSamples'], op['x-codeSamples']);
    }
  }
  writeFileSync(bundleFile(name, { ext: 'yaml' }), yaml.toString({ lineWidth: 0 }));
  console.log(`samples  ${name}: x-codeSamples on ${count} operations`);
}

/** Bundles every API (the APIs, and each one's YAML and JSON, in parallel), then derives its variants. */
export async function bundle() {
  mkdirSync(distDir, { recursive: true });
  await Promise.all(
    apis().map(async (api) => {
      await Promise.all(
        ['yaml', 'json'].map(async (ext) => {
          const res = await tool('redocly', ['bundle', api.id, '--ext', ext, '-o', bundleFile(api.name, { ext })]);
          if (!res.ok) {
            console.error(quiet(res.out));
            throw new Error(`bundle of ${api.id} (${ext}) failed`);
          }
        }),
      );
      console.log(`bundled ${api.id} -> packages/spec/dist/${api.name}.openapi.{yaml,json}`);
      writeCodeSamples(api.name);
      await writeArtifacts(api.name);
    }),
  );
}

if (isMain(import.meta.url)) {
  try {
    await bundle();
  } catch (e) {
    console.error(e.message);
    process.exit(1);
  }
}
