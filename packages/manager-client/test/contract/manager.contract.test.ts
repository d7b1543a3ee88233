import { loadBundle, responseSchemaPointer } from '@zone-api/testkit';
import { type ContractResult, defineContractSuite } from '@zone-api/testkit/contract';
import { describe, expect, expectTypeOf, inject, it } from 'vitest';
import { createManagerClient, type ManagerClient, type OperationId, type Schemas } from '../../src/index.js';

// For Prism and the sandbox only, never a real service: it calls shutdown, restart and upgrade, and generates tokens (5 per hour on a real manager).
// One contract test per operation, through the typed client, against the target the project's
// globalSetup started (Prism serving the bundle, or the sandbox). Each 2xx body is validated against
// the bundle's schema. Port-addressed cases create their own port first, so they hold on both targets.
const baseUrl = inject('managerUrl');
const target = inject('managerTarget');
const Z = 'static_zone';

const doc = loadBundle('manager');
// The spec's own user paths (`pm`): Prism serves only those, and the suite holds every target to the spec.
const client = createManagerClient({ baseUrl, retry: false, brand: 'pm' });

type Case = (c: ManagerClient) => Promise<ContractResult>;

/** Creates a proxy port (next free one on the sandbox) and returns its number. */
async function scratchPort(c: ManagerClient): Promise<number> {
  const { data, error, response } = await c.createProxy({ body: { proxy: { zone: Z, proxy_type: 'persist' } } });
  expect(error, `createProxy answered ${response.status}`).toBeUndefined();
  const port = data?.data.port;
  expect(port).toBeTypeOf('number');
  return port as number;
}

/** The manager token, for the one operation that takes it. */
async function token(c: ManagerClient): Promise<string> {
  const { data } = await c.getNewToken();
  expect(data?.token).toBeTypeOf('string');
  return data?.token as string;
}

