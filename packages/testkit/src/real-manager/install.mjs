// Where the pinned real manager lives and how it gets there: plain JavaScript, so that both the
// `pnpm test:real-manager` entry script (outside the namespace, where the registry is reachable) and
// the TypeScript harness use the same folder and version.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

export const REAL_MANAGER = Object.freeze({ name: '@luminati-io/luminati-proxy', version: '1.570.247' });

/** `$XDG_CACHE_HOME` (else `~/.cache`)/zone-api/real-manager/<version>: outside the workspace. */
export function realManagerCacheDir() {
  const base = process.env.XDG_CACHE_HOME || join(homedir(), '.cache');
  return join(base, 'zone-api', 'real-manager', REAL_MANAGER.version);
}

export function realManagerPackageDir() {
  return join(realManagerCacheDir(), 'node_modules', ...REAL_MANAGER.name.split('/'));
}

/**
 * Installs the pinned real manager into the cache folder unless it is there already (about 400 MB,
 * a minute). `--ignore-scripts`: its only install script builds an optional syslog module.
 */
export function ensureRealManagerInstalled(log = () => {}) {
  const pkg = realManagerPackageDir();
  const dir = realManagerCacheDir();
  // Written only after npm has finished: an install cut off half-way is not taken for a whole one.
  const marker = join(dir, 'installed.json');
  if (existsSync(marker)) return pkg;
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'zone-api-real-manager-cache', private: true }));
  log(`installing ${REAL_MANAGER.name}@${REAL_MANAGER.version} into ${dir} (once; about 400 MB)`);
  const res = spawnSync('npm', ['install', '--ignore-scripts', '--no-audit', '--no-fund', `${REAL_MANAGER.name}@${REAL_MANAGER.version}`], {
    cwd: dir,
    stdio: ['ignore', 'pipe', 'pipe'],
    encoding: 'utf8',
    timeout: 15 * 60_000,
  });
  if (res.status !== 0 || !existsSync(join(pkg, 'lib', 'manager.js'))) {
    throw new Error(`npm could not install ${REAL_MANAGER.name}@${REAL_MANAGER.version}: ${String(res.stderr ?? res.error).slice(-2000)}`);
  }
  writeFileSync(marker, `${JSON.stringify(REAL_MANAGER)}\n`);
  return pkg;
}
