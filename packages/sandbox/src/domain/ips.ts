import { DomainError } from './errors.js';
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

function freeIps(store: PoolState, f: IpFilter, now = store.clock.now()): PoolIp[] {
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

function freeGips(store: PoolState, country?: string, exclude?: ReadonlySet<string>): PoolGip[] {
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

/** The Zone's own list of the kind named: its datacenter IPs or its gIPs. */
type Held = 'ips' | 'gips';
const WHAT: Record<Held, string> = { ips: 'an IP', gips: 'a gIP' };

/**
 * The IP and gIP pools' changes: every allocation, release and refresh goes through here (the Store
 * holds one, `store.pools`). A refusal is a DomainError raised before anything changes; each problem
 * names the item of the list it was given (`item`), and the handler names the request field.
 */
export class Pools {
  constructor(private readonly s: PoolState) {}

  /** Free datacenter IPs that match the filter. */
  free(f: IpFilter): PoolIp[] {
    return freeIps(this.s, f);
  }

  /** Free gIPs, of a country (`any` or none: all). */
  freeGips(country?: string): PoolGip[] {
    return freeGips(this.s, country);
  }

  /** Gives the Zone these free IPs. */
  allocate(zone: ZoneState, ips: readonly PoolIp[]): void {
    for (const p of ips) {
      this.s.allocated.set(p.ip, zone.name);
      zone.ips.push(p.ip);
    }
    syncPlanIps(zone);
  }

  /** Gives the Zone these free gIPs. */
  allocateGips(zone: ZoneState, gips: readonly PoolGip[]): void {
    for (const g of gips) {
      zone.gips.push(g.vip);
      this.s.gipAllocated.set(g.vip, zone.name);
    }
  }

  /** Takes these IPs (each held by the Zone; a repeat counts once) back into the pool, marked released now. */
  release(zone: ZoneState, ips: readonly string[]): void {
    this.assertHeld(zone, 'ips', ips);
    this.unhold(zone, [...new Set(ips)]);
  }

  /** Takes these gIPs (each held by the Zone) back into the pool. */
  releaseGips(zone: ZoneState, vips: readonly string[]): void {
    this.assertHeld(zone, 'gips', vips);
    const gone = new Set(vips);
    zone.gips = zone.gips.filter((v) => !gone.has(v));
    for (const v of gone) this.s.gipAllocated.delete(v);
  }

  /** Everything the Zone holds back into the pools (the Zone is being deleted). */
  releaseAll(zone: ZoneState): void {
    this.release(zone, [...zone.ips]);
    this.releaseGips(zone, [...zone.gips]);
  }

  /**
   * Replaces each of `targets` (IPs the Zone holds; a repeat counts once) by a free IP of the same
   * kind: in `country` or `countryCity` when given, else in the country of the IP it replaces. All
   * replacements are found before anything changes, so a refusal leaves the Zone and the pool as they
   * were. The new IPs.
   */
  replaceIps(zone: ZoneState, wanted: readonly string[], where: { country?: string; countryCity?: string } = {}): string[] {
    this.assertHeld(zone, 'ips', wanted);
    const targets = [...new Set(wanted)];
    const shared = planShared(currentPlan(zone));
    const taken = new Set<string>();
    const replacement = new Map<string, string>();
    for (const old of targets) {
      const country = where.country ?? (where.countryCity ? undefined : this.s.pool.get(old)?.country);
      const pick = freeIps(this.s, { shared, country, countryCity: where.countryCity, exclude: taken })[0];
      if (!pick) throw new DomainError([{ reason: `no free IP left to replace ${old}` }]);
      taken.add(pick.ip);
      replacement.set(old, pick.ip);
    }
    const order = zone.ips.map((ip) => replacement.get(ip) ?? ip);
    this.unhold(zone, targets);
    for (const ip of replacement.values()) this.s.allocated.set(ip, zone.name);
    zone.ips = order;
    syncPlanIps(zone);
    return [...replacement.values()];
  }

  /**
   * Replaces each of `targets` (gIPs the Zone holds; a repeat counts once) by a free gIP of the same
   * country, preferring the same region prefix, and charges the refresh (`GIP_REFRESH_COST` each, into `pending_costs`). All
   * replacements are found before anything changes, so a refusal leaves the Zone and the pool as they were.
   */
  replaceGips(zone: ZoneState, targets: readonly string[]): void {
    this.assertHeld(zone, 'gips', targets);
    const unique = [...new Set(targets)];
    const taken = new Set<string>();
    const replacement = new Map<string, string>();
    for (const old of unique) {
      const country = this.s.gipPool.get(old)?.country;
      const prefix = old.replace(/_\d+$/, '_');
      const candidates = freeGips(this.s, country, taken);
      const pick = candidates.find((g) => g.vip.startsWith(prefix)) ?? candidates[0];
      if (!pick) throw new DomainError([{ reason: `no free gIP left in ${country ?? 'the pool'} to replace ${old}` }]);
      taken.add(pick.vip);
      replacement.set(old, pick.vip);
    }
    zone.gips = zone.gips.map((v) => replacement.get(v) ?? v);
    for (const [old, fresh] of replacement) {
      this.s.gipAllocated.delete(old);
      this.s.gipAllocated.set(fresh, zone.name);
    }
    const cost = unique.length * GIP_REFRESH_COST;
    this.s.account.pending_costs += cost;
    this.s.charges.push({
      zone: zone.name,
      at: new Date(this.s.clock.now()).toISOString(),
      amount: cost,
      reason: `gip_refresh x${unique.length}`,
    });
  }

  /** Refuses, naming each, the items of `wanted` that the Zone does not hold. */
  private assertHeld(zone: ZoneState, kind: Held, wanted: readonly string[]): void {
    const have = new Set(zone[kind]);
    const problems = wanted.flatMap((ip, item) =>
      have.has(ip) ? [] : [{ item, reason: `${ip} is not ${WHAT[kind]} of Zone ${zone.name}` }],
    );
    if (problems.length) throw new DomainError(problems);
  }

  private unhold(zone: ZoneState, ips: readonly string[]): void {
    const gone = new Set(ips);
    zone.ips = zone.ips.filter((ip) => !gone.has(ip));
    const at = new Date(this.s.clock.now()).toISOString();
    this.s.touch('pools');
    for (const ip of ips) {
      this.s.allocated.delete(ip);
      const p = this.s.pool.get(ip);
      if (p) p.released_at = at;
    }
    syncPlanIps(zone);
  }
}

function syncPlanIps(zone: ZoneState): void {
  const plan = currentPlan(zone);
  if (plan.type !== 'resident') plan.ips = zone.ips.length;
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