const cases: Record<OperationId, Case> = {
  getVersion: async (c) => {
    const r = await c.getVersion();
    expectTypeOf(r.data).toEqualTypeOf<Schemas['VersionInfo'] | undefined>();
    expect(r.data?.version).toMatch(/^\d+\.\d+\.\d+/);
    return r;
  },
  getLatestVersion: (c) => c.getLatestVersion(),
  getNodeVersion: (c) => c.getNodeVersion(),
  getNewToken: async (c) => {
    const r = await c.getNewToken();
    expect(r.data?.token).toHaveLength(14);
    return r;
  },
  addWhitelistIp: async (c) => {
    const withToken = createManagerClient({ baseUrl, retry: false, token: await token(c) });
    const r = await withToken.addWhitelistIp({ body: { ip: '203.0.113.9' } });
    expectTypeOf(r.data).toEqualTypeOf<string | undefined>();
    expect(r.data).toBe('OK');
    return r;
  },
  addAdminWhitelistIp: (c) => c.addAdminWhitelistIp({ body: { ip: '198.51.100.20' } }),
  listRunningProxies: (c) => c.listRunningProxies(),
  listProxies: (c) => c.listProxies(),
  createProxy: async (c) => {
    const r = await c.createProxy({ body: { proxy: { zone: Z, country: 'us', proxy_type: 'persist', dns: 'remote' } } });
    expect(r.data?.data.zone).toBe(Z);
    return r;
  },
  getRecentStats: (c) => c.getRecentStats(),
  deleteProxies: async (c) => {
    const ports = [await scratchPort(c), await scratchPort(c)];
    const r = await c.deleteProxies({ body: { ports: target === 'prism' ? ports.slice(0, 1) : ports } });
    expect(r.response.status).toBe(204);
    return r;
  },
  updateProxy: async (c) => {
    const port = await scratchPort(c);
    return c.updateProxy({ params: { path: { port } }, body: { proxy: { sticky_ip: true, country: 'de' } } });
  },
  deleteProxy: async (c) => {
    const r = await c.deleteProxy({ params: { path: { port: await scratchPort(c) } } });
    expect(r.data).toBeUndefined();
    return r;
  },
  getProxy: async (c) => {
    const port = await scratchPort(c);
    const r = await c.getProxy({ params: { path: { port } } });
    expect(r.data?.proxy_type).toBe('persist');
    if (target !== 'prism') expect(r.data?.port).toBe(port);
    return r;
  },
  createProxyCopy: async (c) => {
    const port = await scratchPort(c);
    const r = await c.createProxyCopy({ body: { port } });
    expect(r.data?.proxy.port).toBeTypeOf('number');
    if (target !== 'prism') expect(r.data?.proxy.port).toBeGreaterThan(port);
    return r;
  },
  getProxyStatus: async (c) => {
    const r = await c.getProxyStatus({ params: { path: { port: await scratchPort(c) } } });
    expect(r.data?.status).toBeTypeOf('string');
    return r;
  },
  banIp: async (c) => c.banIp({ params: { path: { port: await scratchPort(c) } }, body: { ip: '10.0.0.1', ms: 60_000 } }),
  banIps: async (c) => c.banIps({ params: { path: { port: await scratchPort(c) } }, body: { ip: ['10.0.0.2', '10.0.0.3'], ms: 60_000 } }),
  unbanIp: async (c) => {
    const port = await scratchPort(c);
    await c.banIp({ params: { path: { port } }, body: { ip: '10.0.0.1' } });
    return c.unbanIp({ params: { path: { port } }, body: { ip: '10.0.0.1' } });
  },
  unbanIps: async (c) => {
    const port = await scratchPort(c);
    await c.banIps({ params: { path: { port } }, body: { ip: ['10.0.0.4', '10.0.0.5'] } });
    return c.unbanIps({ params: { path: { port } }, body: { ip: ['10.0.0.4', '10.0.0.5'] } });
  },
  banIpAllPorts: (c) => c.banIpAllPorts({ body: { ip: '10.0.0.9', ms: 60_000 } }),
  getBanList: async (c) => {
    const port = await scratchPort(c);
    await c.banIp({ params: { path: { port } }, body: { ip: '10.0.0.6', domain: 'example.com' } });
    return c.getBanList({ params: { path: { port }, query: { full: '1' } } });
  },
  getRefreshSessions: async (c) => c.getRefreshSessions({ params: { path: { port: await scratchPort(c) } } }),
  refreshSessions: async (c) => c.refreshSessions({ params: { path: { port: await scratchPort(c) } } }),
  getSettings: (c) => c.getSettings(),
  updateSettings: (c) => c.updateSettings({ body: { logs: true, request_stats: true } }),
  listZones: async (c) => {
    const r = await c.listZones();
    expect(r.data?.zones.map((z) => z.name)).toContain(Z);
    return r;
  },
  refreshZones: (c) => c.refreshZones(),
  listAllocatedIps: (c) => c.listAllocatedIps({ params: { query: { zone: Z } } }),
  listAllocatedVips: (c) => c.listAllocatedVips({ params: { query: { zone: 'res_zone' } } }),
  refreshIps: async (c) => {
    const allocated = await c.listAllocatedIps({ params: { query: { zone: Z } } });
    const ip = allocated.data?.ips[0] ?? '1.2.3.4';
    return c.refreshIps({ body: { zone: Z, ips: [ip] } });
  },
  enableSsl: async (c) => {
    const r = await c.enableSsl();
    expect(r.data).toBe('ok');
    return r;
  },
  shutdownManager: (c) => c.shutdownManager(),
  restartManager: (c) => c.restartManager(),
  upgradeManager: (c) => c.upgradeManager(),
  listUsers: (c) => c.listUsers(),
  addUser: (c) => c.addUser({ body: { email: 'ops@example.com' } }),
  getGeneralLogs: async (c) => {
    const r = await c.getGeneralLogs({ params: { query: { limit: 5 } } });
    expectTypeOf(r.data).toEqualTypeOf<string | undefined>();
    expect(r.data).toBeTypeOf('string');
    return r;
  },
  getLogs: async (c) => {
    const r = await c.getLogs({ params: { query: { skip: 0, limit: 10, status_code: '2**', sort: 'uuid' } } });
    expect(r.data?.log.version).toBe('1.2');
    return r;
  },
  // The routes of the real manager's own web interface (tag "Web interface", observed).
  getMode: async (c) => {
    const r = await c.getMode();
    expect(r.data?.logged_in).toBe(true);
    return r;
  },
  getConnection: (c) => c.getConnection(),
  getDefaults: async (c) => {
    const r = await c.getDefaults();
    expect(r.data?.zone).toBeTypeOf('string');
    return r;
  },
  getConsts: async (c) => {
    const r = await c.getConsts();
    expect(r.data?.proxy).toBeTypeOf('object');
    return r;
  },
  getTlsWarning: async (c) => {
    const r = await c.getTlsWarning();
    expect(r.data).toBeTypeOf('boolean');
    return r;
  },
  getLogsSuggestions: (c) => c.getLogsSuggestions(),
  getAllCarriers: async (c) => {
    const r = await c.getAllCarriers();
    expect(Array.isArray(r.data)).toBe(true);
    return r;
  },
  getLanguageResources: async (c) => {
    const r = await c.getLanguageResources();
    expect(r.data).toBeTypeOf('object');
    return r;
  },
  getAllLocations: (c) => c.getAllLocations(),
  getSessions: async (c) => c.getSessions({ params: { path: { port: await scratchPort(c) } } }),
  changeProxyIps: async (c) => {
    const port = await scratchPort(c);
    const r = await c.changeProxyIps({ body: { port, ips: ['192.0.2.21'] } });
    expect(r.data).toBe('ok');
    return r;
  },
  resetLogs: async (c) => {
    const r = await c.resetLogs();
    expect(r.data).toBe('ok');
    return r;
  },
  getLogsReset: (c) => c.getLogsReset(),
  createErrorReport: (c) => c.createErrorReport({ body: { type: 'fe_error', message: 'render failed' } }),
};

