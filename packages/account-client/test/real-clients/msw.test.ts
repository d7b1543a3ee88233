import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { realClientDir, runNode } from '@zone-api/testkit/real-clients';
import { describe, expect, it } from 'vitest';
import { TOKEN, useRealClients } from './harness.js';

// @brightdata/cli 0.3.7, unmodified, answered by the sandbox's MSW adapter (@zone-api/sandbox/msw) in
// its own process: a preload starts a sandbox there that listens on no port and intercepts the CLI's
// fetch calls to its built-in host. Nothing is re-pointed: the forward proxy in HTTPS_PROXY and the
// undici dispatcher of the guard's preload are in place and see nothing; the guard refuses any lookup
// or connection that is not loopback, and none is tried.
const t = useRealClients();
const mswPreload = fileURLToPath(new URL('../../../testkit/src/real-clients/msw-preload.mjs', import.meta.url));

type Call = { operationId: string; method: string; path: string; status: number; account: string };

describe('the provider CLI (@brightdata/cli 0.3.7) through the MSW adapter, no port and no base URL changed', () => {
  it('zones info and budget balance: printed from the in-process sandbox, every call recorded there, nothing sent', async () => {
    const run = async (args: string[]) => {
      const { env, home } = t.home({ BRIGHTDATA_API_KEY: TOKEN });
      const calls = join(home, 'calls.json');
      const out = await runNode([join(realClientDir('cli'), 'dist/index.js'), ...args], {
        ...env,
        NODE_OPTIONS: `${env.NODE_OPTIONS} --import ${JSON.stringify(mswPreload)}`,
        ZONE_API_MSW_CALLS: calls,
      });
      return { ...out, calls: JSON.parse(readFileSync(calls, 'utf8')) as Call[] };
    };
    const [info, balance] = await Promise.all([run(['zones', 'info', 'static_zone', '--json']), run(['budget', 'balance'])]);

    expect(info.code, info.stderr).toBe(0);
    expect(JSON.parse(info.stdout)).toMatchObject({ password: [expect.any(String)], plan: { type: 'static' } });
    expect(info.calls.map((c) => `${c.operationId} ${c.method} ${c.path} ${c.status}`)).toEqual(['getZone GET /zone 200']);

    expect(balance.code, balance.stderr).toBe(0);
    expect(balance.stdout).toMatch(/Balance\s+\$250\.00/);
    expect(balance.calls.map((c) => `${c.operationId} ${c.status}`)).toEqual(['getBalance 200']);

    // Nothing left the process: the proxy saw no request, the guard refused nothing.
    expect(t.proxy.exchanges).toEqual([]);
    expect(t.proxy.refused).toEqual([]);
    expect([...info.guarded, ...balance.guarded]).toEqual([]);
  });
});
