import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createServer as createTcpServer, type Server as TcpServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { viaProxy } from '@zone-api/testkit';
import { afterAll, describe, expect, it } from 'vitest';
import { defaultSeed, startSandbox } from '../../src/index.js';
import { running, stopChild, useChildren } from '../children.js';
import { listenOnLoopback, type Rec } from '../helpers.js';

// Sandboxes side by side, as parallel CI workers run them: every listener on a free port, the seed's
// proxy ports moved to free ones, and a taken port an error that names the option to pass.

const cli = fileURLToPath(new URL('../../dist/host/cli.js', import.meta.url));

// Every CLI child is tracked from its spawn and ended after its test, passed, failed or timed out.
const children = useChildren();

/** The bin with --free-ports: its banner once ready (within `readyMs`, else it is killed; four starting at once on a loaded machine took over 30 s), and the ports it printed. */
function startFree(readyMs = 60_000): Promise<{
  child: ChildProcess;
  banner: string;
  ports: { account: number; manager: number; network: number; proxy: Record<string, number> };
}> {
  const child = children.spawn(process.execPath, [cli, '--free-ports'], { env: { ...process.env }, stdio: ['ignore', 'pipe', 'pipe'] });
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => {
      reject(new Error(`not ready within ${readyMs} ms: ${out}`));
      void stopChild(child);
    }, readyMs);
    child.stdout?.on('data', (d) => {
      out += d;
      const line = /^ {2}ports {8}(\{.*\})$/m.exec(out);
      if (line && out.includes('control')) {
        clearTimeout(timer);
        resolve({ child, banner: out, ports: JSON.parse(line[1] as string) });
      }
    });
    child.stderr?.on('data', (d) => {
      out += d;
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`exited ${code}: ${out}`));
    });
  });
}

const servers: (Server | TcpServer)[] = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
});

describe('four sandboxes with traffic side by side (--free-ports, each in its own process)', () => {
  it('each listens on its own ports, prints where the seed ports went, and carries requests through them', async () => {
    if (!existsSync(cli)) throw new Error(`${cli} is missing: run \`pnpm build\` before the tests`);
    const target = createServer((req, res) => res.end(`target saw ${req.url}`));
    servers.push(target);
    const targetPort = await listenOnLoopback(target);
    const runs = await Promise.all(Array.from({ length: 4 }, () => startFree()));
    try {
      const all = runs.flatMap((r) => [r.ports.account, r.ports.manager, r.ports.network, ...Object.values(r.ports.proxy)]);
      expect(all).toHaveLength(4 * 5);
      expect(new Set(all).size).toBe(all.length);
      for (const r of runs) {
        expect(Object.keys(r.ports.proxy).sort()).toEqual(['24000', '24001']);
        expect(r.banner).toMatch(new RegExp(`24000->${r.ports.proxy['24000']} 24001->${r.ports.proxy['24001']}`));
        expect(r.banner).toContain(`account API  http://127.0.0.1:${r.ports.account}`);
      }
      // Traffic through every sandbox's moved seed port 24001 (res_zone: static_zone's whitelist refuses
      // loopback clients) at once, three requests each; then each sandbox's log holds its own requests only.
      const sent = runs.flatMap((r, i) => [1, 2, 3].map((n) => ({ port: r.ports.proxy['24001'] as number, path: `/from-${i}-${n}` })));
      const answers = await Promise.all(sent.map((s) => viaProxy(`http://127.0.0.1:${s.port}`, `http://127.0.0.1:${targetPort}${s.path}`)));
      expect(answers.map((a) => a.status)).toEqual(Array(12).fill(200));
      expect(answers.map((a) => a.text)).toEqual(sent.map((s) => `target saw ${s.path}`));
      for (const [i, r] of runs.entries()) {
        const proxies = (await (await fetch(`http://127.0.0.1:${r.ports.manager}/api/proxies`)).json()) as Rec[];
        expect(proxies.map((p) => p.port).sort()).toEqual(Object.values(r.ports.proxy).sort());
        const har = (await (await fetch(`http://127.0.0.1:${r.ports.manager}/api/logs?limit=1000`)).json()) as Rec;
        const mine = (har.log.entries as Rec[]).filter((e) => String(e.request.url).includes('/from-'));
        expect(mine.map((e) => new URL(e.request.url).pathname).sort()).toEqual([1, 2, 3].map((n) => `/from-${i}-${n}`));
        expect(mine.map((e) => e.details.port)).toEqual(Array(3).fill(r.ports.proxy['24001']));
      }
    } finally {
      await Promise.all(runs.map((r) => stopChild(r.child)));
    }
  }, 120_000);
});

