import { defaultSeed, type Sandbox, startSandbox } from '@zone-api/sandbox';
import { freePort, startRulesTarget, viaProxy } from '@zone-api/testkit';
import { type RealManagerOptions, type RealManagerZone, type RunningRealManager, startRealManager } from '@zone-api/testkit/real-manager';
import { afterAll, beforeAll, expect } from 'vitest';
import { ACCOUNT } from './account.js';

// The real local proxy manager 1.570.247 and the sandbox side by side, for the suites that play the
// same calls against both and compare the answers value by value (run by `pnpm test:real-manager`,
// inside a network namespace with only loopback). The real manager's upstream is the sandbox's network;
// a loopback target (the testkit's startRulesTarget) answers `hello <url>` with the status a request
// asks for in `st=`. Both listen on the same loopback: a proxy port of the sandbox is the real one's
// number + SHIFT, and a call is written once as a function of `at`, which gives each side its number
// for a port of the case. A suite takes its pair with `usePair()` (started before its tests, closed
// after them).

export interface Reply {
  status: number;
  media: string | null;
  body: unknown;
}

export const SHIFT = 1000;
/**
 * How long `through()` waits on a silent connection before it gives up (status 0, `no answer in N ms`),
 * so that a case fails and says so instead of hanging until the test's timeout. The real manager can
 * hold a connection with no answer for ever: its ports listen in the cluster primary, which hands each
 * connection to its worker and keeps it until the worker acknowledges (Node 20
 * lib/internal/cluster/round_robin_handle.js 115-139); a connection handed to a worker that is dying (a
 * port whose socket_inactivity_timeout is text kills it, lib/worker.js 341-360) is never acknowledged.
 * Well above the slowest answer a case asks for (`wait=3000`).
 */
export const THROUGH_IDLE_MS = 10_000;
export type At = (port: number) => number;
/** A call: method, path, then a body (JSON unless a string with its own media type is given). */
export type Call = (at: At) => [method: string, path: string, body?: unknown, media?: string];

export interface PairOptions {
  /** The sandbox with `--strict`. */
  strict?: boolean;
  /** More command-line arguments for the real manager. */
  extraArgs?: string[];
}

export interface Pair {
  sandbox: Sandbox;
  manager: RunningRealManager;
  targetUrl: string;
  /** How often the target was asked for each path (a retry asks again). */
  asked: Map<string, number>;
  /** How often an exchange with the target ended for each path: answered, or its connection closed first. */
  answered: Map<string, number>;
  /** The same call to both; their answers, the real one first. */
  both(req: Call): Promise<[Reply, Reply]>;
  /** Both answer alike (after `norm`), and the real one is `expected` (a partial match). */
  same(req: Call, expected: Partial<Reply>, norm?: (r: Reply) => unknown): Promise<Reply>;
  /** Creates the port on both (each its own number). */
  createBoth(port: number, proxy?: Record<string, unknown>): Promise<void>;
  /** A request through the port on both; the answers, the real one first (each bounded: THROUGH_IDLE_MS). */
  through(port: number, path: string): Promise<[{ status: number; text: string }, { status: number; text: string }]>;
  close(): Promise<void>;
}

/**
 * The one place where the machine's addresses in what the real manager says are normalised: an IPv4
 * `address:port` (an upstream it could not reach, in `x-lpm-error` or a log's `super_proxy`) becomes
 * `<address>`, so that an assertion names no address of the machine it ran on.
 */
export const withoutAddresses = (text: string): string => text.replace(/\b\d{1,3}(?:\.\d{1,3}){3}:\d+\b/g, '<address>');

/** An answer as a case compares it: its status and the named fields of its JSON body. */
export const fieldsOf =
  (...names: string[]) =>
  (r: Reply): Record<string, unknown> => ({
    status: r.status,
    ...Object.fromEntries(names.map((name) => [name, (r.body as Record<string, unknown>)[name]])),
  });

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

let caughtUpCount = 0;

/**
 * Waits until the real manager's worker has taken every message its primary sent it so far, and the
 * primary every message the worker sent back. A ban goes to the worker, which sends it back (lib/proxy_port.js
 * 179-186, lib/worker.js 246-248 and 315-318), and an unban made before that echo arrives is undone by it.
 * A request through `port` reaches the worker after those messages (the primary hands it the connection
 * over the same channel), and the worker reports it (its log entry) after their echoes: once the request
 * is logged, they are in. Bounded by the project's expect.poll timeout; the request is logged on `port`.
 */
