import { describe, expect, it } from 'vitest';
import { TOKEN, useSandbox } from '../../helpers.js';

// The provider's own n8n node (n8n-io/n8n at f3dc792, packages/nodes-base/nodes/BrightData/SearchFunctions.ts)
// and its community twin (n8nhackers/n8n-nodes-brightdata at 12e5997, nodes/BrightData/SearchFunctions.ts):
// their list searches, replayed against the sandbox and read as they read them.
const t = useSandbox();

async function apiGet(path: string): Promise<unknown> {
  // GenericFunctions: brightdataApiRequest GETs https://api.brightdata.com<path> with the Bearer key.
  const r = await fetch(`${t.sandbox.accountUrl}${path}`, { headers: { Authorization: `Bearer ${TOKEN}`, Accept: 'application/json' } });
  expect(r.status).toBe(200);
  return r.json();
}

describe('n8n BrightData node: its list searches', () => {
  it('getActiveZones (SearchFunctions.ts:25-41): name as value, type shown', async () => {
    const zones = (await apiGet('/zone/get_active_zones')) as { name: string; type: string }[];
    const results = zones.map((item) => ({ name: item.name, value: item.name, type: item.type }));
    expect(results.length).toBeGreaterThan(0);
    for (const r of results) {
      expect(r.value).toMatch(/^\w+$/);
      expect(['dc', 'res_rotating', 'mobile', 'unblocker', 'serp', 'browser_api']).toContain(r.type);
    }
  });

  it('getCountries (SearchFunctions.ts:43-82): responseData.zone_type.DC_shared.country_codes, sorted by name', async () => {
    const responseData = (await apiGet('/countrieslist')) as { zone_type: { DC_shared: { country_codes: string[] } } };
    // The node throws a TypeError here when the answer has no `zone_type` (the reference's name is `zone_types`).
    const results = responseData.zone_type.DC_shared.country_codes.map((code) => ({ name: code, value: code, type: 'DC_shared' }));
    results.sort((a, b) => a.name.localeCompare(b.name));
    expect(results.length).toBeGreaterThan(0);
    for (const r of results) expect(r.value).toMatch(/^[a-z]{2}$/);
  });
});
