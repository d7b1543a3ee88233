import https from 'node:https';
import { setupServer } from 'msw/node';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { sandboxHandlers } from '../../src/in-process/msw.js';
import { type Sandbox, seed, startSandbox } from '../../src/index.js';

// The MSW adapter: code that calls the provider's own host (global fetch, node:https as axios uses it)
// and the local manager's well-known address is answered by the sandbox in process, with the
// sandbox's faults, calls record and accounts; any other host is refused by MSW, never sent.

let s: Sandbox;
let server: ReturnType<typeof setupServer>;
const unhandled: string[] = [];
beforeAll(async () => {
  s = await startSandbox();
  server = setupServer(...sandboxHandlers(s));
  server.events.on('request:unhandled', ({ request }) => {
    unhandled.push(`${request.method} ${request.url}`);
  });
  server.listen({ onUnhandledRequest: 'error' });
});
afterAll(async () => {
  server?.close();
  await s?.close();
});

const PROVIDER = 'https://api.brightdata.com';

/** GET through node:https as axios calls it (the module object's request, read at call time): status and body. */
function viaHttps(url: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = https.request(url, { headers }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (d: string) => {
        body += d;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('sandboxHandlers(): the provider host answered in process', () => {
  it("global fetch to the provider's host: the sandbox's Zones, and the call recorded", async () => {
    const before = s.calls({ operationId: 'listActiveZones' }).length;
    const res = await fetch(`${PROVIDER}/zone/get_active_zones`, { headers: { Authorization: `Bearer ${s.credentials.token}` } });
    expect(res.status).toBe(200);
    const zones = (await res.json()) as { name: string }[];
    expect(zones.map((z) => z.name)).toContain('static_zone');
    expect(s.calls({ operationId: 'listActiveZones' })).toHaveLength(before + 1);
  });

  it('node:https (as axios sends it), with a body too: a Zone created in the sandbox', async () => {
    const got = await viaHttps(`${PROVIDER}/api/customer/balance`, { Authorization: `Bearer ${s.credentials.token}` });
    expect(got.status).toBe(200);
    expect(JSON.parse(got.body)).toMatchObject({ balance: expect.any(Number) });
    const created = await fetch(`${PROVIDER}/zone`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${s.credentials.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ zone: { name: 'via_msw' }, plan: { type: 'static', ips_type: 'shared', bandwidth: 'payperusage' } }),
    });
    expect(created.status, await created.clone().text()).toBe(201);
    expect(s.state().account.zones.map((z) => z.name)).toContain('via_msw');
  });

  it("a bad credential is the sandbox's 401, a fault in sequence fires, a dropped connection is a network error", async () => {
    expect((await fetch(`${PROVIDER}/api/customer/balance`, { headers: { Authorization: 'Bearer nope' } })).status).toBe(401);
    s.faults.account.arm({ operationId: 'getBalance', sequence: [{ status: 503 }, { drop: true }, { pass: true }] });
    const auth = { Authorization: `Bearer ${s.credentials.token}` };
    expect((await fetch(`${PROVIDER}/api/customer/balance`, { headers: auth })).status).toBe(503);
    await expect(fetch(`${PROVIDER}/api/customer/balance`, { headers: auth })).rejects.toThrow(TypeError);
    expect((await fetch(`${PROVIDER}/api/customer/balance`, { headers: auth })).status).toBe(200);
    expect(s.faults.account.clear()).toBe(1);
  });

  it("an account's own token reaches its own state", async () => {
    const a = await s.createAccount();
    const res = await fetch(`${PROVIDER}/zone/get_active_zones`, { headers: { Authorization: `Bearer ${a.token}` } });
    expect(res.status).toBe(200);
    expect(a.calls({ operationId: 'listActiveZones' })).toHaveLength(1);
    a.remove();
  });

  it("the local manager's well-known address is the sandbox's manager", async () => {
    const res = await fetch('http://127.0.0.1:22999/api/proxies');
    expect(res.status).toBe(200);
    const ports = (await res.json()) as { port: number }[];
    expect(ports.map((p) => p.port).sort()).toEqual(
      s
        .state()
        .manager.ports.map((p) => p.port)
        .sort(),
    );
  });

  it('any other host is refused by MSW and never sent', async () => {
    await expect(fetch('https://example.org/')).rejects.toThrow();
    expect(unhandled).toEqual(['GET https://example.org/']);
  });
});

describe('sandboxHandlers({ accountUrl, managerUrl }): a sandbox in another process, by its URLs', () => {
  it('sends the intercepted request on to the URL (once, not intercepted again) and hands back its answer', async () => {
    const other = await startSandbox();
    const remote = setupServer(...sandboxHandlers({ accountUrl: other.accountUrl, managerUrl: other.managerUrl }));
    server.close();
    remote.listen({ onUnhandledRequest: 'error' });
    try {
      const res = await fetch(`${PROVIDER}/zone/get_active_zones`, { headers: { Authorization: `Bearer ${other.credentials.token}` } });
      expect(res.status).toBe(200);
      expect(other.calls({ operationId: 'listActiveZones' })).toHaveLength(1);
      // node:https sends a Host header of the provider's name: the sandbox is reached with its own.
      const viaHttp = await viaHttps(`${PROVIDER}/api/customer/balance`, { Authorization: `Bearer ${other.credentials.token}` });
      expect(viaHttp.status).toBe(200);
      other.faults.account.arm({ operationId: 'getBalance', drop: true, count: 1 });
      await expect(
        fetch(`${PROVIDER}/api/customer/balance`, { headers: { Authorization: `Bearer ${other.credentials.token}` } }),
      ).rejects.toThrow(TypeError);
      expect((await fetch('http://localhost:22999/api/version')).status).toBe(200);
      expect(other.calls({ operationId: 'getVersion' })).toHaveLength(1);
    } finally {
      remote.close();
      server.listen({ onUnhandledRequest: 'error' });
      await other.close();
    }
  });
});

describe("the sandbox's own URLs under onUnhandledRequest: 'error'", () => {
  it('a control call (POST /__sandbox/accounts with a seed) is passed on, neither refused nor printed', async () => {
    const other = await startSandbox();
    const remote = setupServer(...sandboxHandlers({ accountUrl: other.accountUrl, managerUrl: other.managerUrl }));
    const printed = vi.spyOn(console, 'error');
    const warned = vi.spyOn(console, 'warn');
    server.close();
    remote.listen({ onUnhandledRequest: 'error' });
    try {
      // A whole seed (~10 KB of JSON), as the testing guide's newAccount() sends it.
      const built = seed().build();
      expect(JSON.stringify(built).length).toBeGreaterThan(5_000);
      const res = await fetch(`${other.accountUrl}/__sandbox/accounts`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ seed: built, manager: true }),
      });
      expect(res.status, await res.clone().text()).toBeLessThan(300);
      const account = (await res.json()) as { token: string; managerUrl: string };
      expect(account.token).toBeTruthy();
      // A client pointed at the sandbox's URL directly is passed on too.
      const balance = await fetch(`${other.accountUrl}/api/customer/balance`, { headers: { Authorization: `Bearer ${account.token}` } });
      expect(balance.status).toBe(200);
      expect((await fetch(`${other.managerUrl}/api/version`)).status).toBe(200);
      expect(printed).not.toHaveBeenCalled();
      expect(warned).not.toHaveBeenCalled();
    } finally {
      printed.mockRestore();
      warned.mockRestore();
      remote.close();
      server.listen({ onUnhandledRequest: 'error' });
      await other.close();
    }
  });
});

describe('startSandbox({ listen: false }): no port at all', () => {
  it('listens nowhere, and answers through the adapter', async () => {
    const quiet = await startSandbox({ listen: false });
    const local = setupServer(...sandboxHandlers(quiet));
    server.close();
    local.listen({ onUnhandledRequest: 'error' });
    try {
      expect([quiet.accountUrl, quiet.managerUrl, quiet.ports.account, quiet.ports.manager]).toEqual(['', '', 0, 0]);
      const res = await fetch(`${PROVIDER}/api/customer/balance`, { headers: { Authorization: `Bearer ${quiet.credentials.token}` } });
      expect(res.status).toBe(200);
      expect(quiet.calls({ operationId: 'getBalance' })).toHaveLength(1);
    } finally {
      local.close();
      server.listen({ onUnhandledRequest: 'error' });
      await quiet.close();
    }
  });
});
