import { loadBundle } from '@zone-api/testkit';
import { type ContractResult, defineContractSuite } from '@zone-api/testkit/contract';
import { describe, expect, expectTypeOf, inject, it } from 'vitest';
import { type AccountClient, createAccountClient, type OperationId, type Schemas } from '../../src/index.js';

// For Prism and the sandbox only, never a real service: it creates Zones it does not delete, suspends and reactivates the account, and refreshes gIPs (which costs money on a real account).
// One contract test per operation, through the typed client, against the target the project's
// globalSetup started (Prism serving the bundle, or the sandbox). Each 2xx body is validated
// against the bundle's schema. The names below are the account and Zones of the examples
// and of the sandbox's seed, so the same calls are valid on both targets.
const baseUrl = inject('accountUrl');
const target = inject('accountTarget');
const C = 'hl_1a2b3c4d';
const Z = 'static_zone';
const RZ = 'res_zone';
const TOKEN = 'sandbox-token-0001';

const doc = loadBundle('account');
const client = createAccountClient({ baseUrl, auth: { token: TOKEN }, retry: false });

type Case = (c: AccountClient) => Promise<ContractResult>;

/** A fresh Zone for operations that change or delete one (Prism answers from examples either way). */
async function scratchZone(c: AccountClient, prefix: string): Promise<string> {
  const name = `${prefix}_${Math.random().toString(36).slice(2, 8)}`;
  const { response } = await c.createZone({
    body: {
      customer: C,
      zone: { name, password: ['pw_scratch_1'] },
      plan: { type: 'static', ips_type: 'shared', bandwidth: 'payperusage', ips: 1 },
    },
  });
  expect(response.status).toBe(201);
  return name;
}

