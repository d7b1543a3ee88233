import { describe, expect, it } from 'vitest';
import { RES, raw, STATIC, useSandbox } from '../helpers.js';

// The manager's web interface on account data: its dialog of a port's allocated IPs and gIPs
// (@luminati-io/luminati-proxy 1.570.247 src/pub/proxy_edit/alloc_modal.js), replayed against the sandbox
// as its load() and refresh() call the manager API (Api.json under /api) and read as they read the answers.
const t = useSandbox();

type Row = { ip: string; country?: string; maxmind?: string };
const api = async (method: string, path: string, body?: unknown) => {
  const r = await raw(t.sandbox.managerUrl, method, `/api/${path}`, body === undefined ? {} : { body });
  expect(r.status, `${path} ${r.text}`).toBe(200);
  return r.json();
};

/** load(), lines 50-98: ips_cn or vips_cn by type, each row's country as `country || maxmind`. */
async function load(type: 'ips' | 'vips', zone: string): Promise<{ rows: Row[]; countries: string[] }> {
  const res = await api('GET', `${type === 'ips' ? 'allocated_ips' : 'allocated_vips'}?zone=${zone}`);
  const rows = (type === 'ips' ? res.ips_cn : res.vips_cn) as Row[];
  // `_available_list.reduce` throws a TypeError on an answer without the list.
  const countries = new Set(rows.map((v) => v.country || v.maxmind));
  return { rows, countries: [...countries] as string[] };
}

/** refresh(vals), lines 149-192: {zone, ips} or {zone, vips}; the new list by position (normalize_vals, 208-238). */
async function refresh(type: 'ips' | 'vips', zone: string, old: Row[], vals: string[]): Promise<Record<string, string>> {
  const res = await api('POST', 'refresh_ips', { zone, [type]: vals });
  // Line 166: an answer without ips and vips is reported as an error.
  expect(Boolean(res.error || (!res.ips && !res.vips))).toBe(false);
  const fresh = (type === 'ips' ? res.ips : res.vips.map((v: { vip: string }) => ({ ...v, ip: v.vip }))) as Row[];
  expect(fresh.length, 'error ips/vips length mismatch').toBe(old.length);
  const known = new Set(old.map((v) => v.ip));
  const refreshed = fresh.filter((v) => !known.has(v.ip));
  const stable = new Set(fresh.filter((v) => known.has(v.ip)).map((v) => v.ip));
  const normalized = old.map((v) => (stable.has(v.ip) ? v : refreshed.shift()));
  // map_vals: each old value to the one now in its place.
  return Object.fromEntries(old.map((v, i) => [v.ip, normalized[i]?.ip as string]));
}

describe('the web interface dialog of allocated IPs and gIPs (alloc_modal.js)', () => {
  it('datacenter IPs: ips_cn with their MaxMind country; a refresh of one replaces it in place', async () => {
    await t.sandbox.reset();
    const { rows, countries } = await load('ips', STATIC);
    expect(rows.map((r) => r.ip)).toEqual(t.sandbox.state().account.zones.find((z) => z.name === STATIC)?.ips);
    expect(countries).toEqual(['us']);
    const map = await refresh('ips', STATIC, rows, [rows[1]?.ip as string]);
    expect(map[rows[0]?.ip as string]).toBe(rows[0]?.ip);
    expect(map[rows[1]?.ip as string]).toMatch(/^192\.0\.2\.\d+$/);
    expect(map[rows[1]?.ip as string]).not.toBe(rows[1]?.ip);
  });

  it('gIPs: vips_cn with their country; refresh_ips {zone, vips} answers the Zone gIPs, one replaced', async () => {
    await t.sandbox.reset();
    const { rows, countries } = await load('vips', RES);
    expect(rows.length).toBeGreaterThan(1);
    expect(rows.map((r) => r.ip)).toEqual(t.sandbox.state().account.zones.find((z) => z.name === RES)?.gips);
    expect(countries.every((c) => /^[a-z]{2}$/.test(c))).toBe(true);
    const map = await refresh('vips', RES, rows, [rows[0]?.ip as string]);
    expect(map[rows[0]?.ip as string]).not.toBe(rows[0]?.ip);
    expect(t.sandbox.state().account.zones.find((z) => z.name === RES)?.gips).toContain(map[rows[0]?.ip as string]);
    expect(map[rows[1]?.ip as string]).toBe(rows[1]?.ip);
  });
});
