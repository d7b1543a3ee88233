import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect } from 'vitest';
import type { StateData } from '../src/index.js';
import { bearer, Conformance, docs, raw } from './helpers.js';

/** The sandbox's bin, built by `pnpm build`. */
export const cli = fileURLToPath(new URL('../dist/host/cli.js', import.meta.url));

/**
 * The sandbox as its bin in a child process, started before the file's tests from `seed()` and killed
 * after them: a request that held its event loop then fails a test by its timeout instead of freezing
 * the test runner with it. `manager(path)` and `account(path)` GET a path and check the answer
 * against the spec.
 */
export function useCliSandbox(seed: () => StateData) {
  const conformance = { account: new Conformance(docs.account), manager: new Conformance(docs.manager) };
  const urls = { account: '', manager: '' };
  let child: ChildProcess | undefined;
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'zone-api-hardening-'));
    const seedFile = join(dir, 'seed.json');
    writeFileSync(seedFile, JSON.stringify(seed()));
    const proc = spawn(process.execPath, [cli, '--no-traffic', '--account-port', '0', '--manager-port', '0', '--seed', seedFile], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child = proc;
    await new Promise<void>((resolve, reject) => {
      let out = '';
      proc.stdout?.on('data', (d) => {
        out += d;
        const a = /account API {2}(http:\/\/\S+)/.exec(out);
        const m = /manager API {2}(http:\/\/\S+)/.exec(out);
        if (a?.[1] && m?.[1] && out.includes('control')) {
          urls.account = a[1];
          urls.manager = m[1];
          resolve();
        }
      });
      proc.stderr?.on('data', (d) => {
        out += d;
      });
      proc.once('exit', (code) => reject(new Error(`the sandbox exited ${code}: ${out}`)));
    });
  }, 30_000);
  afterAll(() => {
    child?.kill('SIGKILL');
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  async function manager(path: string) {
    const r = await raw(urls.manager, 'GET', path);
    expect(conformance.manager.check('GET', path.split('?')[0] as string, r.status, r.headers.get('content-type'), r.text)).toEqual([]);
    return r;
  }
  async function account(path: string) {
    const r = await raw(urls.account, 'GET', path, { headers: bearer });
    expect(conformance.account.check('GET', path.split('?')[0] as string, r.status, r.headers.get('content-type'), r.text)).toEqual([]);
    return r;
  }
  return { urls, conformance, manager, account };
}