const cases: Record<OperationId, Case> = {
  getZoneBandwidth: (c) =>
    c.getZoneBandwidth({ params: { query: { customer: C, zone: Z, details: 1, from: '2024-05-01', to: '2024-05-31' } } }),
  getCustomerBandwidth: (c) => c.getCustomerBandwidth({ params: { query: { customer: C } } }),
  getZoneCost: (c) => c.getZoneCost({ params: { query: { customer: C, zone: Z } } }),
  listRequestLogs: (c) =>
    c.listRequestLogs({
      params: { query: { customer: C, zone: Z, page: 1, page_size: 10, 'status.code': '200', 'dst.host': 'example.com' } },
    }),
  getRequestLogStats: (c) => c.getRequestLogStats({ params: { query: { customer: C, status_breakdown: 1 } } }),
  getAvailableIpCount: async (c) => {
    const r = await c.getAvailableIpCount({ params: { query: { customer: C, zone: Z, plan: { ips_type: 'shared', country: 'us' } } } });
    expectTypeOf(r.data).toEqualTypeOf<Schemas['AvailableIpCount'] | undefined>();
    expect(typeof r.data?.count).toBe('number');
    return r;
  },
  getAvailableIpCountShortForm: (c) => c.getAvailableIpCountShortForm({ params: { query: { customer: C, zone: Z } } }),
  listRecentIps: (c) => c.listRecentIps({ params: { query: { customer: C, zones: '*' } } }),
  getRouteIps: async (c) => {
    const r = await c.getRouteIps({ params: { query: { customer: C, zone: Z } } });
    expectTypeOf(r.data).toEqualTypeOf<string | Schemas['RouteIpList'] | undefined>();
    // One IP per line (the reference's form, the sandbox's default), or the seed's range (Prism's first example may be either).
    expect(r.data).toMatch(/^\d+\.\d+\.\d+\.\d+((\n\d+\.\d+\.\d+\.\d+)*|\/\d+|-\d+\.\d+\.\d+\.\d+)$/);
    const listed = await c.getRouteIps({ params: { query: { customer: C, zone: Z, list_countries: true } } });
    expect(listed.response.status).toBe(200);
    return r;
  },
  listRouteVips: (c) => c.listRouteVips({ params: { query: { customer: C, zone: RZ } } }),
  listZoneIps: async (c) => {
    const r = await c.listZoneIps({ params: { query: { customer: C, zone: Z } } });
    const perCountry = await c.listZoneIps({ params: { query: { customer: C, zone: Z, ip_per_country: 1 } } });
    expect(perCountry.response.status).toBe(200);
    return r;
  },
  addZoneIps: (c) => c.addZoneIps({ body: { customer: C, zone: Z, count: 1, country: 'us' } }),
  removeZoneIps: async (c) => {
    const listed = await c.listZoneIps({ params: { query: { customer: C, zone: Z } } });
    const ips = listed.data && 'ips' in listed.data ? listed.data.ips : [];
    const ip = (ips as Array<{ ip: string }>)[0]?.ip ?? '1.2.3.4';
    return c.removeZoneIps({ body: { customer: C, zone: Z, ips: [ip] } });
  },
  removeZoneVips: async (c) => {
    const listed = await c.listRouteVips({ params: { query: { customer: C, zone: RZ } } });
    const vip = listed.data?.at(-1) ?? 'us_7922_ny_newyork_1';
    return c.removeZoneVips({ body: { customer: C, zone: RZ, vips: [vip] } });
  },
  refreshZoneIps: async (c) => {
    const listed = await c.listRouteVips({ params: { query: { customer: C, zone: RZ } } });
    const vip = listed.data?.[0] ?? 'us_7922_ny_newyork_1';
    const gips = await c.refreshZoneIps({ body: { customer: C, zone: RZ, vips: [vip] } });
    expect(gips.response.status).toBe(200);
    return c.refreshZoneIps({ body: { customer: C, zone: Z } });
  },
  listUnavailableIps: (c) => c.listUnavailableIps({ params: { query: { customer: C } } }),
  listProxiesPendingReplacement: (c) => c.listProxiesPendingReplacement({ params: { query: { customer: C } } }),
  listPeers: (c) => c.listPeers({ params: { query: { zone: Z, country: 'us' } } }),
  listAllPeers: (c) => c.listAllPeers(),
  getZone: async (c) => {
    const r = await c.getZone({ params: { query: { customer: C, zone: Z } } });
    expectTypeOf(r.data).toExtend<Schemas['Zone'] | undefined>(); // StoredPlan's allOf arrives flattened
    expect(Array.isArray(r.data?.plans)).toBe(true);
    return r;
  },
  createZone: (c) =>
    c.createZone({
      body: {
        customer: C,
        zone: { name: `contract_${Date.now()}`, ips: 'any', password: 'pw_new_1' },
        plan: { type: 'static', ips_type: 'shared', bandwidth: 'payperusage', ips: 1 },
      },
    }),
  deleteZone: async (c) => c.deleteZone({ body: { customer: C, zone: await scratchZone(c, 'del') } }),
  getZonePasswords: (c) => c.getZonePasswords({ params: { query: { customer: C, zone: Z } } }),
  getZonePermissions: (c) => c.getZonePermissions({ params: { query: { customer: C, zone: Z } } }),
  getZoneStatus: (c) => c.getZoneStatus({ params: { query: { customer: C, zone: Z } } }),
  listActiveZones: (c) => c.listActiveZones({ params: { query: { customer: C } } }),
  listAllZones: (c) => c.listAllZones({ params: { query: { customer: C } } }),
  switchZoneUptime: async (c) => c.switchZoneUptime({ body: { customer: C, zone: await scratchZone(c, 'up'), active: 1 } }),
  changeZoneDisable: async (c) => c.changeZoneDisable({ body: { customer: C, zone: await scratchZone(c, 'off'), disable: 1 } }),
  addZoneDomainPermission: (c) =>
    c.addZoneDomainPermission({ body: { customer: C, zone: Z, type: 'whitelist', domain: 'contract.example.org' } }),
  removeZoneDomainPermission: async (c) => {
    await c.addZoneDomainPermission({ body: { customer: C, zone: Z, type: 'blacklist', domain: 'gone.example.net' } });
    return c.removeZoneDomainPermission({ body: { customer: C, zone: Z, type: 'blacklist', domain: 'gone.example.net' } });
  },
  getZoneWhitelist: (c) => c.getZoneWhitelist({ params: { query: { customer: C, zones: Z } } }),
  addZoneWhitelistIp: (c) => c.addZoneWhitelistIp({ body: { customer: C, zone: Z, ip: '203.0.113.77' } }),
  removeZoneWhitelistIp: async (c) => {
    await c.addZoneWhitelistIp({ body: { customer: C, zone: Z, ip: '203.0.113.78' } });
    return c.removeZoneWhitelistIp({ body: { customer: C, zone: Z, ip: '203.0.113.78' } });
  },
  getBalance: async (c) => {
    const r = await c.getBalance({ params: { query: { customer: C } } });
    expectTypeOf(r.data).toEqualTypeOf<Schemas['Balance'] | undefined>();
    expect(typeof r.data?.pending_costs).toBe('number');
    // The provider's CLI reads only pending_balance (budget.js:72-73): answered beside pending_costs.
    expect(r.data?.pending_balance).toBe(r.data?.pending_costs);
    return r;
  },
  getAccountStatus: (c) => c.getAccountStatus({ params: { query: { customer: C } } }),
  setAccountStatus: async (c) => {
    // Leave the account active whatever the target: suspend, then (the case checked) activate.
    await c.setAccountStatus({ body: { customer: C, status: 'suspend_manual' } });
    return c.setAccountStatus({ body: { customer: C, status: 'active' } });
  },
  getNetworkStatus: (c) => c.getNetworkStatus({ params: { path: { network_type: 'res' } } }),
  listCities: (c) => c.listCities({ params: { query: { country: 'us' } } }),
  listAvailableCountries: (c) => c.listAvailableCountries({ params: { query: { customer: C } } }),
  getDomainUsage: (c) =>
    c.getDomainUsage({ params: { path: { metric: 'bw' }, query: { customer: C, from: '2024-05-01', to: '2024-05-31', zones: Z } } }),
};

