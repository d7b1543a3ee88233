// @ts-check
// Where the bundles are and how one is read: the one `bundlePath` of the project.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** @typedef {'account' | 'manager'} ApiName */
/** @typedef {ApiName | 'sandbox-control'} BundleName  a bundle this package ships: the provider's two APIs and the sandbox's control API */
/** @typedef {Record<string, any>} OpenApiDoc */

/** The provider's APIs, whose bundles this package ships. */
export const API_NAMES = /** @type {const} */ (['account', 'manager']);

/** Every bundle this package ships: the provider's APIs and the sandbox's own control API (`/__sandbox/*`). */
export const BUNDLE_NAMES = /** @type {const} */ ([...API_NAMES, 'sandbox-control']);

/** Where this package's bundles are built (`packages/spec/dist`, or `dist/` of an installed copy). */
export const bundleDir = fileURLToPath(new URL('../dist/', import.meta.url));

/**
 * Where one bundle is (or is written): `<dir>/<api>.openapi.<ext>`; `dir` defaults to this package's `dist/`.
 * @param {string} api
 * @param {{ ext?: 'json' | 'yaml', dir?: string }} [options]
 */
export const bundleFile = (api, options = {}) => join(options.dir ?? bundleDir, `${api}.openapi.${options.ext ?? 'json'}`);

/**
 * The path of one bundle (see `bundleFile`); throws, saying how to build it, when the file is missing.
 * @param {BundleName} api
 * @param {{ ext?: 'json' | 'yaml', dir?: string }} [options]
 */
export function bundlePath(api, options = {}) {
  const path = bundleFile(api, options);
  if (!existsSync(path)) throw new Error(`${path} is missing: run \`pnpm build\` (or \`pnpm bundle\`) at the repository's root`);
  return path;
}

/**
 * One bundle (JSON), parsed.
 * @param {BundleName} api
 * @param {{ dir?: string }} [options]
 * @returns {OpenApiDoc}
 */
export function loadBundle(api, options = {}) {
  const path = bundlePath(api, { dir: options.dir, ext: 'json' });
  try {
    return JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new Error(`Cannot read the ${api} bundle ${path}: ${/** @type {Error} */ (err).message}`);
  }
}
