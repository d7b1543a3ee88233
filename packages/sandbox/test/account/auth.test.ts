import { describe, expect, it } from 'vitest';
import { C, LIMITED_TOKEN, RES, raw, STATIC, STATIC_PW, TOKEN, useSandbox } from '../helpers.js';

// The account API's three schemes, its 401s and its 403s.
const t = useSandbox();
const zoneCred = (zone = STATIC, password = STATIC_PW, country?: string) => ({
  zone: { customer: C, zone, password, ...(country ? { country } : {}) },
});

describe('schemes', () => {
  it('bearer token', async () => {
    const r = await t.account.getBalance({ params: { query: { customer: C } } });
    expect(r.response.status).toBe(200);
    expect(r.response.headers.get('Deprecation')).toBeNull();
  });

  it('basic credentials are accepted and answered with a Deprecation header', async () => {
    const { username, password } = t.sandbox.credentials.basic[0] as { username: string; password: string };
    const r = await t.accountAs({ basic: { username, password } }).getZone({ params: { query: { customer: C, zone: STATIC } } });
    expect(r.response.status).toBe(200);
    expect(r.response.headers.get('Deprecation')).toBe('@1609459200');
    const wrong = await t.accountAs({ basic: { username, password: 'nope' } }).getZone({ params: { query: { zone: STATIC } } });
    expect(wrong.response.status).toBe(401);
  });

  it('the X-Service-Auth Zone credential names customer and Zone: the request omits them', async () => {
    const z = t.accountAs(zoneCred());
    const zone = await z.getZonePasswords({ params: { query: {} } });
    expect(zone.data).toEqual({ passwords: [STATIC_PW] });
    // Even where the spec marks customer and zone as required query parameters.
    const count = await raw(t.sandbox.accountUrl, 'GET', '/api/zone/count_available_ips', {
      headers: { 'X-Service-Auth': `service-customer-${C}-zone-${STATIC}-key-${STATIC_PW}` },
    });
    expect(count.status).toBe(200);
    expect(count.json().count).toBeTypeOf('number');
    // Body operations take the Zone from the header too.
    const perm = await z.addZoneDomainPermission({ body: { type: 'whitelist', domain: 'zone-auth.example' } });
    expect(perm.data?.whitelist).toContain('zone-auth.example');
    // The credential is for one Zone: another one is refused, `*` means just this one.
    const other = await z.getZone({ params: { query: { zone: RES } } });
    expect(other.response.status).toBe(400);
    expect(other.error?.details?.[0]?.field).toBe('query.zone');
    expect(Object.keys((await z.getZoneWhitelist({ params: { query: { zones: '*' } } })).data ?? {})).toEqual([STATIC]);
  });

  it('the -country- suffix of the header selects the country of route_ips', async () => {
    await t.sandbox.reset();
    await t.account.addZoneIps({ body: { zone: STATIC, count: 2, country: 'de' } });
    const de = await t.accountAs(zoneCred(STATIC, STATIC_PW, 'de')).getRouteIps({ params: { query: {} } });
    const deIps = String(de.data).split('\n');
    expect(deIps).toHaveLength(2);
    for (const ip of deIps) expect(ip).toMatch(/^192\.0\.2\.\d+$/);
    const all = await t.accountAs(zoneCred()).getRouteIps({ params: { query: { expand: 1 } } });
    expect(String(all.data).split('\n')).toHaveLength(6);
    const expanded = await t.accountAs(zoneCred(STATIC, STATIC_PW, 'de')).getRouteIps({ params: { query: { expand: 1 } } });
    expect(String(expanded.data).split('\n')).toHaveLength(2);
  });
});