const { validator } = defineContractSuite({ api: 'account', doc, target, client, cases });

// Error paths: on Prism a `Prefer: code=…` header selects the named error example; the sandbox
// reaches the same status for real (unknown Zone, bad credential, bad body).
const prefer = (code: number) => (target === 'prism' ? { Prefer: `code=${code}` } : {});

describe(`account API error paths against ${target}`, () => {
  it('404 for an unknown Zone, typed as Error', async () => {
    const { data, error, response } = await client.getZone({
      params: { query: { customer: C, zone: 'no_such_zone' } },
      headers: prefer(404),
    });
    expect(response.status).toBe(404);
    expect(data).toBeUndefined();
    expectTypeOf(error).toExtend<Schemas['Error'] | undefined>();
    expect(error?.error).toMatch(/not found/i);
    expect(validator.validate('#/components/schemas/Error', error)).toBeNull();
  });

  it('401 for a bad credential', async () => {
    const bad = createAccountClient({ baseUrl, auth: { token: 'not-a-valid-token' }, retry: false });
    const { error, response } = await bad.getBalance({ params: { query: { customer: C } }, headers: prefer(401) });
    expect(response.status).toBe(401);
    expect(error?.error).toBeTypeOf('string');
    expect(JSON.stringify(error)).not.toContain('not-a-valid-token');
  });

  it('400 naming the field for a bad body', async () => {
    const { error, response } = await client.createZone({
      // @ts-expect-error the plan type is not one of the enum values: the server must refuse it
      body: { customer: C, zone: { name: 'bad_plan_zone' }, plan: { type: 'mobile-ish' } },
      headers: prefer(400),
    });
    expect(response.status).toBe(400);
    expect(validator.validate('#/components/schemas/Error', error)).toBeNull();
  });

  // As the provider's own clients send these calls and read their answers (x-observed-source in the spec).
  it('409 "Duplicate zone name" for a second Zone of a name (Python SDK zone_manager.py:199-212)', async () => {
    const { error, response } = await client.createZone({
      body: { zone: { name: Z, type: 'unblocker' }, plan: { type: 'unblocker' } },
      headers: prefer(409),
    });
    expect(response.status).toBe(409);
    expect(error?.error).toMatch(/duplicate|already exists/i);
  });

  it('422 from zone/passwords for a Zone that does not exist (MCP server browser_tools.js:35-47)', async () => {
    const { error, response } = await client.getZonePasswords({ params: { query: { zone: 'mcp_browser_missing' } }, headers: prefer(422) });
    expect(response.status).toBe(422);
    expect(validator.validate('#/components/schemas/Error', error)).toBeNull();
  });

  it('400 whose text says "not found" deleting a Zone that does not exist (Python SDK zone_manager.py:401-410)', async () => {
    const { error, response } = await client.deleteZone({ body: { zone: 'no_such_zone' }, headers: prefer(400) });
    expect(response.status).toBe(400);
    expect(error?.error.toLowerCase()).toContain('not found');
  });

  it('403 "lacks the required permissions" reading the balance with a token without the permission', async () => {
    const limited = createAccountClient({ baseUrl, auth: { token: 'sandbox-token-0002' }, retry: false });
    const { error, response } = await limited.getBalance({ params: { query: { customer: C } }, headers: prefer(403) });
    expect(response.status).toBe(403);
    expect(error?.error).toMatch(/lacks the required permissions/);
  });

  it('403 without the peers_all permission', async () => {
    const zoneAuth = createAccountClient({ baseUrl, auth: { zone: { customer: C, zone: Z, password: 'z8x7c6v5b4n3' } }, retry: false });
    const { error, response } = await zoneAuth.listAllPeers({ headers: prefer(403) });
    expect(response.status).toBe(403);
    expect(error?.error).toMatch(/permission/i);
  });
});
