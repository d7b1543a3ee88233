import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { networkInterfaces, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { REAL_MANAGER, realManagerCacheDir, realManagerPackageDir } from './install.mjs';

// The real local proxy manager, run for the conformance suite: the pinned npm package, installed
// once into a cache folder outside the workspace (it is about 400 MB and no package of ours depends
// on it), started with its cloud connection replaced (boot.cjs) inside a network namespace that has
// only loopback, and stopped by pid.

export { ensureRealManagerInstalled, REAL_MANAGER, realManagerCacheDir, realManagerPackageDir } from './install.mjs';

/**
 * Refuses to go on unless this process sits in a network namespace whose only interface is loopback:
 * the real manager tries to reach its cloud, and not one packet may leave the machine.
 */
export function assertLoopbackOnly(): void {
  const outside = Object.entries(networkInterfaces()).filter(([, addrs]) => (addrs ?? []).some((a) => !a.internal));
  if (outside.length) {
    throw new Error(
      `the real manager runs only inside a network namespace with nothing but loopback, and this one has ${outside
        .map(([name]) => name)
        .join(', ')}: run \`pnpm test:real-manager\`, which starts one (root and unshare needed)`,
    );
  }
  const lo = networkInterfaces().lo ?? [];
  if (!lo.some((a) => a.address === '127.0.0.1')) throw new Error('loopback is down in this namespace: `ip link set lo up` first');
}

/** A Zone as the manager's cloud describes it to the manager. */
export interface RealManagerZone {
  password: string[];
  plan: Record<string, unknown>;
  perm: string;
  /** The Zone's prices (`gb`: per GB), which the manager stores with a port as `gb_cost` (lib/zones.js 93-96). */
  cost?: { gb?: number };
}

export interface RealManagerOptions {
  wwwPort: number;
  customer: string;
  /** The account's default Zone and its password. */
  zone: string;
  password: string;
  zones: Record<string, RealManagerZone>;
  /** The upstream super proxy (`--proxy`/`--proxy_port`): 127.0.0.1:22225 by default. */
  proxy?: string;
  proxyPort?: number;
  extraArgs?: string[];
}

export interface RunningRealManager {
  url: string;
  pid: number;
  /** Everything the program printed, for a failure's message. */
  output: () => string;
  stop(): Promise<void>;
}

const bootScript = join(dirname(fileURLToPath(import.meta.url)), 'boot.cjs');

/** Starts the real manager (in this namespace) and resolves once its admin API listens. */
export async function startRealManager(options: RealManagerOptions, timeoutMs = 90_000): Promise<RunningRealManager> {
  assertLoopbackOnly();
  const pkg = realManagerPackageDir();
  if (!existsSync(pkg))
    throw new Error(`${REAL_MANAGER.name} is not installed in ${realManagerCacheDir()}: run \`pnpm test:real-manager\``);
  const workDir = mkdtempSync(join(tmpdir(), 'zone-api-real-manager-'));
  const zones = Object.fromEntries(
    Object.entries(options.zones).map(([name, z]) => [name, { ips: 'any', kw: {}, cost: {}, refresh_cost: null, ...z }]),
  );
  const child: ChildProcess = spawn(process.execPath, [bootScript, pkg, JSON.stringify({ ...options, zones, workDir })], {
    cwd: workDir,
    env: { ...process.env, HOME: workDir },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (d) => {
    out += d;
  });
  child.stderr?.on('data', (d) => {
    out += d;
  });
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const exited = new Promise((r) => child.once('exit', r));
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(workDir, { recursive: true, force: true });
  };
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the real manager did not start in ${timeoutMs} ms:\n${out.slice(-3000)}`)), timeoutMs);
    const check = () => {
      if (out.includes('{"ready":true}')) {
        clearTimeout(timer);
        resolve();
      } else if (out.includes('{"failed":')) {
        clearTimeout(timer);
        reject(new Error(`the real manager failed to start:\n${out.slice(-3000)}`));
      }
    };
    child.stdout?.on('data', check);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the real manager exited with ${code} before it listened:\n${out.slice(-3000)}`));
    });
  }).catch(async (err) => {
    await stop();
    throw err;
  });
  return { url: `http://127.0.0.1:${options.wwwPort}`, pid: child.pid as number, output: () => out, stop };
}

/** One route of the real manager's API, as its route table declares it (`:port`, `:port?` kept). */
export interface RealManagerRoute {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** The full path, with the prefix its router is mounted under (`/api`, `/api/v2`). */
  path: string;
}

/**
 * The routes the installed real manager serves, read from its own route table (lib/mixins/web_api.js:
 * the routes of `init_common_api` under both `/api` and `/api/v2`, those of `create_api` under `/api`
 * only, of `create_api_v2` under `/api/v2` only; lib/mixins/web_server.js 175-176 mounts them).
 */
export function realManagerRoutes(packageDir = realManagerPackageDir()): RealManagerRoute[] {
  const source = readFileSync(join(packageDir, 'lib/mixins/web_api.js'), 'utf8');
  const routes: RealManagerRoute[] = [];
  const block = (name: string) => {
    const start = source.indexOf(`E.prototype.${name} = function`);
    if (start < 0) throw new Error(`real manager: no ${name} in lib/mixins/web_api.js (another version?)`);
    return source.slice(start, source.indexOf('\n};', start));
  };
  const read = (name: string, prefixes: string[]) => {
    for (const m of block(name).matchAll(/\bapp\.(get|post|put|delete)\('([^']+)'/g))
      for (const prefix of prefixes)
        routes.push({ method: (m[1] as string).toUpperCase() as RealManagerRoute['method'], path: `${prefix}${m[2]}` });
  };
  read('init_common_api', ['/api', '/api/v2']);
  read('create_api', ['/api']);
  read('create_api_v2', ['/api/v2']);
  return routes;
}