const { validator } = defineContractSuite({ api: 'manager', doc, target, client, cases });

// Error paths: on Prism a `Prefer: code=…` header selects the named error example; the sandbox
// reaches the same status for real.
const prefer = (code: number) => (target === 'prism' ? { Prefer: `code=${code}` } : {});

describe(`manager API error paths against ${target}`, () => {
  it('400 with the observed {errors: [{msg, field}]} for a port below 1000', async () => {
    const { error, response } = await client.createProxy({ body: { proxy: { port: 80 } }, headers: prefer(400) });
    expect(response.status).toBe(400);
    expect(validator.validate(responseSchemaPointer('/api/proxies', 'post', 400, undefined, doc), error)).toBeNull();
    expect(JSON.stringify(error)).toMatch(/port/);
  });

  it('500 text for deleting an unknown port, as the real manager answers', async () => {
    const { error, response } = await client.deleteProxy({ params: { path: { port: 64999 } }, headers: prefer(500) });
    expect(response.status).toBe(500);
    expect(response.headers.get('Content-Type')).toMatch(/^text\/html/);
    // A text error comes back as a ResponseError whose message is the text the spec declares.
    expect(error).toMatchObject({ kind: 'text', status: 500 });
    expect(validator.validate(responseSchemaPointer('/api/proxies/{port}', 'delete', 500, 'text/html', doc), error?.error)).toBeNull();
    if (target !== 'prism') expect(error?.error).toMatch(/this proxy does not exist/);
  });

  it('400 with no body and no Content-Type for refreshing the sessions of an unknown port', async () => {
    const { data, response } = await client.refreshSessions({ params: { path: { port: 64999 } }, headers: prefer(400) });
    expect(response.status).toBe(400);
    expect(data).toBeUndefined();
    expect(response.headers.get('Content-Type')).toBeNull();
  });

  it('403 text "Token required" from add_wip with a wrong token, as a ResponseError without the token', async () => {
    const wrong = createManagerClient({ baseUrl, retry: false, token: 'wrong-token-xx' });
    const { data, error, response } = await wrong.addWhitelistIp({ body: { ip: '203.0.113.10' }, headers: prefer(403) });
    expect(response.status).toBe(403);
    expect(data).toBeUndefined();
    expect(error).toMatchObject({ kind: 'text', status: 403 });
    expect(error?.error).toMatch(/Token required/);
    expect(JSON.stringify(error)).not.toContain('wrong-token-xx');
  });

  it('400 naming the field for a wrong type', async () => {
    const { error, response } = await client.updateSettings({
      // @ts-expect-error request_stats is a boolean: the server must refuse a string
      body: { request_stats: 'yes' },
      headers: prefer(400),
    });
    expect(response.status).toBe(400);
    expect(response.headers.get('Content-Type')).toMatch(/^text\/html/);
    expect(error).toMatchObject({ kind: 'text', status: 400 });
    expect(validator.validate(responseSchemaPointer('/api/settings', 'put', 400, 'text/html', doc), error?.error)).toBeNull();
    if (target !== 'prism') expect(error?.error).toContain('body.request_stats');
  });
});
