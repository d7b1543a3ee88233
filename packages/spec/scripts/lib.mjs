// The spec package's tools (lint, bundle, variants, docs, generated clients, the breaking-change gate,
// the mock) and the repository's scripts share this glue: where things are, and running a tool with its output captured.
import { spawn } from 'node:child_process';
import { readFileSync, realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parse } from 'yaml';
import { bundleDir, bundleFile } from '../model/index.js';

/** The repository's root: the tools run its node_modules/.bin and read its redocly.yaml. */
export const root = join(dirname(fileURLToPath(import.meta.url)), '../../..');

/**
 * Whether the module at `moduleUrl` (its `import.meta.url`) is the script node was started with.
 * Compares file URLs built by Node itself, so that a checkout whose path has a space, non-ASCII
 * characters or a symlink still runs its scripts (a string built as `file://` + argv[1] does not
 * match there, and the script silently did nothing).
 */
export function isMain(moduleUrl) {
  if (!process.argv[1]) return false;
  try {
    return moduleUrl === pathToFileURL(realpathSync(process.argv[1])).href;
  } catch {
    return false;
  }
}
export const distDir = bundleDir;
const bin = (name) => join(root, 'node_modules/.bin', name);

/** The APIs declared in redocly.yaml: [{ name: 'account', id: 'account@v1', root: 'specs/account/openapi.yaml' }] */
export function apis() {
  const config = parse(readFileSync(join(root, 'redocly.yaml'), 'utf8'));
  return Object.entries(config.apis).map(([id, api]) => ({ id, name: id.split('@')[0], root: api.root }));
}

/** Where a bundle is written (`packages/spec/dist/<name>.openapi.<ext>`): the operation model's `bundleFile`. */
export { bundleFile };

/**
 * Runs a node_modules/.bin tool as its own process, without blocking, so that independent runs go
 * in parallel; resolves { ok, out } with stdout and stderr together. Runs in the repository's root unless told.
 */
export function tool(name, args, { cwd = root } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(bin(name), args, { cwd, env: { ...process.env, NO_COLOR: '1' } });
    let out = '';
    const add = (chunk) => {
      out += chunk;
    };
    child.stdout.on('data', add);
    child.stderr.on('data', add);
    child.on('error', reject);
    child.on('close', (code) => resolve({ ok: code === 0, out }));
  });
}

/** Drops Redocly's Node 20 end-of-support banner, which it prints on every run. */
export const quiet = (out) =>
  out
    .split('\n')
    .filter((l) => !/[║╔╚]/.test(l))
    .join('\n')
    .trim();
