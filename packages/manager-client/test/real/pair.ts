import { defaultSeed, type Sandbox, startSandbox } from '@zone-api/sandbox';
import { freePort, startRulesTarget, viaProxy } from '@zone-api/testkit';
import { type RunningRealManager, startRealManager } from '@zone-api/testkit/real-manager';
import { expect } from 'vitest';
import { ACCOUNT } from './account.js';
import { type Call, call, type Reply, SHIFT } from './side-by-side.js';

// The real manager and the sandbox side by side, for suites that play the same calls against both and
// compare the answers value by value (run by `pnpm test:real-manager`, inside a network namespace with
// only loopback). The real manager's upstream is the sandbox's network; a loopback target (the testkit's
// startRulesTarget) answers the status a request asks for in `st=`. A proxy port of the sandbox is the real one's number + SHIFT.

export { type At, type Call, call, type Reply, SHIFT } from './side-by-side.js';

export interface Pair {
  sandbox: Sandbox;
  manager: RunningRealManager;
  targetUrl: string;
  /** How often the target was asked for each path (a retry asks again). */
  asked: Map<string, number>;
  /** The same call to both; their answers, the real one first. */
  both(req: Call): Promise<[Reply, Reply]>;
  /** Both answer alike (after `norm`), and the real one is `expected` (a partial match). */
  same(req: Call, expected: Partial<Reply>, norm?: (r: Reply) => unknown): Promise<Reply>;
  /** Creates the port on both (each its own number). */
  createBoth(port: number, proxy?: Record<string, unknown>): Promise<void>;
  /** A request through the port on both; the answers, the real one first. */
  through(port: number, path: string): Promise<[{ status: number; text: string }, { status: number; text: string }]>;
  close(): Promise<void>;
}

export async function startPair(extraArgs: string[] = []): Promise<Pair> {
  const target = await startRulesTarget();
  const { url: targetUrl, asked } = target;
  const seed = defaultSeed();
  seed.manager.ports = [];
  seed.manager.har = [];
  const sandbox = await startSandbox({ accountPort: 0, managerPort: 0, networkPort: 0, proxyPorts: true, seed });
  let manager: RunningRealManager;
  try {
    manager = await startRealManager({
      wwwPort: await freePort(),
      ...ACCOUNT,
      proxy: '127.0.0.1',
      proxyPort: Number(new URL(sandbox.networkUrl as string).port),
      extraArgs,
    });
  } catch (err) {
    await sandbox.close();
    await target.close();
    throw err;
  }
  const both = async (req: Call): Promise<[Reply, Reply]> => [
    await call(manager.url, ...req((p) => p)),
    await call(sandbox.managerUrl, ...req((p) => p + SHIFT)),
  ];
  return {
    sandbox,
    manager,
    targetUrl,
    asked,
    both,
    async same(req, expected, norm = (r) => r) {
      const [real, sbx] = await both(req);
      const [method, path] = req((p) => p);
      expect(real, `real manager: ${method} ${path}`).toMatchObject(expected);
      expect(norm(sbx), `sandbox answers ${method} ${path} as the real manager`).toEqual(norm(real));
      return real;
    },
    async createBoth(port, proxy = {}) {
      const [real, sbx] = await both((at) => ['POST', '/api/proxies', { proxy: { port: at(port), zone: 'res_zone', ...proxy } }]);
      expect(real.status, JSON.stringify(real.body)).toBe(200);
      expect(sbx.status, JSON.stringify(sbx.body)).toBe(200);
    },
    async through(port, path) {
      const real = await viaProxy(`http://127.0.0.1:${port}`, `${targetUrl}${path}`);
      const sbx = await viaProxy(`http://127.0.0.1:${port + SHIFT}`, `${targetUrl}${path}`);
      return [real, sbx];
    },
    async close() {
      await manager.stop();
      await sandbox.close();
      await target.close();
    },
  };
}