export async function workerCaughtUp(managerUrl: string, targetUrl: string, port: number): Promise<void> {
  const path = `/worker-caught-up-${++caughtUpCount}`;
  const res = await viaProxy(`http://127.0.0.1:${port}`, `${targetUrl}${path}`, { idleMs: THROUGH_IDLE_MS });
  expect(res.status, `a request through ${port}: ${res.text}`).toBe(200);
  await expect
    .poll(
      async () => {
        const logs = (await call(managerUrl, 'GET', '/api/logs?limit=0')).body as { log: { entries: Array<{ request: { url: string } }> } };
        return logs.log.entries.some((e) => e.request.url.endsWith(path));
      },
      { message: `the real manager logs ${path}` },
    )
    .toBe(true);
}

/**
 * The sandbox (its network and proxy ports listening, none of `seed`'s ports) and the real manager whose
 * upstream (`--proxy`) is the sandbox's network, with `account` (its customer, Zones and arguments): what
 * each side-by-side suite starts. The sandbox is closed again when the real manager does not start.
 */
export async function startSideBySide(
  account: Omit<RealManagerOptions, 'wwwPort' | 'proxy' | 'proxyPort'>,
  seed: ReturnType<typeof defaultSeed> = defaultSeed(),
  strict?: boolean,
): Promise<{ sandbox: Sandbox; manager: RunningRealManager }> {
  seed.manager.ports = [];
  const sandbox = await startSandbox({
    accountPort: 0,
    managerPort: 0,
    networkPort: 0,
    proxyPorts: true,
    freeProxyPorts: false,
    seed,
    strict,
  });
  try {
    const manager = await startRealManager({
      wwwPort: await freePort(),
      ...account,
      proxy: '127.0.0.1',
      proxyPort: Number(new URL(sandbox.networkUrl as string).port),
    });
    return { sandbox, manager };
  } catch (err) {
    await sandbox.close();
    throw err;
  }
}

/**
 * Starts the sandbox (no ports, an empty log, proxy ports listening), the real manager upstream of it
 * (its stubbed cloud describing the sandbox's Zones, prices included), and the loopback target.
 */
export async function startPair(options: PairOptions = {}): Promise<Pair> {
  const target = await startRulesTarget();
  const { url: targetUrl, asked, answered } = target;
  const seed = defaultSeed();
  seed.manager.har = [];
  const zones: Record<string, RealManagerZone> = Object.fromEntries(
    Object.entries(ACCOUNT.zones).map(([name, z]) => [
      name,
      { ...z, cost: { gb: seed.account.zones.find((x) => x.name === name)?.price_per_gb } },
    ]),
  );
  // The seed's disabled Zones too, as the manager reads a disabled Zone: its plan's `disable` (lib/zones.js
  // 104-107, lib/mixins/web_api.js 557-561, lib/mixins/mgr_proxy.js 516-517).
  for (const z of seed.account.zones.filter((x) => x.disabled))
    zones[z.name] = {
      password: z.passwords,
      plan: { ...z.plans.at(-1), disable: true },
      perm: z.perms.join(' '),
      cost: { gb: z.price_per_gb },
    };
  let sandbox: Sandbox;
  let manager: RunningRealManager;
  try {
    ({ sandbox, manager } = await startSideBySide({ ...ACCOUNT, zones, extraArgs: options.extraArgs ?? [] }, seed, options.strict));
  } catch (err) {
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
    answered,
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
      const real = await viaProxy(`http://127.0.0.1:${port}`, `${targetUrl}${path}`, { idleMs: THROUGH_IDLE_MS });
      const sbx = await viaProxy(`http://127.0.0.1:${port + SHIFT}`, `${targetUrl}${path}`, { idleMs: THROUGH_IDLE_MS });
      return [real, sbx];
    },
    async close() {
      await manager.stop();
      await sandbox.close();
      await target.close();
    },
  };
}

/**
 * The pair of a test file: started before its tests (`beforeAll`), closed after them (`afterAll`).
 * What it returns reads the started pair, so it is used inside tests and hooks only.
 */
export function usePair(options: PairOptions = {}): Pair {
  let started: Pair | undefined;
  beforeAll(async () => {
    started = await startPair(options);
  }, 120_000);
  afterAll(async () => started?.close());
  const pair = (): Pair => {
    if (!started) throw new Error('the pair is started in beforeAll: use it inside a test or a hook');
    return started;
  };
  return {
    get sandbox() {
      return pair().sandbox;
    },
    get manager() {
      return pair().manager;
    },
    get targetUrl() {
      return pair().targetUrl;
    },
    get asked() {
      return pair().asked;
    },
    get answered() {
      return pair().answered;
    },
    both: (req) => pair().both(req),
    same: (req, expected, norm) => pair().same(req, expected, norm),
    createBoth: (port, proxy) => pair().createBoth(port, proxy),
    through: (port, path) => pair().through(port, path),
    close: () => pair().close(),
  };
}
