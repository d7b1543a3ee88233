// Build glue shared by the scripts: where things are, and running a tool with its output captured.
import { spawnSync } from 'node:child_process';
import { readFileSync, realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parse } from 'yaml';
import { bundleDir, bundleFile } from '../packages/spec/model/index.js';

export const root = join(dirname(fileURLToPath(import.meta.url)), '..');

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

/** Where a bundle is written (`packages/spec/dist/<name>.openapi.<ext>`); the YAML one unless told. */
export const bundlePath = (name, ext = 'yaml') => bundleFile(name, { ext });

/** Runs a node_modules/.bin tool; returns { ok, out } with stdout and stderr together. */
export function tool(name, args) {
  const res = spawnSync(bin(name), args, { cwd: root, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
  if (res.error) throw res.error;
  return { ok: res.status === 0, out: `${res.stdout}${res.stderr}` };
}

/** Drops Redocly's Node 20 end-of-support banner, which it prints on every run. */
export const quiet = (out) =>
  out
    .split('\n')
    .filter((l) => !/[║╔╚]/.test(l))
    .join('\n')
    .trim();
