import { createServer } from 'node:http';
import { viaProxy } from '@zone-api/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Sandbox, type SandboxAccount, seed, startSandbox } from '../../src/index.js';
import { bearer, C, listenOnLoopback, RES, type Rec, raw, STATIC } from '../helpers.js';

// Accounts on one sandbox: each test its own customer, with its own state, clock, faults, calls and
// traffic, made in milliseconds on a sandbox started once.

let s: Sandbox;
let target: ReturnType<typeof createServer>;
let targetPort: number;
beforeAll(async () => {
  s = await startSandbox({ networkPort: 0 });
  target = createServer((req, res) => res.end(`hi ${req.url}`));
  targetPort = await listenOnLoopback(target);
});
afterAll(async () => {
  await s?.close();
  target?.close();
});

const as = (a: { token: string }) => ({ Authorization: `Bearer ${a.token}` });
const zoneNames = async (a: { token: string; customer: string }) =>
  (await raw(s.accountUrl, 'GET', `/api/zone/get_active_zones?customer=${a.customer}`, { headers: as(a) }))
    .json()
    .map((z: { name: string }) => z.name);

describe('createAccount()', () => {
  let a: SandboxAccount;
  let b: SandboxAccount;
  beforeAll(async () => {
    [a, b] = await Promise.all([
      s.createAccount(),
      s.createAccount(seed.empty().zone('only_b', { plan: { type: 'resident', ips_type: 'shared', bandwidth: 'payperusage' } })),
    ]);
  });

  it('gives each account a customer, token, Zones and passwords of its own', () => {
    expect(new Set([C, a.customer, b.customer]).size).toBe(3);
    expect(a.customer).toMatch(/^hl_[0-9a-f]{8}$/);
    expect(a.token).not.toBe(s.credentials.token);
    expect(Object.keys(a.credentials.zones)).toEqual(Object.keys(s.credentials.zones));
    expect(a.credentials.zones[STATIC]).not.toEqual(s.credentials.zones[STATIC]);
    expect(Object.keys(b.credentials.zones)).toEqual(['only_b']);
  });

  it('its state is its own: a Zone one account creates, the others do not see', async () => {
    const created = await raw(s.accountUrl, 'POST', '/api/zone', {
      headers: as(a),
      body: { customer: a.customer, zone: { name: 'made_by_a' }, plan: { type: 'resident', ips_type: 'shared', bandwidth: 'payperusage' } },
    });
    expect(created.status, created.text).toBe(201);
    expect(await zoneNames(a)).toContain('made_by_a');
    expect(await zoneNames(b)).toEqual(['only_b']);
    expect(await zoneNames({ token: s.credentials.token, customer: C })).not.toContain('made_by_a');
    expect(s.state().account.zones.map((z) => z.name)).not.toContain('made_by_a');
    expect(a.state().account.zones.map((z) => z.name)).toContain('made_by_a');
    await a.reset();
    expect(await zoneNames(a)).not.toContain('made_by_a');
  });

  it("another account's token is refused as a foreign customer's (401 naming customer)", async () => {
    const foreign = await raw(s.accountUrl, 'GET', `/api/zone/get_active_zones?customer=${b.customer}`, { headers: as(a) });
    expect(foreign.status).toBe(401);
    expect(foreign.json().details).toEqual([{ field: 'query.customer', reason: 'the credential does not belong to this customer' }]);
    expect((await raw(s.accountUrl, 'GET', `/api/zone/get_active_zones?customer=${a.customer}`, { headers: bearer })).status).toBe(401);
    // Without a customer the credential's own account answers.
    const own = await raw(s.accountUrl, 'GET', '/api/customer/balance', { headers: as(b) });
    expect(own.status).toBe(200);
  });

  it('its clock is its own', () => {
    const before = s.clock.now().getTime();
    a.clock.advance(86_400_000);
    expect(a.clock.now().getTime() - Date.now()).toBeGreaterThan(86_000_000);
    expect(Math.abs(s.clock.now().getTime() - before)).toBeLessThan(60_000);
    expect(Math.abs(b.clock.now().getTime() - Date.now())).toBeLessThan(60_000);
    a.clock.reset();
  });

  it('its faults and its calls are its own', async () => {
    a.faults.arm({ operationId: 'getBalance', status: 503 });
    expect(a.faults.list()).toHaveLength(1);
    expect(s.faults.account.list()).toHaveLength(1);
    expect((await raw(s.accountUrl, 'GET', '/api/customer/balance', { headers: as(a) })).status).toBe(503);
    expect((await raw(s.accountUrl, 'GET', '/api/customer/balance', { headers: as(b) })).status).toBe(200);
    expect((await raw(s.accountUrl, 'GET', '/api/customer/balance', { headers: bearer })).status).toBe(200);
    expect(a.faults.clear()).toBe(1);
    expect(a.calls({ operationId: 'getBalance' }).map((c) => c.status)).toEqual([503]);
    const bCalls = b.calls({ operationId: 'getBalance' });
    expect(bCalls.length).toBeGreaterThan(0);
    expect(bCalls.every((c) => c.account === b.customer && c.status === 200)).toBe(true);
    expect(b.calls({ operationId: 'getBalance' }).length).toBeGreaterThan(0);
  });

  it('its traffic through the network is billed to it, with its own Zone password', async () => {
    const auth = (acct: { customer: string; credentials: { zones: Record<string, string[]> } }) =>
      `Basic ${Buffer.from(`brd-customer-${acct.customer}-zone-${RES}:${acct.credentials.zones[RES]?.[0]}`).toString('base64')}`;
    const url = `http://127.0.0.1:${targetPort}/billed-to-a`;
    const through = await viaProxy(s.networkUrl as string, url, { auth: auth(a) });
    expect(through).toMatchObject({ status: 200, text: 'hi /billed-to-a' });
    // The first account's password does not open another account's Zone.
    const wrong = await viaProxy(s.networkUrl as string, url, {
      auth: `Basic ${Buffer.from(`brd-customer-${a.customer}-zone-${RES}:${s.credentials.zones[RES]?.[0]}`).toString('base64')}`,
    });
    expect(wrong.status).toBe(407);
    await s.settled();
    expect(a.state().req_logs.filter((r) => r.dst.url === url)).toHaveLength(1);
    expect(s.state().req_logs.filter((r) => r.dst.url === url)).toHaveLength(0);
  });

  it('remove(): its credentials stop working', async () => {
    const c = await s.createAccount();
    expect((await raw(s.accountUrl, 'GET', '/api/customer/balance', { headers: as(c) })).status).toBe(200);
    c.remove();
    expect((await raw(s.accountUrl, 'GET', '/api/customer/balance', { headers: as(c) })).status).toBe(401);
  });
});