describe('no CLI child outlives its test', () => {
  // The first test starts two children and leaves them running, as a test that timed out or threw
  // before its own cleanup does; the second finds them gone.
  const pids: (number | undefined)[] = [];
  it('a test that does not stop its children', async () => {
    const runs = await Promise.all([startFree(), startFree()]);
    pids.push(...runs.map((r) => r.child.pid));
    expect(pids.filter(running)).toHaveLength(2);
  }, 120_000);

  it('they were ended after it', () => {
    expect(pids).toHaveLength(2);
    expect(pids.filter(running)).toEqual([]);
    expect(children.live()).toEqual([]);
  });
});

describe('startSandbox() on free ports', () => {
  it('defaults to free ports for both APIs: two start side by side', async () => {
    const [a, b] = await Promise.all([startSandbox(), startSandbox()]);
    try {
      expect(a.ports.account).not.toBe(8787);
      expect(a.ports.manager).not.toBe(22999);
      expect(new Set([a.ports.account, a.ports.manager, b.ports.account, b.ports.manager]).size).toBe(4);
      expect(a.accountUrl).toBe(`http://127.0.0.1:${a.ports.account}`);
      expect((await fetch(`${b.managerUrl}/api/version`)).status).toBe(200);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  }, 60_000);

  it("two sandboxes with traffic and the built-in seed's ports, no port option: both carry requests", async () => {
    // The seed's ports (24000, …) are the same numbers in both: by default each moves them to free ones.
    const [a, b] = await Promise.all([
      startSandbox({ networkPort: 0, proxyPorts: true }),
      startSandbox({ networkPort: 0, proxyPorts: true }),
    ]);
    try {
      const ports = [a, b].map((s) => s.ports.proxy['24001'] as number);
      expect(ports[0]).not.toBe(ports[1]);
      expect(ports).not.toContain(24001);
      for (const [i, s] of [a, b].entries()) {
        const through = await viaProxy(`http://127.0.0.1:${ports[i]}`, `${s.managerUrl}/api/version`);
        expect(through.status).toBe(200);
      }
      await Promise.all([a.settled(), b.settled()]);
      for (const [i, s] of [a, b].entries()) expect(s.state().manager.har.at(-1)?.details).toMatchObject({ port: ports[i] });
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  }, 60_000);

  it('freeProxyPorts moves the seed ports, their bans and their log; a reset keeps the new numbers', async () => {
    const s = await startSandbox({ networkPort: 0, proxyPorts: true });
    try {
      const moved = s.ports.proxy['24000'] as number;
      expect(moved).not.toBe(24000);
      const res = s.ports.proxy['24001'] as number;
      expect(s.listeningPorts().sort()).toEqual(Object.values(s.ports.proxy).sort());
      const state = s.state();
      expect(state.manager.ports.map((p) => p.port).sort()).toEqual(Object.values(s.ports.proxy).sort());
      expect(state.manager.bans.map((b) => b.port)).toEqual([moved]);
      const logged = state.manager.har.map((e) => (e.details as Rec).port as number);
      expect(logged.filter((p) => p === moved).length).toBeGreaterThan(0);
      expect(logged.filter((p) => p === 24000)).toEqual([]);
      await s.reset();
      expect(
        s
          .state()
          .manager.ports.map((p) => p.port)
          .sort(),
      ).toEqual(Object.values(s.ports.proxy).sort());
      expect(s.listeningPorts().sort()).toEqual(Object.values(s.ports.proxy).sort());
      const through = await viaProxy(`http://127.0.0.1:${res}`, `${s.managerUrl}/api/version`);
      expect(through.status).toBe(200);
      expect(s.state().manager.har.at(-1)?.details).toMatchObject({ port: res });
    } finally {
      await s.close();
    }
  }, 60_000);
});

/** A TCP server holding a free loopback port (so that nothing else can take it). */
async function hold(port = 0): Promise<{ server: TcpServer; port: number }> {
  const server = createTcpServer();
  servers.push(server);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port, host: '127.0.0.1', exclusive: true }, () => resolve());
  });
  return { server, port: (server.address() as { port: number }).port };
}

