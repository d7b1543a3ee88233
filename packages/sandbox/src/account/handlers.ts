import { randomBytes } from 'node:crypto';
import {
  allocate,
  assertHeld,
  currentPlan,
  freeGips,
  freeIps,
  GIP_REFRESH_COST,
  type IpFilter,
  ipRange,
  ipRecord,
  money,
  planShared,
  release,
  releaseGips,
  replaceIps,
} from '../domain/ips.js';
import { isWhitelistEntry } from '../domain/net.js';
import { dayString, type Store } from '../domain/state.js';
import type { ReqLog, StoredPlan, ZoneState } from '../domain/types.js';
import { badRequest, HttpError } from '../router/errors.js';
import type { Ctx, Handler } from '../router/http.js';
import { type AccountAuth, UNAUTHORIZED } from './auth.js';

type C = Ctx<AccountAuth>;

const DOMAIN = /^(\*\.)?[A-Za-z0-9]([A-Za-z0-9-]{0,62})(\.[A-Za-z0-9]([A-Za-z0-9-]{0,62}))*\.?$/;
const ZONE_NAME = /^[A-Za-z0-9_]{1,64}$/;

/** Query parameters on GET, body fields otherwise (the seed's convention for `customer` and `zone`). */
function input(ctx: C): { where: 'query' | 'body'; values: Record<string, unknown> } {
  return ctx.op.method === 'GET'
    ? { where: 'query', values: ctx.query }
    : { where: 'body', values: (ctx.body ?? {}) as Record<string, unknown> };
}

