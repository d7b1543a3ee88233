import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { defaultSeed, type Sandbox, startSandbox } from '@zone-api/sandbox';
import { freePort } from '@zone-api/testkit';
import { type RunningRealManager, startRealManager } from '@zone-api/testkit/real-manager';
import { expect } from 'vitest';
import { ACCOUNT } from './account.js';

// The real local proxy manager 1.570.247 and the sandbox side by side, for the suites that play the
// same calls against both and compare the answers value by value (run by `pnpm test:real-manager`,
// inside a network namespace with only loopback). Both listen on the same loopback: a proxy port of
// the sandbox is the real one's number + SHIFT, and a call is written once as a function of `at`,
// which gives each side its number for a port of the case.

export interface Reply {
  status: number;
  media: string | null;
  body: unknown;
}

export const SHIFT = 1000;
export type At = (port: number) => number;
/** A call: method, path, then a body (JSON unless a string with its own media type is given). */
export type Call = (at: At) => [method: string, path: string, body?: unknown, media?: string];

export interface SideBySide {
  sandbox: Sandbox;
  manager: RunningRealManager;
  targetUrl: string;
  stop(): Promise<void>;
}

/** Starts the sandbox (no ports, proxy ports listening), the real manager upstream of it, and a loopback target. */
export async function startSideBySide(options: { strict?: boolean } = {}): Promise<SideBySide> {
  const target: Server = createServer((req, res) => {
    res.statusCode = Number(/[?&]st=(\d{3})/.exec(req.url ?? '')?.[1] ?? 200);
    res.setHeader('content-type', 'text/plain');
    res.end(`hello ${req.url}`);
  });
  await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
  const seed = defaultSeed();
  seed.manager.ports = [];
  const sandbox = await startSandbox({ accountPort: 0, managerPort: 0, networkPort: 0, proxyPorts: true, seed, strict: options.strict });
  // The sandbox's Zones as the real manager's stubbed cloud describes them, prices included.
  const zones = Object.fromEntries(
    Object.entries(ACCOUNT.zones).map(([name, z]) => [
      name,
      { ...z, cost: { gb: seed.account.zones.find((x) => x.name === name)?.price_per_gb } },
    ]),
  );
  const manager = await startRealManager({
    wwwPort: await freePort(),
    ...ACCOUNT,
    zones,
    proxy: '127.0.0.1',
    proxyPort: Number(new URL(sandbox.networkUrl as string).port),
  });
  return {
    sandbox,
    manager,
    targetUrl: `http://127.0.0.1:${(target.address() as AddressInfo).port}`,
    async stop() {
      await manager.stop();
      await sandbox.close();
      await new Promise<void>((resolve) => target.close(() => resolve()));
    },
  };
}

/** One call as a client makes it: a JSON body unless a string with its own media type is given. */
export async function call(base: string, method: string, path: string, body?: unknown, media = 'application/json'): Promise<Reply> {
  const init: RequestInit = { method, headers: {} };
  if (body !== undefined) {
    init.body = typeof body === 'string' ? body : JSON.stringify(body);
    init.headers = { 'content-type': media };
  }
  const res = await fetch(`${base}${path}`, init);
  const text = await res.text();
  const type = res.headers.get('content-type')?.split(';')[0]?.trim() ?? null;
  let parsed: unknown = text;
  if (type === 'application/json') parsed = JSON.parse(text);
  return { status: res.status, media: type, body: parsed };
}

/** The same call to both; their answers, the real one first. */
export async function both(s: SideBySide, req: Call): Promise<[Reply, Reply]> {
  const real = await call(s.manager.url, ...req((p) => p));
  const sbx = await call(s.sandbox.managerUrl, ...req((p) => p + SHIFT));
  return [real, sbx];
}

/** Both answer alike (after `norm`), and the real one is `expected` (a partial match). */
export async function same(s: SideBySide, req: Call, expected: Partial<Reply>, norm: (r: Reply) => unknown = (r) => r): Promise<Reply> {
  const [real, sbx] = await both(s, req);
  const [method, path] = req((p) => p);
  expect(real, `real manager: ${method} ${path}`).toMatchObject(expected);
  expect(norm(sbx), `sandbox answers ${method} ${path} as the real manager`).toEqual(norm(real));
  return real;
}