describe('a sandbox listening on every interface', () => {
  it('names loopback in its URLs (0.0.0.0 as 127.0.0.1, :: as [::1]), and answers there', async () => {
    const [v4, v6] = await Promise.all([startSandbox({ host: '0.0.0.0' }), startSandbox({ host: '::' })]);
    try {
      expect(v4.managerUrl).toBe(`http://127.0.0.1:${v4.ports.manager}`);
      expect(v6.managerUrl).toBe(`http://[::1]:${v6.ports.manager}`);
      expect((await fetch(`${v6.managerUrl}/api/version`)).status).toBe(200);
    } finally {
      await Promise.all([v4.close(), v6.close()]);
    }
  }, 60_000);
});

describe('a port in use', () => {
  it('an API port in use is an error naming the option that picks a free one', async () => {
    const { port } = await hold();
    await expect(startSandbox({ accountPort: port })).rejects.toThrow(
      `The account API port ${port} on 127.0.0.1 is in use (EADDRINUSE): pass accountPort: 0 (CLI: --account-port 0) for a free port`,
    );
    await expect(startSandbox({ managerPort: port })).rejects.toThrow(
      /manager API port \d+ .*in use \(EADDRINUSE\): pass managerPort: 0 \(CLI: --manager-port 0\)/,
    );
    await expect(startSandbox({ networkPort: port })).rejects.toThrow(
      /proxy network port \d+ .*in use \(EADDRINUSE\): pass networkPort: 0 \(CLI: --network-port 0\)/,
    );
  });

  it('a seed port in use: by default the seed starts on free ports; with freeProxyPorts: false an error naming it', async () => {
    const { port } = await hold();
    const seed = defaultSeed();
    seed.manager.ports = [{ port, zone: 'static_zone' }];
    seed.manager.bans = [];
    await expect(startSandbox({ seed, networkPort: 0, proxyPorts: true, freeProxyPorts: false })).rejects.toThrow(
      new RegExp(`Proxy ports cannot listen: ${port} \\(EADDRINUSE\\): leave freeProxyPorts on \\(CLI: --free-ports\\)`),
    );
    const s = await startSandbox({ seed, networkPort: 0, proxyPorts: true });
    try {
      expect(s.ports.proxy[String(port)]).not.toBe(port);
      expect(s.listeningPorts()).toEqual([s.ports.proxy[String(port)]]);
    } finally {
      await s.close();
    }
  }, 60_000);

  it('a port created without a number skips the ports this machine already uses', async () => {
    // Two neighbouring free ports: the seed's port on the first, another program on the second.
    let pair: { first: number; second: { server: TcpServer; port: number } } | undefined;
    for (let i = 0; i < 20 && !pair; i++) {
      const a = await hold();
      const b = await hold(a.port + 1).catch(() => undefined);
      await new Promise((r) => a.server.close(r));
      if (b) pair = { first: a.port, second: b };
    }
    if (!pair) throw new Error('no two neighbouring free ports on loopback in 20 tries');
    const seed = defaultSeed();
    seed.manager.ports = [{ port: pair.first, zone: 'static_zone' }];
    seed.manager.bans = [];
    const s = await startSandbox({ seed, networkPort: 0, proxyPorts: true, freeProxyPorts: false });
    try {
      const res = await fetch(`${s.managerUrl}/api/proxies`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ proxy: { zone: 'res_zone' } }),
      });
      expect(res.status).toBe(200);
      const created = ((await res.json()) as Rec).data.port as number;
      expect(created).toBeGreaterThan(pair.second.port);
      expect(s.listeningPorts()).toContain(created);
      const through = await viaProxy(`http://127.0.0.1:${created}`, `${s.managerUrl}/api/version`);
      expect(through.status).toBe(200);
    } finally {
      await s.close();
    }
  }, 60_000);
});
