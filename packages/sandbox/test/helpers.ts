import type { AddressInfo, Server } from 'node:net';
import { createAccountClient } from '@zone-api/account-client';
import { createManagerClient } from '@zone-api/manager-client';
import { Conformance, loadBundle } from '@zone-api/testkit';
import { afterAll, beforeAll, expect } from 'vitest';
import { defaultSeed, type Sandbox, type SandboxOptions, startSandbox } from '../src/index.js';

export const docs = { account: loadBundle('account'), manager: loadBundle('manager') };
export const C = 'hl_1a2b3c4d';
export const TOKEN = 'sandbox-token-0001';
export const LIMITED_TOKEN = 'sandbox-token-0002';
export const STATIC = 'static_zone';
export const STATIC_PW = 'z8x7c6v5b4n3';
export const RES = 'res_zone';
export const RES_PW = 'r3s1d3nt9x7w';

// The check of an answer against the spec is the testkit's (also the differential suite's).
export { Conformance };

/** A sandbox that carries traffic (its network and listening ports) with no seeded ports: each test opens its own. */
export function useTrafficSandbox(options: SandboxOptions = {}) {
  const seed = defaultSeed();
  seed.manager.ports = [];
  return useSandbox({ networkPort: 0, proxyPorts: true, freeProxyPorts: false, seed, ...options });
}

/** Starts `server` (an HTTP, HTTPS or TCP server of a test's own) on a free loopback port: the port. */
export async function listenOnLoopback(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

/** A sandbox on free ports for one test file, with typed clients whose every response is checked against the spec. */
export function useSandbox(options: SandboxOptions = {}) {
  const ctx = {} as {
    sandbox: Sandbox;
    account: ReturnType<typeof createAccountClient>;
    manager: ReturnType<typeof createManagerClient>;
    conformance: { account: Conformance; manager: Conformance };
    /** A client of the account API with another credential. */
    accountAs: (auth: Parameters<typeof createAccountClient>[0]['auth']) => ReturnType<typeof createAccountClient>;
    managerWithToken: (token: string) => ReturnType<typeof createManagerClient>;
  };
  beforeAll(async () => {
    ctx.sandbox = await startSandbox({ accountPort: 0, managerPort: 0, ...options });
    ctx.conformance = { account: new Conformance(docs.account), manager: new Conformance(docs.manager) };
    const a = ctx.conformance.account;
    const m = ctx.conformance.manager;
    ctx.accountAs = (auth) => createAccountClient({ baseUrl: ctx.sandbox.accountUrl, auth, retry: false, fetch: a.fetch });
    ctx.account = ctx.accountAs({ token: TOKEN });
    // The spec's user paths (`pm`), so that the conformance check finds every operation; the real
    // program's `lpm` paths, which the client uses by default, have a test of their own.
    ctx.manager = createManagerClient({ baseUrl: ctx.sandbox.managerUrl, retry: false, fetch: m.fetch, brand: 'pm' });
    ctx.managerWithToken = (token) =>
      createManagerClient({ baseUrl: ctx.sandbox.managerUrl, retry: false, fetch: m.fetch, token, brand: 'pm' });
  });
  afterAll(async () => {
    await ctx.sandbox?.close();
    // Every response any test of the file saw, held to the spec.
    expect(ctx.conformance?.account.violations ?? []).toEqual([]);
    expect(ctx.conformance?.manager.violations ?? []).toEqual([]);
  });
  return ctx;
}

/** A raw request (for what the typed clients will not send: bad JSON, wrong types, odd headers). */
export async function raw(
  base: string,
  method: string,
  path: string,
  options: { body?: unknown; headers?: Record<string, string>; text?: string } = {},
): Promise<{ status: number; headers: Headers; text: string; json: () => Rec }> {
  const headers: Record<string, string> = { ...(options.headers ?? {}) };
  let body: string | undefined = options.text;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  const res = await fetch(`${base}${path}`, { method, headers, body });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, json: () => JSON.parse(text) };
}

/** A JSON record of a loose schema (request logs, HAR entries). */
// biome-ignore lint/suspicious/noExplicitAny: loose records are read field by field in the tests
export type Rec = Record<string, any>;

export const bearer = { Authorization: `Bearer ${TOKEN}` };
