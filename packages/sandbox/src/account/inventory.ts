import type { components } from '@zone-api/spec/account';
import { currentPlan, type IpFilter, ipRange, ipRecord, planShared } from '../domain/ips.js';
import type { ZoneState } from '../domain/types.js';
import type { AccountOperations, OperationCtx } from '../router/handlers.js';
import { badRequest, onField } from '../shared/errors.js';
import type { AccountAuth } from './auth.js';
import type { AccountContext, AccountHandlers } from './context.js';
import { answerForms, flagOn, productOf } from './forms.js';

type Schemas = components['schemas'];

// IP inventory: available IPs, the Zone's datacenter IPs and gIPs (add, remove, refresh), routes, peers.

export function inventoryHandlers(c: AccountContext) {
  const { store, notFound, zoneOf, zonesOf } = c;

  function countAvailable(ctx: OperationCtx<AccountAuth, AccountOperations['getAvailableIpCount' | 'getAvailableIpCountShortForm']>) {
    const zone = zoneOf(ctx);
    const plan = currentPlan(zone);
    // openapi-typescript types a content-encoded query parameter as the string on the wire; the router
    // has parsed the JSON and validated it against the parameter's schema, AvailableIpPlanFilter.
    const filter = ctx.query.plan as Schemas['AvailableIpPlanFilter'] | undefined;
    if (!filter) {
      if (plan.type === 'resident') return { body: { count: store.pools.freeGips(plan.vip_country).length } };
      return { body: { count: store.pools.free({ shared: planShared(plan), notCountry: plan.not_country }).length } };
    }
    const f: IpFilter = {};
    if (filter.ips_type !== undefined) f.shared = filter.ips_type === 'shared';
    if (filter.country !== undefined) f.country = filter.country;
    if (filter.country_city !== undefined) {
      f.countryCity = filter.country_city;
      if (f.country && !f.countryCity.toLowerCase().startsWith(`${f.country.toLowerCase()}-`)) {
        throw badRequest('query.plan.country_city', `is not in country ${f.country}`);
      }
    }
    if (filter.exclusive_sec !== undefined) f.exclusiveSec = Number(filter.exclusive_sec);
    if (typeof filter.domain_whitelist === 'string') f.domains = filter.domain_whitelist.split(/\s+/).filter(Boolean);
    if (filter.geo_db)
      f.geoDb = Object.entries(filter.geo_db)
        .filter(([, on]) => on)
        .map(([db]) => db);
    return { body: { count: store.pools.free(f).length } };
  }

  function refreshGips(zone: ZoneState, vips: string[]) {
    onField('body.vips', () => store.pools.replaceGips(zone, vips));
    return { body: { vips: zone.gips.map((vip) => ({ vip, country: store.gipPool.get(vip)?.country ?? vip.slice(0, 2) })) } };
  }

  function refreshDatacenter(b: Schemas['RefreshDatacenterIpsRequest'], zone: ZoneState) {
    const where = { country: b.country, countryCity: b.country_city };
    const newIps = onField(b.ips ? 'body.ips' : 'body', () => store.pools.replaceIps(zone, b.ips ?? [...zone.ips], where));
    return { body: { ips: zone.ips, new_ips: newIps } };
  }

  return {
    getAvailableIpCount: countAvailable,
    getAvailableIpCountShortForm: countAvailable,

    listRecentIps: (ctx) => ({ body: Object.fromEntries(zonesOf(ctx).map((z) => [z.name, z.recent_ips])) }),

    // One IP per line, or JSON with list_countries (the reference, and what live clients read); the seed's
    // range with the account's `answer_forms: seed` (spec: getRouteIps).
    getRouteIps: (ctx) => {
      const zone = zoneOf(ctx);
      const country = (ctx.query.country ?? ctx.auth.country)?.toLowerCase();
      const ips = zone.ips
        .filter((ip) => !country || store.pool.get(ip)?.country === country)
        .sort((a, b) => a.localeCompare(b, 'en', { numeric: true }));
      if (flagOn(ctx.query.list_countries)) return { body: ips.map((ip) => ({ ip, country: store.pool.get(ip)?.country ?? 'us' })) };
      if (answerForms(store) === 'seed' && !flagOn(ctx.query.expand)) return { text: ipRange(ips) };
      return { text: ips.join('\n') };
    },

    listRouteVips: (ctx) => ({ body: zoneOf(ctx).gips }),

    listZoneIps: (ctx) => {
      const zone = zoneOf(ctx);
      if (flagOn(ctx.query.ip_per_country)) {
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
      const b = ctx.body;
      const plan = currentPlan(zone);
      if (plan.type === 'resident')
        throw badRequest('body.zone', `Zone ${zone.name} is a residential Zone: it has gIPs, not datacenter IPs`);
      if (b.country && b.country_city && !b.country_city.toLowerCase().startsWith(`${b.country.toLowerCase()}-`)) {
        throw badRequest('body.country_city', `is not in country ${b.country}`);
      }
      const free = store.pools.free({
        shared: planShared(plan),
        country: b.country,
        countryCity: b.country_city,
        notCountry: plan.not_country,
      });
      if (free.length < b.count) throw badRequest('body.count', `only ${free.length} IPs are available for this request`);
      const fresh = free.slice(0, b.count);
      store.pools.allocate(zone, fresh);
      return { body: { ips: zone.ips, new_ips: fresh.map((p) => p.ip) } };
    },

    removeZoneIps: (ctx) => {
      const zone = zoneOf(ctx);
      onField('body.ips', () => store.pools.release(zone, ctx.body.ips));
      const ips = [...new Set(ctx.body.ips)];
      return { body: { ips } };
    },

    removeZoneVips: (ctx) => {
      const zone = zoneOf(ctx);
      onField('body.vips', () => store.pools.releaseGips(zone, ctx.body.vips));
      const vips = [...new Set(ctx.body.vips)];
      return { body: { vips } };
    },

    refreshZoneIps: (ctx) => {
      const zone = zoneOf(ctx);
      if ('vips' in ctx.body && Array.isArray(ctx.body.vips)) return refreshGips(zone, ctx.body.vips);
      if (currentPlan(zone).type === 'resident')
        throw badRequest('body.vips', `Zone ${zone.name} is residential: name the gIPs to refresh`);
      return refreshDatacenter(ctx.body, zone);
    },

    // Zones without such IPs are left out: a healthy account gets {} (spec: listUnavailableIps).
    listUnavailableIps: (ctx) => {
      const zones = ctx.auth.scheme === 'zone' ? [zoneOf(ctx)] : [...store.zones.values()];
      const body: Record<string, string[]> = {};
      for (const z of zones) {
        const ips = (z.unavailable_ips ?? []).filter((ip) => z.ips.includes(ip));
        if (ips.length) body[z.name] = ips;
      }
      return { body };
    },

    listProxiesPendingReplacement: (ctx) => {
      const named = ctx.auth.scheme === 'zone' || ctx.query.zone !== undefined;
      const zones = named ? [zoneOf(ctx)] : [...store.zones.values()];
      const body: Record<string, Schemas['PendingReplacement']> = {};
      for (const z of zones) {
        const groups = (z.pending_replacement ?? [])
          .map((g) => ({ due_date: g.due_date, ips: g.ips.filter((ip) => z.ips.includes(ip)) }))
          .filter((g) => g.ips.length > 0);
        if (groups.length === 0) continue;
        body[z.name] = {
          type: productOf(z),
          ips_to_replace: groups.reduce((n, g) => n + g.ips.length, 0),
          ips_list: groups.map((g) => ({
            due_date: g.due_date,
            ips: g.ips.map((ip) => ({ ip, country: store.pool.get(ip)?.country ?? 'us' })),
          })),
        };
      }
      return { body };
    },

    listPeers: (ctx) => {
      const q = ctx.query;
      let zone: string | undefined = q.zone;
      if (ctx.auth.scheme === 'zone') zone = zoneOf(ctx).name;
      else if (zone !== undefined && !store.zones.has(zone)) throw notFound(zone);
      const asn = q.asn?.replace(/^as/i, '');
      const country = q.country?.toLowerCase();
      const peers = store.peers.filter(
        (p) => (!zone || p.zone === zone) && (!country || p.country === country) && (!asn || p.asn === asn) && (!q.vip || p.vip === q.vip),
      );
      return { body: peers.map((p) => p.ip) };
    },

    listAllPeers: () => ({ body: store.peers.map((p) => p.ip) }),
  } satisfies AccountHandlers;
}
