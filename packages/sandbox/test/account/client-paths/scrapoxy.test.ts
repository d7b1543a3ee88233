import { describe, expect, it } from 'vitest';
import { C, STATIC, STATIC_PW, TOKEN, useSandbox } from '../../helpers.js';

// A proxy-pool manager (scrapoxy/scrapoxy at f3a0853, packages/backend/connectors/src/brightdata/): its
// connector's account calls (api.ts: axios, Bearer token, paths without /api, a non-2xx thrown) replayed
// against the sandbox as the factory and the server service make them, and read as they read them.
const t = useSandbox();

async function axiosGet(path: string, params: Record<string, string> = {}): Promise<{ data: unknown }> {
  const url = new URL(path, `${t.sandbox.accountUrl}/`);
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  const r = await fetch(url, { headers: { Authorization: `Bearer ${TOKEN}` } });
  const text = await r.text();
  if (r.status < 200 || r.status > 299) throw new Error(text);
  // axios parses a JSON answer, and leaves a text one as it came.
  try {
    return { data: JSON.parse(text) };
  } catch {
    return { data: text };
  }
}

describe('scrapoxy Bright Data connector', () => {
  it('credential check and username (brightdata.factory.ts:188-191, 288-292): status active, customer', async () => {
    const status = (await axiosGet('status')).data as { status?: string; customer?: string };
    expect(status?.status).toBe('active');
    expect(status.customer).toBe(C);
  });

  it('zones to choose (factory 295-305): get_active_zones of the types it proxies through', async () => {
    const zones = (await axiosGet('zone/get_active_zones')).data as { name: string; type: string }[];
    const picked = zones.filter((z) => ['dc', 'res_static', 'res_rotating', 'mobile'].includes(z.type)).map((z) => z.name);
    expect(picked).toContain(STATIC);
  });

  it('a Zone (factory 307-356, brightdata.helpers.ts:13-40): plan.product, ips_type and bandwidth make its product; password[0]; its countries', async () => {
    const zone = (await axiosGet('zone', { zone: STATIC })).data as {
      password: string[];
      plan: { product: string; ips_type?: string; bandwidth: string };
    };
    // toBrightdataProductType: dc + shared + payperusage is the shared datacenter product; anything else it does not know throws.
    expect([zone.plan?.product, zone.plan?.ips_type, zone.plan?.bandwidth]).toEqual(['dc', 'shared', 'payperusage']);
    expect(zone.password[0]).toBe(STATIC_PW);
    // api.ts:61-65, getCountries('DC_shared'): res.data?.zone_type[productType]?.country_codes ?? [].
    const countries = (await axiosGet('countrieslist')).data as { zone_type: Record<string, { country_codes: string[] }> };
    expect(countries?.zone_type.DC_shared?.country_codes ?? []).toContain('us');
  });

  it('its proxies and their refresh (brightdata-server.service.ts:65-103, api.ts:92-124): route_ips split on newlines; a forced removal refreshes them', async () => {
    await t.sandbox.reset();
    const ips = ((await axiosGet('zone/route_ips', { zone: STATIC })).data as string).split('\n');
    const held = () => t.sandbox.state().account.zones.find((z) => z.name === STATIC)?.ips ?? [];
    expect([...ips].sort()).toEqual([...held()].sort());
    // removeProxies: the keys' IPs (key.slice(3)) refreshed, the country added unless it is 'all'.
    const gone = ips[0] as string;
    const r = await fetch(`${t.sandbox.accountUrl}/zone/ips/refresh`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ zone: STATIC, ips: [gone], country: 'us' }),
    });
    expect(r.status, await r.clone().text()).toBe(200);
    expect(held()).not.toContain(gone);
    expect(held()).toHaveLength(ips.length);
  });
});
