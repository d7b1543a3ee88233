#!/usr/bin/env node
// Bundles each API of redocly.yaml into packages/spec/dist/<name>.openapi.{yaml,json}, then derives
// the dereferenced and OpenAPI 3.0.3 variants from each (artifacts.mjs).
import { mkdirSync } from 'node:fs';
import { writeArtifacts } from './artifacts.mjs';
import { apis, bundlePath, distDir, isMain, quiet, tool } from './lib.mjs';

/** Bundles every API (the APIs, and each one's YAML and JSON, in parallel), then derives its variants. */
export async function bundle() {
  mkdirSync(distDir, { recursive: true });
  await Promise.all(
    apis().map(async (api) => {
      await Promise.all(
        ['yaml', 'json'].map(async (ext) => {
          const res = await tool('redocly', ['bundle', api.id, '--ext', ext, '-o', bundlePath(api.name, ext)]);
          if (!res.ok) {
            console.error(quiet(res.out));
            throw new Error(`bundle of ${api.id} (${ext}) failed`);
          }
        }),
      );
      console.log(`bundled ${api.id} -> packages/spec/dist/${api.name}.openapi.{yaml,json}`);
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
