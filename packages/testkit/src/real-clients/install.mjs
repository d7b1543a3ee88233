// Where the provider's pinned npm clients live and how they get there: plain JavaScript, so that the
// `pnpm test:real-clients` entry script (outside the namespace, where the registry is reachable) and the
// TypeScript harness use the same folder and versions.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

/** The provider's own account-API clients, run unmodified by the real-clients suite. */
export const REAL_CLIENTS = Object.freeze({
  sdk: Object.freeze({ name: '@brightdata/sdk', version: '0.2.0' }),
  mcp: Object.freeze({ name: '@brightdata/mcp', version: '2.11.3' }),
  cli: Object.freeze({ name: '@brightdata/cli', version: '0.3.7' }),
});

const specs = () => Object.values(REAL_CLIENTS).map((c) => `${c.name}@${c.version}`);

/** `$XDG_CACHE_HOME` (else `~/.cache`)/zone-api/real-clients/<versions>: outside the workspace. */
export function realClientsCacheDir() {
  const base = process.env.XDG_CACHE_HOME || join(homedir(), '.cache');
  const key = Object.entries(REAL_CLIENTS)
    .map(([k, c]) => `${k}-${c.version}`)
    .join('+');
  return join(base, 'zone-api', 'real-clients', key);
}

/** The installed package folder of one client (`sdk`, `mcp`, `cli`). */
export function realClientDir(which) {
  return join(realClientsCacheDir(), 'node_modules', ...REAL_CLIENTS[which].name.split('/'));
}

/** Throws unless every pinned client is installed at its version (the marker is written only after npm finished). */
export function assertRealClientsInstalled() {
  const marker = join(realClientsCacheDir(), 'installed.json');
  if (!existsSync(marker))
    throw new Error(`the real clients are not installed in ${realClientsCacheDir()}: run \`pnpm test:real-clients\``);
  for (const which of Object.keys(REAL_CLIENTS)) {
    const pkg = JSON.parse(readFileSync(join(realClientDir(which), 'package.json'), 'utf8'));
    if (pkg.version !== REAL_CLIENTS[which].version)
      throw new Error(`${REAL_CLIENTS[which].name} is ${pkg.version} in the cache, not ${REAL_CLIENTS[which].version}`);
  }
}

/**
 * Installs the pinned clients into the cache folder unless they are there (about 100 MB, a minute),
 * from the npm registry. `--ignore-scripts`: none of the account flows needs an install script.
 */
export function ensureRealClientsInstalled(log = () => {}) {
  const dir = realClientsCacheDir();
  const marker = join(dir, 'installed.json');
  if (existsSync(marker)) return dir;
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'zone-api-real-clients-cache', private: true }));
  log(`installing ${specs().join(', ')} into ${dir} (once)`);
  const res = spawnSync('npm', ['install', '--ignore-scripts', '--no-audit', '--no-fund', '--save-exact', ...specs()], {
    cwd: dir,
    stdio: ['ignore', 'pipe', 'pipe'],
    encoding: 'utf8',
    timeout: 15 * 60_000,
  });
  const missing = Object.keys(REAL_CLIENTS).filter((k) => !existsSync(join(realClientDir(k), 'package.json')));
  if (res.status !== 0 || missing.length) {
    throw new Error(`npm could not install ${specs().join(', ')}: ${String(res.stderr ?? res.error).slice(-2000)}`);
  }
  writeFileSync(marker, `${JSON.stringify(REAL_CLIENTS)}\n`);
  return dir;
}
