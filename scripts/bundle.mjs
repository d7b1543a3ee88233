#!/usr/bin/env node
// Bundles each API of redocly.yaml into packages/spec/dist/<name>.openapi.{yaml,json}, then derives
// the dereferenced and OpenAPI 3.0.3 variants from each (scripts/artifacts.mjs).
import { mkdirSync } from 'node:fs';
import { writeArtifacts } from './artifacts.mjs';
import { apis, bundlePath, distDir, isMain, quiet, tool } from './lib.mjs';

export function bundle() {
  mkdirSync(distDir, { recursive: true });
  for (const api of apis()) {
    for (const ext of ['yaml', 'json']) {
      const res = tool('redocly', ['bundle', api.id, '--ext', ext, '-o', bundlePath(api.name, ext)]);
      if (!res.ok) {
        console.error(quiet(res.out));
        throw new Error(`bundle of ${api.id} (${ext}) failed`);
      }
    }
    console.log(`bundled ${api.id} -> packages/spec/dist/${api.name}.openapi.{yaml,json}`);
    writeArtifacts(api.name);
  }
}

if (isMain(import.meta.url)) {
  try {
    bundle();
  } catch (e) {
    console.error(e.message);
    process.exit(1);
  }
}