describe('POST /__sandbox/accounts (for code that is not Node)', () => {
  it('creates an account whose token works; state and clock take ?account=; DELETE removes it', async () => {
    const made = await raw(s.managerUrl, 'POST', '/__sandbox/accounts', { body: {} });
    expect(made.status, made.text).toBe(200);
    const { customer, token } = made.json();
    expect((await raw(s.accountUrl, 'GET', '/api/customer/balance', { headers: { Authorization: `Bearer ${token}` } })).status).toBe(200);
    expect((await raw(s.accountUrl, 'GET', '/__sandbox/accounts')).json().accounts).toContain(customer);
    expect((await raw(s.accountUrl, 'GET', `/__sandbox/state?account=${customer}`)).json().account.customer).toBe(customer);
    const moved = await raw(s.accountUrl, 'POST', `/__sandbox/clock?account=${customer}`, { body: { advance_ms: 3_600_000 } });
    expect(moved.status).toBe(200);
    expect(Math.abs(s.clock.now().getTime() - Date.now())).toBeLessThan(60_000);
    expect((await raw(s.accountUrl, 'GET', '/__sandbox/state?account=hl_nobody')).status).toBe(404);
    expect((await raw(s.accountUrl, 'DELETE', `/__sandbox/accounts/${customer}`)).json()).toEqual({ removed: customer });
    expect((await raw(s.accountUrl, 'GET', '/api/customer/balance', { headers: { Authorization: `Bearer ${token}` } })).status).toBe(401);
  });

  it('a seed of your own is checked, every reference named', async () => {
    const bad = seed().build();
    bad.manager.ports.push({ port: 24999, zone: 'nope' });
    const r = await raw(s.accountUrl, 'POST', '/__sandbox/accounts', { body: { seed: bad } });
    expect(r.status).toBe(400);
    expect(r.json().details[0]).toMatchObject({
      field: 'body.seed',
      reason: expect.stringContaining('/manager/ports/2/zone: Zone nope does not exist'),
    });
  });
});

