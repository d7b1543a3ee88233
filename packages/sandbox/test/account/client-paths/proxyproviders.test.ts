import { describe, expect, it } from 'vitest';
import { C, STATIC, STATIC_PW, TOKEN, useSandbox } from '../../helpers.js';

// A proxy-list library (davidteather/proxyproviders at 822da37, proxyproviders/providers/brightdata.py):
// BrightData(api_key, zone, use_super_proxy=False).list_proxies(), replayed against the sandbox as
// _make_request sends it (lines 182-215: requests with params, a non-200 an error, the body parsed as JSON).
const t = useSandbox();

async function makeRequest(path: string, params: Record<string, string | boolean | undefined>): Promise<unknown> {
  const url = new URL(`${t.sandbox.accountUrl}${path}`);
  // requests drops None values and sends True as "True".
  for (const [k, v] of Object.entries(params)) if (v !== undefined) url.searchParams.set(k, v === true ? 'True' : String(v));
  const r = await fetch(url, { headers: { Authorization: `Bearer ${TOKEN}` } });
  const text = await r.text();
  if (r.status !== 200) throw new Error(`Failed to fetch from BrightData, got status code ${r.status}, text: ${text}`);
  return JSON.parse(text);
}

describe('proxyproviders BrightData: the proxies of each IP of a Zone', () => {
  it('status (129), zone/passwords (155) and route_ips with list_countries=True (176-180) make one proxy per IP', async () => {
    const data = (await makeRequest('/status', { zone: STATIC })) as { customer?: string };
    const username = `brd-customer-${data.customer}-zone-${STATIC}`;
    const passwords = (await makeRequest('/zone/passwords', { zone: STATIC })) as { passwords: string[] };
    const ips = (await makeRequest('/zone/route_ips', { zone: STATIC, list_countries: true, country: undefined })) as {
      ip: string;
      country: string;
    }[];
    // Lines 85-99: one proxy per IP, its username targeting the IP, its country from the answer.
    const proxies = ips.map((ip) => ({
      id: ip.ip,
      username: `${username}-ip-${ip.ip}`,
      password: passwords.passwords[0],
      country_code: ip.country,
    }));
    const zoneIps = t.sandbox.state().account.zones.find((z) => z.name === STATIC)?.ips ?? [];
    expect(proxies.map((p) => p.id).sort()).toEqual([...zoneIps].sort());
    expect(proxies[0]).toMatchObject({
      username: `brd-customer-${C}-zone-${STATIC}-ip-${proxies[0]?.id}`,
      password: STATIC_PW,
      country_code: 'us',
    });
  });
});