export function accountHandlers(store: Store): Record<string, Handler<AccountAuth>> {
  const notFound = (name: string) => new HttpError(404, `Zone not found: ${name}`);

  /** The Zone the call is about: the credential's with `X-Service-Auth`, else the `zone` parameter. */
  function zoneOf(ctx: C): ZoneState {
    const { where, values } = input(ctx);
    const given = values.zone as string | undefined;
    if (ctx.auth.scheme === 'zone') {
      if (given !== undefined && given !== ctx.auth.zone) {
        throw badRequest(`${where}.zone`, `the X-Service-Auth credential is for Zone ${ctx.auth.zone}`);
      }
      return (
        store.zones.get(ctx.auth.zone as string) ??
        (() => {
          throw notFound(ctx.auth.zone as string);
        })()
      );
    }
    if (given === undefined) throw badRequest(`${where}.zone`, 'is required with token or basic authentication');
    const zone = store.zones.get(given);
    if (!zone) throw notFound(given);
    return zone;
  }

  /** `zones` of the whitelist and recent-IPs reads: one Zone, or `*` for all (the credential's only). */
  function zonesOf(ctx: C): ZoneState[] {
    const sel = ctx.query.zones as string;
    if (ctx.auth.scheme === 'zone') {
      if (sel !== '*' && sel !== ctx.auth.zone)
        throw badRequest('query.zones', `the X-Service-Auth credential is for Zone ${ctx.auth.zone}`);
      return [store.zones.get(ctx.auth.zone as string) as ZoneState];
    }
    if (sel === '*') return [...store.zones.values()];
    const zone = store.zones.get(sel);
    if (!zone) throw notFound(sel);
    return [zone];
  }

  /** Zones a whitelist change applies to: the named one, or every Zone when none is named (observed). */
  function whitelistTargets(ctx: C): ZoneState[] {
    if (ctx.auth.scheme === 'zone' || ctx.body.zone !== undefined) return [zoneOf(ctx)];
    return [...store.zones.values()];
  }

  const zoneSummary = (z: ZoneState) => (z.whitelist.length === 0 || z.whitelist.includes('any') ? 'any' : z.whitelist.join(','));
  const zoneType = (z: ZoneState) => {
    const plan = currentPlan(z);
    return plan.type === 'resident' ? (plan.mobile ? 'mobile' : 'res') : 'dc';
  };
  const domainLists = (z: ZoneState) =>
    z.domains.blacklist ? { whitelist: z.domains.whitelist, blacklist: z.domains.blacklist } : { whitelist: z.domains.whitelist };

  function dayRange(ctx: C, defaultDays: number): { from: string; to: string; days: string[] } {
    const parse = (name: 'from' | 'to'): string | undefined => {
      const raw = ctx.query[name] as string | undefined;
      if (raw === undefined) return undefined;
      const t = Date.parse(raw);
      if (Number.isNaN(t)) throw badRequest(`query.${name}`, 'must be a date (YYYY-MM-DD or ISO 8601)');
      return new Date(t).toISOString().slice(0, 10);
    };
    const now = Date.now();
    const to = parse('to') ?? dayString(now);
    const from = parse('from') ?? dayString(Date.parse(to), defaultDays - 1);
    if (from > to) throw badRequest('query.from', 'must not be after to');
    const days: string[] = [];
    for (let t = Date.parse(from); t <= Date.parse(to); t += 86_400_000) {
      days.push(new Date(t).toISOString().slice(0, 10));
      if (days.length > 3660) throw badRequest('query.from', 'the period may be at most ten years');
    }
    return { from, to, days };
  }

  function bandwidth(ctx: C, zones: ZoneState[]) {
    const { from, to, days } = dayRange(ctx, 30);
    const index = new Map(days.map((d, i) => [d, i]));
    const data: Record<string, { bw_sum: number[]; bw_dn: number[]; bw_up: number[] }> = {};
    for (const z of zones) data[z.name] = { bw_sum: days.map(() => 0), bw_dn: days.map(() => 0), bw_up: days.map(() => 0) };
    for (const u of store.usage) {
      const series = data[u.zone];
      const i = index.get(u.date as string);
      if (!series || i === undefined) continue;
      series.bw_dn[i] = (series.bw_dn[i] as number) + u.bw_dn;
      series.bw_up[i] = (series.bw_up[i] as number) + u.bw_up;
      series.bw_sum[i] = (series.bw_sum[i] as number) + u.bw_dn + u.bw_up;
    }
    const body: Record<string, unknown> = { from: `${from}T00:00:00`, to: `${to}T00:00:00`, data };
    if (ctx.query.details === 1) {
      const sum = (a: number[]) => a.reduce((x, y) => x + y, 0);
      body.sums = Object.fromEntries(
        Object.entries(data).map(([name, s]) => [name, { bw_sum: sum(s.bw_sum), bw_dn: sum(s.bw_dn), bw_up: sum(s.bw_up) }]),
      );
    }
    return { body: { [store.account.customer]: body } };
  }

  /** Bandwidth and cost of a Zone from `from` (inclusive) to `to` (exclusive), both `YYYY-MM-DD`. */
  function periodCost(z: ZoneState, from: string, to: string) {
    let bw = 0;
    for (const u of store.usage) if (u.zone === z.name && (u.date as string) >= from && (u.date as string) < to) bw += u.bw_dn + u.bw_up;
    let cost = (bw / 1e9) * z.price_per_gb;
    for (const c of store.charges) if (c.zone === z.name && c.at.slice(0, 10) >= from && c.at.slice(0, 10) < to) cost += c.amount;
    return { bw, cost: money(cost) };
  }

  function matchLogs(ctx: C): ReqLog[] {
    const q = ctx.query;
    let zone: string | undefined = q.zone;
    if (ctx.auth.scheme === 'zone') zone = zoneOf(ctx).name;
    else if (zone !== undefined && !store.zones.has(zone)) throw notFound(zone);
    const time = (name: string): number | undefined => {
      if (q[name] === undefined) return undefined;
      const t = Date.parse(q[name]);
      if (Number.isNaN(t)) throw badRequest(`query.${name}`, 'must be a date-time (ISO 8601)');
      return t;
    };
    const from = time('ts.from');
    const to = time('ts.to');
    const code: string | undefined = q['status.code'];
    const codeRe = code && /[x*]/i.test(code) ? new RegExp(`^${code.replace(/[x*]/gi, '\\d')}$`) : undefined;
    const has = (hay: string, needle: string | undefined) => needle === undefined || hay.toLowerCase().includes(needle.toLowerCase());
    return store.reqLogs.filter((r) => {
      if (zone !== undefined && r.zone !== zone) return false;
      if (code !== undefined && (codeRe ? !codeRe.test(String(r.status.code)) : String(r.status.code) !== code)) return false;
      if (!has(r.status.message, q['status.message'])) return false;
      if (q['tun.session'] !== undefined && r.tun.session !== q['tun.session']) return false;
      const t = Date.parse(r.ts);
      if (from !== undefined && t < from) return false;
      if (to !== undefined && t >= to) return false;
      if (!has(r.ua, q.ua)) return false;
      if (q['dst.host'] !== undefined && r.dst.host.toLowerCase() !== String(q['dst.host']).toLowerCase()) return false;
      return has(r.dst.url, q['dst.url']);
    });
  }

  function countAvailable(ctx: C) {
    const zone = zoneOf(ctx);
    const plan = currentPlan(zone);
    const filter = ctx.query.plan as Record<string, unknown> | undefined;
    if (!filter) {
      if (plan.type === 'resident') return { body: { count: freeGips(store, plan.vip_country).length } };
      return { body: { count: freeIps(store, { shared: planShared(plan), notCountry: plan.not_country }).length } };
    }
    const f: IpFilter = {};
    if (filter.ips_type !== undefined) f.shared = filter.ips_type === 'shared';
    if (filter.country !== undefined) f.country = filter.country as string;
    if (filter.country_city !== undefined) {
      f.countryCity = filter.country_city as string;
      if (f.country && !f.countryCity.toLowerCase().startsWith(`${f.country.toLowerCase()}-`)) {
        throw badRequest('query.plan.country_city', `is not in country ${f.country}`);
      }
    }
    if (filter.exclusive_sec !== undefined) f.exclusiveSec = Number(filter.exclusive_sec);
    if (typeof filter.domain_whitelist === 'string') f.domains = filter.domain_whitelist.split(/\s+/).filter(Boolean);
    if (filter.geo_db)
      f.geoDb = Object.entries(filter.geo_db as Record<string, boolean>)
        .filter(([, on]) => on)
        .map(([db]) => db);
    return { body: { count: freeIps(store, f).length } };
  }

  function parseWhitelist(value: unknown, field: string): string[] {
    const list = Array.isArray(value)
      ? (value as string[])
      : String(value)
          .split(',')
          .map((s) => s.trim());
    const details = list
      .map((e, i) =>
        isWhitelistEntry(e)
          ? undefined
          : { field: Array.isArray(value) ? `${field}[${i}]` : field, reason: `${e} is not an IP, range, subnet, netmask or any` },
      )
      .filter((d) => d !== undefined);
    if (details.length) throw new HttpError(400, 'Invalid request', { details });
    return [...new Set(list)];
  }

  function refreshGips(zone: ZoneState, vips: string[]) {
    assertHeld(zone.gips, vips, 'body.vips', zone.name, 'a gIP');
    const unique = [...new Set(vips)];
    const taken = new Set<string>();
    const replacement = new Map<string, string>();
    for (const old of unique) {
      const country = store.gipPool.get(old)?.country;
      const prefix = old.replace(/_\d+$/, '_');
      const candidates = freeGips(store, country, taken);
      const pick = candidates.find((g) => g.vip.startsWith(prefix)) ?? candidates[0];
      if (!pick) throw badRequest('body.vips', `no free gIP left in ${country ?? 'the pool'} to replace ${old}`);
      taken.add(pick.vip);
      replacement.set(old, pick.vip);
    }
    const now = new Date().toISOString();
    zone.gips = zone.gips.map((v) => replacement.get(v) ?? v);
    for (const [old, fresh] of replacement) {
      store.gipAllocated.delete(old);
      store.gipAllocated.set(fresh, zone.name);
    }
    const cost = money(unique.length * GIP_REFRESH_COST);
    store.account.pending_costs = money(store.account.pending_costs + cost);
    store.charges.push({ zone: zone.name, at: now, amount: cost, reason: `gip_refresh x${unique.length}` });
    return { body: { vips: zone.gips.map((vip) => ({ vip, country: store.gipPool.get(vip)?.country ?? vip.slice(0, 2) })) } };
  }

  function refreshDatacenter(ctx: C, zone: ZoneState) {
    const b = ctx.body as { ips?: string[]; country?: string; country_city?: string };
    if (b.ips) assertHeld(zone.ips, b.ips, 'body.ips', zone.name, 'an IP');
    const newIps = replaceIps(
      store,
      zone,
      b.ips ? [...new Set(b.ips)] : [...zone.ips],
      { country: b.country, countryCity: b.country_city },
      b.ips ? 'body.ips' : 'body',
    );
    return { body: { ips: zone.ips, new_ips: newIps } };
  }

  const handlers: Record<string, Handler<AccountAuth>> = {
    getZoneBandwidth: (ctx) => bandwidth(ctx, [zoneOf(ctx)]),
    getCustomerBandwidth: (ctx) => bandwidth(ctx, ctx.auth.scheme === 'zone' ? [zoneOf(ctx)] : [...store.zones.values()]),

    getZoneCost: (ctx) => {
      const zone = zoneOf(ctx);
      const body: Record<string, { bw: number; cost: number }> = {};
      if (ctx.query.from !== undefined || ctx.query.to !== undefined) {
        const { from, to } = dayRange(ctx, 30);
        body.custom = periodCost(zone, from, to);
      } else {
        const now = new Date();
        const y = now.getUTCFullYear();
        const m = now.getUTCMonth();
        const month = (k: number) => new Date(Date.UTC(y, m - k, 1)).toISOString().slice(0, 10);
        const today = dayString(now.getTime());
        const tomorrow = dayString(now.getTime(), -1);
        body.back_d0 = periodCost(zone, today, tomorrow);
        body.back_d1 = periodCost(zone, dayString(now.getTime(), 1), today);
        body.back_m0 = periodCost(zone, month(0), tomorrow);
        body.back_m1 = periodCost(zone, month(1), month(0));
      }
      return { body: { [store.account.customer]: body } };
    },

    listRequestLogs: (ctx) => {
      const size = (ctx.query.page_size as number | undefined) ?? 100;
      const page = (ctx.query.page as number | undefined) ?? 0;
      const logs = matchLogs(ctx).sort((a, b) => (a.ts < b.ts ? 1 : a.ts > b.ts ? -1 : 0));
      return { body: logs.slice(page * size, page * size + size) };
    },

    getRequestLogStats: (ctx) => {
      const logs = matchLogs(ctx);
      const body: Record<string, unknown> = { total: logs.length, success_statuses: logs.filter((r) => r.status.code < 400).length };
      if (ctx.query.status_breakdown === 1) {
        const counts = new Map<number, number>();
        for (const r of logs) counts.set(r.status.code, (counts.get(r.status.code) ?? 0) + 1);
        body.status_breakdown = [...counts].sort(([a], [b]) => a - b).map(([status, count]) => ({ status, count }));
      }
      return { body };
    },

    getAvailableIpCount: countAvailable,
    getAvailableIpCountShortForm: countAvailable,

    listRecentIps: (ctx) => ({ body: Object.fromEntries(zonesOf(ctx).map((z) => [z.name, z.recent_ips])) }),

    getRouteIps: (ctx) => {
      const zone = zoneOf(ctx);
      const country = ((ctx.query.country as string | undefined) ?? ctx.auth.country)?.toLowerCase();
      const ips = zone.ips.filter((ip) => !country || store.pool.get(ip)?.country === country);
      if (ctx.query.expand === 1) return { text: [...ips].sort((a, b) => a.localeCompare(b, 'en', { numeric: true })).join('\n') };
      return { text: ipRange(ips) };
    },

    listRouteVips: (ctx) => ({ body: zoneOf(ctx).gips }),

    listZoneIps: (ctx) => {
      const zone = zoneOf(ctx);
      if (ctx.query.ip_per_country === 1) {
        const counts: Record<string, number> = {};
        for (const ip of zone.ips) {
          const cc = store.pool.get(ip)?.country ?? 'us';
          counts[cc] = (counts[cc] ?? 0) + 1;
        }
        return { body: counts };
      }
      return { body: { ips: zone.ips.map((ip) => ipRecord(store, ip)) } };
    },

    addZoneIps: (ctx) => {
      const zone = zoneOf(ctx);
      const b = ctx.body as { count: number; country?: string; country_city?: string };
      const plan = currentPlan(zone);
      if (plan.type === 'resident')
        throw badRequest('body.zone', `Zone ${zone.name} is a residential Zone: it has gIPs, not datacenter IPs`);
      if (b.country && b.country_city && !b.country_city.toLowerCase().startsWith(`${b.country.toLowerCase()}-`)) {
        throw badRequest('body.country_city', `is not in country ${b.country}`);
      }
      const free = freeIps(store, {
        shared: planShared(plan),
        country: b.country,
        countryCity: b.country_city,
        notCountry: plan.not_country,
      });
      if (free.length < b.count) throw badRequest('body.count', `only ${free.length} IPs are available for this request`);
      const fresh = free.slice(0, b.count);
      allocate(store, zone, fresh);
      return { body: { ips: zone.ips, new_ips: fresh.map((p) => p.ip) } };
    },

    removeZoneIps: (ctx) => {
      const zone = zoneOf(ctx);
      const ips = [...new Set(ctx.body.ips as string[])];
      assertHeld(zone.ips, ips, 'body.ips', zone.name, 'an IP');
      release(store, zone, ips);
      return { body: { ips } };
    },

    removeZoneVips: (ctx) => {
      const zone = zoneOf(ctx);
      const vips = [...new Set(ctx.body.vips as string[])];
      assertHeld(zone.gips, vips, 'body.vips', zone.name, 'a gIP');
      releaseGips(store, zone, vips);
      return { body: { vips } };
    },

    refreshZoneIps: (ctx) => {
      const zone = zoneOf(ctx);
      if (Array.isArray(ctx.body.vips)) return refreshGips(zone, ctx.body.vips);
      if (currentPlan(zone).type === 'resident')
        throw badRequest('body.vips', `Zone ${zone.name} is residential: name the gIPs to refresh`);
      return refreshDatacenter(ctx, zone);
    },

    listPeers: (ctx) => {
      const q = ctx.query;
      let zone: string | undefined = q.zone;
      if (ctx.auth.scheme === 'zone') zone = zoneOf(ctx).name;
      else if (zone !== undefined && !store.zones.has(zone)) throw notFound(zone);
      const asn = (q.asn as string | undefined)?.replace(/^as/i, '');
      const country = (q.country as string | undefined)?.toLowerCase();
      const peers = store.peers.filter(
        (p) => (!zone || p.zone === zone) && (!country || p.country === country) && (!asn || p.asn === asn) && (!q.vip || p.vip === q.vip),
      );
      return { body: peers.map((p) => p.ip) };
    },

    listAllPeers: () => ({ body: store.peers.map((p) => p.ip) }),

    getZone: (ctx) => {
      const z = zoneOf(ctx);
      // `disabled` and `uptime_100` are the sandbox's: the spec's Zone has no field for either state.
      return { body: { ips: zoneSummary(z), password: z.passwords, plans: z.plans, disabled: z.disabled, uptime_100: z.uptime_100 } };
    },

    createZone: (ctx) => {
      if (ctx.auth.scheme === 'zone')
        throw new HttpError(401, 'A Zone credential cannot create Zones', {
          details: [{ field: 'header.X-Service-Auth', reason: 'use a token' }],
        });
      const b = ctx.body as {
        zone: { name: string; ips?: string | string[]; password?: string | string[] };
        plan: Omit<StoredPlan, 'start'>;
      };
      const name = b.zone.name;
      if (!ZONE_NAME.test(name)) throw badRequest('body.zone.name', 'may contain only letters, digits and _');
      if (store.zones.has(name)) throw badRequest('body.zone.name', `Zone ${name} already exists`);
      let passwords: string[];
      if (b.zone.password === undefined) passwords = [randomBytes(9).toString('base64url').replace(/[-_]/g, 'x').slice(0, 12)];
      else passwords = Array.isArray(b.zone.password) ? b.zone.password : [b.zone.password];
      passwords.forEach((p, i) => {
        const field = Array.isArray(b.zone.password) ? `body.zone.password[${i}]` : 'body.zone.password';
        if (p.length === 0 || p.includes('-'))
          throw badRequest(field, 'must be non-empty and free of "-" (the separator of X-Service-Auth)');
      });
      const whitelist = b.zone.ips === undefined ? ['any'] : parseWhitelist(b.zone.ips, 'body.zone.ips');
      const plan: StoredPlan = { type: 'static', ...b.plan, start: new Date().toISOString() };
      const zone: ZoneState = {
        name,
        passwords,
        perms: (['city', 'asn', 'vip', 'mobile'] as const).filter((k) => plan[k] === true),
        plans: [plan],
        whitelist,
        domains: { whitelist: plan.domain_whitelist ? plan.domain_whitelist.split(/\s+/).filter(Boolean) : [] },
        disabled: false,
        uptime_100: false,
        ips: [],
        gips: [],
        recent_ips: [],
        price_per_gb: plan.type === 'resident' ? (plan.mobile ? 24 : 8.4) : 0.6,
      };
      // Everything is checked before anything is allocated: a refused create leaves the pools as they were.
      const wantIps = plan.type === 'static' ? (plan.ips ?? 0) : 0;
      const ips = wantIps ? freeIps(store, { shared: planShared(plan), notCountry: plan.not_country }).slice(0, wantIps) : [];
      if (ips.length < wantIps) throw badRequest('body.plan.ips', `only ${ips.length} IPs are available for this plan`);
      const wantGips = plan.type === 'resident' && plan.vip ? (plan.vips ?? 0) : 0;
      const gips = wantGips ? freeGips(store, plan.vip_country).slice(0, wantGips) : [];
      if (gips.length < wantGips) throw badRequest('body.plan.vips', `only ${gips.length} gIPs are available for this plan`);
      store.zones.set(name, zone);
      allocate(store, zone, ips);
      for (const g of gips) {
        zone.gips.push(g.vip);
        store.gipAllocated.set(g.vip, name);
      }
      const { start: _start, ...shown } = plan;
      return {
        body: {
          plan: { mobile: false, city: false, asn: false, vip: false, not_country: null, ...shown },
          zone: { name, ips: zoneSummary(zone), password: passwords },
        },
      };
    },

    deleteZone: (ctx) => {
      const zone = zoneOf(ctx);
      release(store, zone, [...zone.ips]);
      releaseGips(store, zone, [...zone.gips]);
      store.zones.delete(zone.name);
      return undefined;
    },

    getZonePasswords: (ctx) => ({ body: { passwords: zoneOf(ctx).passwords } }),
    getZonePermissions: (ctx) => ({ body: { perms: zoneOf(ctx).perms } }),
    getZoneStatus: (ctx) => ({ body: { status: zoneOf(ctx).disabled ? 'disabled' : 'active' } }),

    listActiveZones: () => ({
      body: [...store.zones.values()].filter((z) => !z.disabled).map((z) => ({ name: z.name, type: zoneType(z) })),
    }),

    switchZoneUptime: (ctx) => {
      zoneOf(ctx).uptime_100 = ctx.body.active === 1;
      return undefined;
    },

    changeZoneDisable: (ctx) => {
      zoneOf(ctx).disabled = ctx.body.disable === 1;
      return undefined;
    },

    addZoneDomainPermission: (ctx) => {
      const zone = zoneOf(ctx);
      const { type, domain } = ctx.body as { type: 'whitelist' | 'blacklist'; domain: string };
      if (!DOMAIN.test(domain)) throw badRequest('body.domain', 'is not a domain name');
      const other = type === 'whitelist' ? 'blacklist' : 'whitelist';
      const list = zone.domains[type] ?? [];
      if (!list.includes(domain)) list.push(domain);
      zone.domains[type] = list;
      // A domain is on one list at a time.
      const rest = zone.domains[other];
      if (rest?.includes(domain)) zone.domains[other] = rest.filter((d) => d !== domain);
      return { body: domainLists(zone) };
    },

    removeZoneDomainPermission: (ctx) => {
      const zone = zoneOf(ctx);
      const { type, domain } = ctx.body as { type: 'whitelist' | 'blacklist'; domain: string };
      const list = zone.domains[type];
      if (!list?.includes(domain)) throw badRequest('body.domain', `${domain} is not in the ${type} of Zone ${zone.name}`);
      zone.domains[type] = list.filter((d) => d !== domain);
      return { body: domainLists(zone) };
    },

    getZoneWhitelist: (ctx) => ({ body: Object.fromEntries(zonesOf(ctx).map((z) => [z.name, z.whitelist])) }),

    addZoneWhitelistIp: (ctx) => {
      const targets = whitelistTargets(ctx);
      const entries = parseWhitelist(ctx.body.ip, 'body.ip');
      for (const z of targets) for (const e of entries) if (!z.whitelist.includes(e)) z.whitelist.push(e);
      return undefined;
    },

    removeZoneWhitelistIp: (ctx) => {
      const targets = whitelistTargets(ctx);
      const ip = ctx.body.ip as string;
      const holders = targets.filter((z) => z.whitelist.includes(ip));
      if (holders.length === 0) {
        const where = targets.length === 1 ? `the whitelist of Zone ${targets[0]?.name}` : 'any Zone whitelist';
        throw badRequest('body.ip', `${ip} is not in ${where}`);
      }
      for (const z of holders) z.whitelist = z.whitelist.filter((e) => e !== ip);
      return undefined;
    },

    getBalance: () => ({ body: { balance: money(store.account.balance), pending_costs: money(store.account.pending_costs) } }),

    getAccountStatus: (ctx) => ({
      body: {
        status: store.account.status,
        customer: store.account.customer,
        can_make_requests: store.account.status === 'active',
        auth_fail_reason: null,
        ip: ctx.ip,
      },
    }),

    setAccountStatus: (ctx) => {
      if (!ctx.auth.admin) throw new HttpError(403, 'Permission denied: only account admins may change the account status');
      store.account.status = ctx.body.status;
      return { body: { status: store.account.status } };
    },

    getNetworkStatus: (ctx) => ({ body: { status: store.networkStatus[ctx.params.network_type as keyof Store['networkStatus']] } }),

    listCities: (ctx) => ({ body: store.cities[String(ctx.query.country).toLowerCase()] ?? [] }),
  };

  // The credential belongs to one account: naming another one is refused before any handler runs.
  for (const [id, handler] of Object.entries(handlers)) {
    handlers[id] = (ctx) => {
      const customer = input(ctx).values.customer;
      if (customer !== undefined && customer !== ctx.auth.customer) {
        throw new HttpError(401, UNAUTHORIZED, {
          details: [{ field: `${input(ctx).where}.customer`, reason: 'the credential does not belong to this customer' }],
        });
      }
      return handler(ctx);
    };
  }
  return handlers;
}
