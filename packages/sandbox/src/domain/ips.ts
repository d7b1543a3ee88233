import { HttpError } from '../errors.js';
import { GIP_REFRESH_COST } from './money.js';
import { intToIpv4, ipv4ToInt } from './net.js';
import type { PoolGip, PoolIp, PoolState, StoredPlan, ZoneState } from './types.js';

const norm = (s: string) => s.toLowerCase().replace(/[^a-z0-9]/g, '');

export interface IpFilter {
  /** `shared` IPs, or the others (`dedicated`, `selective`). */
  shared?: boolean;
  country?: string;
  /** `<country>-<city>`. */
  countryCity?: string;
  /** Location databases whose country must match (any of them); MaxMind by default. */
  geoDb?: string[];
  notCountry?: string | null;
  /** Cooling period: IPs released less than this many seconds ago are left out. */
  exclusiveSec?: number;
  domains?: string[];
  exclude?: ReadonlySet<string>;
}

export function countryOf(p: PoolIp, db: string): string {
  if (db === 'maxmind') return p.country;
  return p.ext?.[db as 'dbip' | 'ip2location' | 'google'] ?? p.country;
}

export function freeIps(store: PoolState, f: IpFilter, now = store.clock.now()): PoolIp[] {
  const out: PoolIp[] = [];
  const dbs = f.geoDb?.length ? f.geoDb : ['maxmind'];
  let cityCountry: string | undefined;
  let city: string | undefined;
  if (f.countryCity) {
    const i = f.countryCity.indexOf('-');
    cityCountry = f.countryCity.slice(0, i).toLowerCase();
    city = norm(f.countryCity.slice(i + 1));
  }
  const country = f.country?.toLowerCase();
  for (const p of store.pool.values()) {
    if (store.allocated.has(p.ip) || f.exclude?.has(p.ip)) continue;
    if (f.shared !== undefined && (p.shared === true) !== f.shared) continue;
    if (country && !dbs.some((db) => countryOf(p, db) === country)) continue;
    if (f.notCountry && p.country === f.notCountry.toLowerCase()) continue;
    if (city && (p.country !== cityCountry || norm(p.city) !== city)) continue;
    if (f.exclusiveSec && p.released_at && now - Date.parse(p.released_at) < f.exclusiveSec * 1000) continue;
    if (f.domains?.length && p.blocked_domains?.some((d) => f.domains?.includes(d))) continue;
    out.push(p);
  }
  return out;
}

export function freeGips(store: PoolState, country?: string, exclude?: ReadonlySet<string>): PoolGip[] {
  const out: PoolGip[] = [];
  const cc = country && country !== 'any' ? country.toLowerCase() : undefined;
  for (const g of store.gipPool.values()) {
    if (store.gipAllocated.has(g.vip) || exclude?.has(g.vip)) continue;
    if (cc && g.country !== cc) continue;
    out.push(g);
  }
  return out;
}

export const currentPlan = (zone: ZoneState): StoredPlan => zone.plans[zone.plans.length - 1] as StoredPlan;

/** Plans other than `shared` draw on the pool's dedicated IPs. */
export const planShared = (plan: StoredPlan) => (plan.ips_type ?? 'shared') === 'shared';

export function allocate(store: PoolState, zone: ZoneState, ips: PoolIp[]): void {
  for (const p of ips) {
    store.allocated.set(p.ip, zone.name);
    zone.ips.push(p.ip);
  }
  syncPlanIps(zone);
}

export function release(store: PoolState, zone: ZoneState, ips: readonly string[], now = store.clock.now()): void {
  const gone = new Set(ips);
  zone.ips = zone.ips.filter((ip) => !gone.has(ip));
  const at = new Date(now).toISOString();
  store.touch('pools');
  for (const ip of ips) {
    store.allocated.delete(ip);
    const p = store.pool.get(ip);
    if (p) p.released_at = at;
  }
  syncPlanIps(zone);
}

function syncPlanIps(zone: ZoneState): void {
  const plan = currentPlan(zone);
  if (plan.type !== 'resident') plan.ips = zone.ips.length;
}

/** Gives the Zone these free gIPs. */
export function allocateGips(store: PoolState, zone: ZoneState, gips: readonly PoolGip[]): void {
  for (const g of gips) {
    zone.gips.push(g.vip);
    store.gipAllocated.set(g.vip, zone.name);
  }
}

