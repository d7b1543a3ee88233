import { describe, expect, it } from 'vitest';
import { C, STATIC, TOKEN, useSandbox } from '../../helpers.js';

// The Ruby gem (doublemarket/luminati-ruby at 916778c, lib/luminati/): each method replayed against the
// sandbox as Client#request sends it (client.rb:42-70: Faraday, Bearer token, Content-Type JSON on every
// request, paths under /api) and read as it reads the answer (a 200 parsed as JSON, a text kept as it
// came, anything else a hash with status_code), and as the gem's own spec reads it.
const t = useSandbox();

type Answer = Record<string, unknown> | unknown[] | string;
async function request(method: string, path: string, body?: string): Promise<Answer> {
  const r = await fetch(`${t.sandbox.accountUrl}${path}`, {
    method: method.toUpperCase(),
    headers: { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' },
    ...(body === undefined ? {} : { body }),
  });
  const text = await r.text();
  if (r.status !== 200) return { status_code: r.status, status_message: r.statusText, response_body: text };
  try {
    return JSON.parse(text);
  } catch {
    // "when the body isn't JSON (e.g. GET /api/zone/route_ips)"
    return text;
  }
}
const hash = (a: Answer) => {
  expect(typeof a === 'object' && a !== null && !Array.isArray(a) && !('status_code' in a), JSON.stringify(a)).toBe(true);
  return a as Record<string, unknown>;
};

describe('luminati-ruby: its calls, read as it and its spec read them', () => {
  it('zone_ips (ips.rb:12-16; ips_spec.rb:27-51): the records, and with ip_per_country the bare &ip_per_country counts per country', async () => {
    expect(hash(await request('get', `/api/zone/ips?zone=${STATIC}`)).ips).not.toEqual([]);
    const perCountry = hash(await request('get', `/api/zone/ips?zone=${STATIC}&ip_per_country`));
    expect(Number.isInteger(perCountry.us)).toBe(true);
  });

  it('unavailable_zones_ips (ips.rb:21-23): a Hash, {} when no Zone has trouble', async () => {
    expect(hash(await request('get', '/api/zone/ips/unavailable'))).toEqual({});
  });

  it('add_ips and remove_ips (ips.rb:29-44; ips_spec.rb:102-145): the ips of each answer', async () => {
    await t.sandbox.reset();
    const added = hash(await request('post', '/api/zone/ips', JSON.stringify({ customer: C, zone: STATIC, count: 1, country: 'us' })));
    expect(added.ips).not.toEqual([]);
    const [fresh] = added.new_ips as string[];
    const removed = hash(await request('delete', '/api/zone/ips', JSON.stringify({ zone: STATIC, ips: [fresh] })));
    expect(removed.ips).not.toEqual([]);
  });

  it('zone_available_ips (zone.rb:58-63): route_ips as text, one IP per line; expanded alike', async () => {
    for (const path of [`/api/zone/route_ips?zone=${STATIC}`, `/api/zone/route_ips?zone=${STATIC}&country=us&expand=1`]) {
      const text = await request('get', path);
      expect(typeof text).toBe('string');
      expect((text as string).split('\n').every((ip) => /^\d+\.\d+\.\d+\.\d+$/.test(ip))).toBe(true);
    }
  });

  // zone_available_ip_count (zone.rb:37-41) sends no customer, which the seed requires there: not replayed.
  it('the stats and Zone reads (customer.rb:11-23, zone.rb:12-137): each a Hash (active_zones a list)', async () => {
    for (const path of [
      '/api/customer/bw?details=1',
      '/api/customer/balance',
      `/api/zone/bw?zone=${STATIC}&details=1`,
      `/api/zone/cost?zone=${STATIC}`,
      '/api/zone/recent_ips?zones=*',
      `/api/zone?zone=${STATIC}`,
      `/api/zone/passwords?zone=${STATIC}`,
      `/api/zone/permissions?zone=${STATIC}`,
      `/api/zone/status?zone=${STATIC}`,
      '/api/network_status/all',
    ])
      expect(hash(await request('get', path)), path).toBeDefined();
    expect(Array.isArray(await request('get', '/api/zone/get_active_zones'))).toBe(true);
  });
});