describe('401 without a valid credential', () => {
  const cases: Array<[string, Record<string, string>, string | undefined]> = [
    ['no credential', {}, undefined],
    ['unknown token', { Authorization: 'Bearer not-a-token' }, 'header.Authorization'],
    ['unknown scheme', { Authorization: 'Digest abc' }, 'header.Authorization'],
    ['malformed basic', { Authorization: 'Basic !!!' }, 'header.Authorization'],
    ['zone header, wrong password', { 'X-Service-Auth': `service-customer-${C}-zone-${STATIC}-key-wrong` }, 'header.X-Service-Auth'],
    ['zone header, unknown Zone', { 'X-Service-Auth': `service-customer-${C}-zone-nope-key-${STATIC_PW}` }, 'header.X-Service-Auth'],
    [
      'zone header, other customer',
      { 'X-Service-Auth': `service-customer-hl_other-zone-${STATIC}-key-${STATIC_PW}` },
      'header.X-Service-Auth',
    ],
    ['zone header, wrong layout', { 'X-Service-Auth': 'garbage' }, 'header.X-Service-Auth'],
  ];
  it.each(cases)('%s', async (_, headers, field) => {
    const r = await raw(t.sandbox.accountUrl, 'GET', `/api/zone?customer=${C}&zone=${STATIC}`, { headers });
    expect(r.status).toBe(401);
    expect(r.json().error).toBe('Auth method is not supported');
    if (field) expect(r.json().details[0].field).toBe(field);
    expect(r.text).not.toContain('not-a-token');
    expect(r.text).not.toContain(STATIC_PW);
  });

  it('a token of this account naming another customer', async () => {
    const r = await t.account.getBalance({ params: { query: { customer: 'hl_someone_else' } } });
    expect(r.response.status).toBe(401);
    expect(r.error?.details?.[0]?.field).toBe('query.customer');
    const body = await t.account.setAccountStatus({ body: { customer: 'hl_someone_else', status: 'suspend_manual' } });
    expect(body.response.status).toBe(401);
    expect((await t.account.getAccountStatus({ params: { query: { customer: C } } })).data?.status).toBe('active');
  });

  it('auth comes before validation: a bad body without a credential is a 401', async () => {
    const r = await raw(t.sandbox.accountUrl, 'POST', '/api/zone', { text: '{not json', headers: { 'content-type': 'application/json' } });
    expect(r.status).toBe(401);
  });
});

describe('403 without a permission', () => {
  it('peers and peers_all: token with both, limited token with none, static_zone credential without peers_all', async () => {
    expect((await t.account.listAllPeers()).response.status).toBe(200);
    const limited = t.accountAs({ token: LIMITED_TOKEN });
    for (const r of [await limited.listPeers({ params: { query: {} } }), await limited.listAllPeers()]) {
      expect(r.response.status).toBe(403);
      expect(r.error?.error).toMatch(/permission/);
    }
    const staticZone = t.accountAs(zoneCred());
    expect((await staticZone.listPeers({ params: { query: {} } })).response.status).toBe(200);
    const all = await staticZone.listAllPeers();
    expect(all.response.status).toBe(403);
    expect(all.error?.error).toMatch(/peers_all/);
    const resZone = t.accountAs(zoneCred(RES, t.sandbox.credentials.zones[RES]?.[0] as string));
    expect((await resZone.listAllPeers()).response.status).toBe(200);
    // A Zone credential sees its own Zone's peers.
    const own = (await resZone.listPeers({ params: { query: {} } })).data as string[];
    expect(own).toHaveLength(18);
  });

  it('only account admins change the account status', async () => {
    const limited = await t.accountAs({ token: LIMITED_TOKEN }).setAccountStatus({ body: { status: 'suspend_manual' } });
    expect(limited.response.status).toBe(403);
    const zone = await t.accountAs(zoneCred()).setAccountStatus({ body: { status: 'suspend_manual' } });
    expect(zone.response.status).toBe(403);
    expect((await t.account.getAccountStatus({ params: { query: { customer: C } } })).data?.status).toBe('active');
    expect(TOKEN).toBe(t.sandbox.credentials.token);
  });
});