describe("createAccount(seed, { manager: true }): a manager of the account's own", () => {
  let t: Sandbox;
  beforeAll(async () => {
    t = await startSandbox({ networkPort: 0, proxyPorts: true, freeProxyPorts: true });
  });
  afterAll(async () => {
    await t?.close();
  });
  const get = async (url: string) => (await fetch(url)).json() as Promise<Rec>;

  it('has its own manager API and proxy ports, on free ports, apart from the first account and from each other', async () => {
    const [a, b] = await Promise.all([t.createAccount(undefined, { manager: true }), t.createAccount(undefined, { manager: true })]);
    if (!a.manager || !b.manager) throw new Error('no manager of its own');
    expect(new Set([t.managerUrl, a.manager.url, b.manager.url]).size).toBe(3);
    expect(Object.keys(a.manager.ports.proxy).sort()).toEqual(['24000', '24001']);
    const all = [...Object.values(t.ports.proxy), ...Object.values(a.manager.ports.proxy), ...Object.values(b.manager.ports.proxy)];
    expect(all).toHaveLength(6);
    expect(new Set(all).size).toBe(6);
    expect(a.manager.listeningPorts().sort()).toEqual(Object.values(a.manager.ports.proxy).sort());
    const proxies = (await get(`${a.manager.url}/api/proxies`)) as Rec[];
    expect(proxies.map((p) => p.port).sort()).toEqual(Object.values(a.manager.ports.proxy).sort());
    expect((await get(`${a.manager.url}/api/settings`)).customer).toBe(a.customer);
    await Promise.all([a.remove(), b.remove()]);
  });

  it('its traffic goes through its own ports, billed and logged to it alone', async () => {
    const a = await t.createAccount(undefined, { manager: true });
    const b = await t.createAccount(undefined, { manager: true });
    if (!a.manager || !b.manager) throw new Error('no manager of its own');
    const url = `http://127.0.0.1:${targetPort}/through-a`;
    // res_zone's port (24001 in the seed): static_zone's whitelist refuses loopback clients.
    const through = await viaProxy(`http://127.0.0.1:${a.manager.ports.proxy['24001']}`, url);
    expect(through).toMatchObject({ status: 200, text: 'hi /through-a' });
    await t.settled();
    const logged = async (managerUrl: string) =>
      ((await get(`${managerUrl}/api/logs?limit=1000`)).log.entries as Rec[]).filter((e) => e.request.url === url);
    expect((await logged(a.manager.url)).map((e) => e.details.port)).toEqual([a.manager.ports.proxy['24001']]);
    expect(await logged(b.manager.url)).toEqual([]);
    expect(await logged(t.managerUrl)).toEqual([]);
    expect(a.state().req_logs.filter((r) => r.dst.url === url)).toHaveLength(1);
    expect(b.state().req_logs.filter((r) => r.dst.url === url)).toHaveLength(0);
    expect(t.state().req_logs.filter((r) => r.dst.url === url)).toHaveLength(0);
    await Promise.all([a.remove(), b.remove()]);
  });

  it('a port it creates listens for it alone; reset() closes it and maps the seed ports again; remove() closes all', async () => {
    const a = await t.createAccount(undefined, { manager: true });
    if (!a.manager) throw new Error('no manager of its own');
    const created = await raw(a.manager.url, 'POST', '/api/proxies', { body: { proxy: { zone: RES } } });
    expect(created.status, created.text).toBe(200);
    const port = created.json().data.port as number;
    expect(a.manager.listeningPorts()).toContain(port);
    expect(((await get(`${t.managerUrl}/api/proxies`)) as Rec[]).map((p) => p.port)).not.toContain(port);
    expect(t.listeningPorts()).not.toContain(port);
    expect((await viaProxy(`http://127.0.0.1:${port}`, `http://127.0.0.1:${targetPort}/new-port`)).status).toBe(200);
    await a.reset();
    expect(a.manager.listeningPorts().sort()).toEqual(Object.values(a.manager.ports.proxy).sort());
    expect(
      a
        .state()
        .manager.ports.map((p) => p.port)
        .sort(),
    ).toEqual(Object.values(a.manager.ports.proxy).sort());
    const { url, ports } = a.manager;
    await a.remove();
    await expect(fetch(`${url}/api/version`)).rejects.toThrow();
    expect((await viaProxy(`http://127.0.0.1:${ports.proxy['24001']}`, `http://127.0.0.1:${targetPort}/gone`)).status).not.toBe(200);
  });

  it('POST /__sandbox/accounts {manager: true} answers its manager URL and ports; DELETE closes them', async () => {
    const made = await raw(t.managerUrl, 'POST', '/__sandbox/accounts', { body: { manager: true } });
    expect(made.status, made.text).toBe(200);
    const { customer, managerUrl, ports } = made.json();
    expect(Object.keys(ports.proxy).sort()).toEqual(['24000', '24001']);
    expect(ports.manager).toBe(Number(new URL(managerUrl).port));
    expect((await get(`${managerUrl}/api/settings`)).customer).toBe(customer);
    expect((await raw(t.managerUrl, 'GET', '/__sandbox/settled')).json()).toEqual({ settled: true });
    expect((await raw(t.accountUrl, 'DELETE', `/__sandbox/accounts/${customer}`)).status).toBe(200);
    await expect(fetch(`${managerUrl}/api/version`)).rejects.toThrow();
  });
});

describe("another account's customer, named with a token", () => {
  it('gets exactly what a customer that does not exist gets (status and body): nothing tells them apart', async () => {
    const [a, b] = await Promise.all([s.createAccount(), s.createAccount()]);
    for (const path of ['/api/zone/get_active_zones?customer=', '/api/zone?zone=static_zone&customer=']) {
      const foreign = await raw(s.accountUrl, 'GET', `${path}${b.customer}`, { headers: as(a) });
      const nobody = await raw(s.accountUrl, 'GET', `${path}hl_00000000`, { headers: as(a) });
      const first = await raw(s.accountUrl, 'GET', `${path}${C}`, { headers: as(a) });
      expect(foreign.status).toBe(401);
      expect([nobody.status, first.status]).toEqual([401, 401]);
      expect(foreign.text).toBe(nobody.text);
      expect(first.text).toBe(nobody.text);
    }
    await Promise.all([a.remove(), b.remove()]);
  });
});
