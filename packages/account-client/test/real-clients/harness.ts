import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Sandbox, startSandbox } from '@zone-api/sandbox';
import {
  assertLoopbackOnly,
  assertRealClientsInstalled,
  type ClientProxy,
  clientEnv,
  clientHome,
  removeHome,
  startClientProxy,
} from '@zone-api/testkit/real-clients';
import { afterAll, beforeAll } from 'vitest';

export const TOKEN = 'sandbox-token-0001';
export const LIMITED_TOKEN = 'sandbox-token-0002';

/**
 * A sandbox (account API on loopback, the built-in seed) and the forward proxy that carries the clients'
 * fixed host to it, for one test file; `home()` makes a client process's private HOME, removed after the file.
 * Fails (never skips) when the suite runs outside a loopback-only namespace or without the clients.
 */
export function useRealClients(options: { strict?: boolean } = {}) {
  const ctx = {} as {
    sandbox: Sandbox;
    proxy: ClientProxy;
    /** A fresh HOME and the environment of a client process that uses it. */
    home: (extra?: Record<string, string>) => { home: string; env: Record<string, string> };
  };
  const homes: string[] = [];
  let dir = '';
  beforeAll(async () => {
    assertLoopbackOnly();
    assertRealClientsInstalled();
    dir = mkdtempSync(join(tmpdir(), 'zone-api-real-clients-'));
    ctx.sandbox = await startSandbox({ accountPort: 0, managerPort: 0, strict: options.strict === true });
    ctx.proxy = await startClientProxy({ target: ctx.sandbox.accountUrl, dir });
    ctx.home = (extra = {}) => {
      const home = clientHome();
      homes.push(home);
      return { home, env: clientEnv(ctx.proxy, home, extra) };
    };
  });
  afterAll(async () => {
    await ctx.proxy?.close();
    await ctx.sandbox?.close();
    for (const h of homes) removeHome(h);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });
  return ctx;
}

/** `METHOD /path status` of the requests the proxy carried since index `from`. */
export const calls = (proxy: ClientProxy, from = 0) =>
  proxy.exchanges.slice(from).map((e) => {
    const u = new URL(e.url);
    return `${e.method} ${u.pathname} ${e.status ?? '-'}`;
  });