/**
 * Replaces each of `targets` (gIPs the Zone holds) by a free gIP of the same country, preferring the
 * same region prefix, and charges the refresh (`GIP_REFRESH_COST` each, into `pending_costs`). All
 * replacements are found before anything changes, so a refusal leaves the Zone and the pool as they were.
 */
export function replaceGips(store: PoolState, zone: ZoneState, targets: readonly string[], field: string): void {
  const unique = [...new Set(targets)];
  const taken = new Set<string>();
  const replacement = new Map<string, string>();
  for (const old of unique) {
    const country = store.gipPool.get(old)?.country;
    const prefix = old.replace(/_\d+$/, '_');
    const candidates = freeGips(store, country, taken);
    const pick = candidates.find((g) => g.vip.startsWith(prefix)) ?? candidates[0];
    if (!pick)
      throw new HttpError(400, 'Invalid request', {
        details: [{ field, reason: `no free gIP left in ${country ?? 'the pool'} to replace ${old}` }],
      });
    taken.add(pick.vip);
    replacement.set(old, pick.vip);
  }
  zone.gips = zone.gips.map((v) => replacement.get(v) ?? v);
  for (const [old, fresh] of replacement) {
    store.gipAllocated.delete(old);
    store.gipAllocated.set(fresh, zone.name);
  }
  const cost = unique.length * GIP_REFRESH_COST;
  store.account.pending_costs += cost;
  store.charges.push({
    zone: zone.name,
    at: new Date(store.clock.now()).toISOString(),
    amount: cost,
    reason: `gip_refresh x${unique.length}`,
  });
}

export function releaseGips(store: PoolState, zone: ZoneState, vips: readonly string[]): void {
  const gone = new Set(vips);
  zone.gips = zone.gips.filter((v) => !gone.has(v));
  for (const v of vips) store.gipAllocated.delete(v);
}

/** The IPs the body names that the Zone does not hold, as a 400; nothing otherwise. */
export function assertHeld(held: readonly string[], wanted: readonly string[], field: string, zone: string, what: string): void {
  const have = new Set(held);
  const details = wanted
    .map((ip, i) => (have.has(ip) ? undefined : { field: `${field}[${i}]`, reason: `${ip} is not ${what} of Zone ${zone}` }))
    .filter((d) => d !== undefined);
  if (details.length) throw new HttpError(400, 'Invalid request', { details });
}

/** A sorted IP list as one range: `a/n` when it is exactly a subnet, else `first-last`. */
export function ipRange(ips: readonly string[]): string {
  if (ips.length === 0) return '';
  const nums = ips.map(ipv4ToInt).sort((a, b) => a - b);
  const first = nums[0] as number;
  const last = nums[nums.length - 1] as number;
  const size = last - first + 1;
  if (size === nums.length && (size & (size - 1)) === 0 && first % size === 0) {
    return `${intToIpv4(first)}/${32 - Math.log2(size)}`;
  }
  return `${intToIpv4(first)}-${intToIpv4(last)}`;
}

export function ipRecord(store: PoolState, ip: string) {
  const p = store.pool.get(ip);
  const country = p?.country ?? 'us';
  return {
    ip,
    maxmind: country,
    ext: { dbip: p?.ext?.dbip ?? country, ip2location: p?.ext?.ip2location ?? country, google: p?.ext?.google ?? country },
  };
}

/**
 * Replaces each of `targets` (IPs the Zone holds) by a free IP of the same kind: in `country` or
 * `countryCity` when given, else in the country of the IP it replaces. All replacements are found
 * before anything changes, so a refusal leaves the Zone and the pool as they were.
 */
export function replaceIps(
  store: PoolState,
  zone: ZoneState,
  targets: readonly string[],
  where: { country?: string; countryCity?: string },
  field: string,
): string[] {
  const shared = planShared(currentPlan(zone));
  const taken = new Set<string>();
  const replacement = new Map<string, string>();
  for (const old of targets) {
    const country = where.country ?? (where.countryCity ? undefined : store.pool.get(old)?.country);
    const pick = freeIps(store, { shared, country, countryCity: where.countryCity, exclude: taken })[0];
    if (!pick) throw new HttpError(400, 'Invalid request', { details: [{ field, reason: `no free IP left to replace ${old}` }] });
    taken.add(pick.ip);
    replacement.set(old, pick.ip);
  }
  const order = zone.ips.map((ip) => replacement.get(ip) ?? ip);
  release(store, zone, targets);
  for (const ip of replacement.values()) store.allocated.set(ip, zone.name);
  zone.ips = order;
  syncPlanIps(zone);
  return [...replacement.values()];
}
