import { randomBytes } from 'node:crypto';
import { currentPlan, planShared } from '../domain/ips.js';
import { pricePerGb } from '../domain/money.js';
import { isWhitelistEntry } from '../domain/net.js';
import type { StoredPlan, ZoneState } from '../domain/types.js';
import { badRequest, HttpError } from '../shared/errors.js';
import type { AccountContext, AccountCtx, AccountHandlers } from './context.js';
import { answerForms, productOf } from './forms.js';

// Zone administration: create, read and delete Zones, their passwords, permissions, status, uptime
// option, domain permissions and IP whitelist.

const DOMAIN = /^(\*\.)?[A-Za-z0-9]([A-Za-z0-9-]{0,62})(\.[A-Za-z0-9]([A-Za-z0-9-]{0,62}))*\.?$/;
const ZONE_NAME = /^[A-Za-z0-9_]{1,64}$/;

export function zonesHandlers(c: AccountContext) {
  const { store, zoneOf, zonesOf } = c;
  type C = AccountCtx;

  /** Zones a whitelist change applies to: the named one, or every Zone when none is named (observed). */
  function whitelistTargets(ctx: C): ZoneState[] {
    if (ctx.auth.scheme === 'zone' || ctx.body.zone !== undefined) return [zoneOf(ctx)];
    return [...store.zones.values()];
  }

  const zoneSummary = (z: ZoneState) => (z.whitelist.length === 0 || z.whitelist.includes('any') ? 'any' : z.whitelist.join(','));
  const domainLists = (z: ZoneState) =>
    z.domains.blacklist ? { whitelist: z.domains.whitelist, blacklist: z.domains.blacklist } : { whitelist: z.domains.whitelist };

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

  return {
    getZone: (ctx) => {
      const z = zoneOf(ctx);
      // Neither the Zone's disabled state nor its 100% uptime option is a field here: the reference's example
      // shows neither and no client reads one (the state shows in getZoneStatus and the listings).
      // `plan`, the current plan with its `product`, beside the documented `plans` (the reference; clients read it).
      // `ips` an array as the reference shows it, the seed's summary string with `answer_forms: seed` (spec: Zone.ips).
      const whitelist = z.whitelist.length === 0 ? ['any'] : z.whitelist;
      return {
        body: {
          ips: answerForms(store) === 'seed' ? zoneSummary(z) : whitelist,
          password: z.passwords,
          plans: z.plans,
          plan: { ...currentPlan(z), product: productOf(z) },
        },
      };
    },

    createZone: (ctx) => {
      if (ctx.auth.scheme === 'zone')
        throw new HttpError(401, 'A Zone credential cannot create Zones', {
          details: [{ field: 'header.X-Service-Auth', reason: 'use a token' }],
        });
      const b = ctx.body;
      const name = b.zone.name;
      if (!ZONE_NAME.test(name)) throw badRequest('body.zone.name', 'may contain only letters, digits and _');
      // 409 with "Duplicate zone name" (observed in the provider's Python SDK: the spec's Conflict).
      if (store.zones.has(name))
        throw new HttpError(409, `Duplicate zone name: ${name} already exists`, {
          details: [{ field: 'body.zone.name', reason: `Zone ${name} already exists` }],
        });
      let passwords: string[];
      if (b.zone.password === undefined) passwords = [randomBytes(9).toString('base64url').replace(/[-_]/g, 'x').slice(0, 12)];
      else passwords = Array.isArray(b.zone.password) ? b.zone.password : [b.zone.password];
      passwords.forEach((p, i) => {
        const field = Array.isArray(b.zone.password) ? `body.zone.password[${i}]` : 'body.zone.password';
        if (p.length === 0 || p.includes('-'))
          throw badRequest(field, 'must be non-empty and free of "-" (the separator of X-Service-Auth)');
      });
      const whitelist = b.zone.ips === undefined ? ['any'] : parseWhitelist(b.zone.ips, 'body.zone.ips');
      const plan: StoredPlan = { type: 'static', ...b.plan, start: new Date(store.clock.now()).toISOString() };
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
        price_per_gb: pricePerGb(plan),
      };
      // Everything is checked before anything is allocated: a refused create leaves the pools as they were.
      const wantIps = plan.type === 'static' ? (plan.ips ?? 0) : 0;
      const ips = wantIps ? store.pools.free({ shared: planShared(plan), notCountry: plan.not_country }).slice(0, wantIps) : [];
      if (ips.length < wantIps) throw badRequest('body.plan.ips', `only ${ips.length} IPs are available for this plan`);
      const wantGips = plan.type === 'resident' && plan.vip ? (plan.vips ?? 0) : 0;
      const gips = wantGips ? store.pools.freeGips(plan.vip_country).slice(0, wantGips) : [];
      if (gips.length < wantGips) throw badRequest('body.plan.vips', `only ${gips.length} gIPs are available for this plan`);
      store.addZone(zone, ips, gips);
      const { start: _start, ...shown } = plan;
      return {
        body: {
          plan: { mobile: false, city: false, asn: false, vip: false, not_country: null, ...shown },
          zone: { name, ips: zoneSummary(zone), password: passwords },
        },
      };
    },

    // An unknown Zone: 400 whose text says "not found" (observed in the provider's Python SDK).
    deleteZone: (ctx) => {
      store.deleteZone(c.zoneOr(ctx, 400));
      return undefined;
    },

    // An unknown Zone: 422 (observed: the provider's MCP server reads it as "zone does not exist").
    getZonePasswords: (ctx) => ({ body: { passwords: c.zoneOr(ctx, 422).passwords } }),
    getZonePermissions: (ctx) => ({ body: { perms: zoneOf(ctx).perms } }),
    getZoneStatus: (ctx) => ({ body: { status: zoneOf(ctx).disabled ? 'disabled' : 'active' } }),

    listActiveZones: () => ({
      // `status` (observed: the JS SDK returns it); its values are not documented, the listing holds active Zones only.
      body: [...store.zones.values()].filter((z) => !z.disabled).map((z) => ({ name: z.name, type: productOf(z), status: 'active' })),
    }),

    // Deleted Zones are not kept by the sandbox, so `deleted` never shows (parity-account.yaml).
    listAllZones: () => ({
      body: [...store.zones.values()].map((z) => ({ name: z.name, type: productOf(z), status: z.disabled ? 'disabled' : 'active' })),
    }),

    switchZoneUptime: (ctx) => {
      store.updateZone(zoneOf(ctx), { uptime_100: ctx.body.active === 1 });
      return undefined;
    },

    changeZoneDisable: (ctx) => {
      store.updateZone(zoneOf(ctx), { disabled: ctx.body.disable === 1 });
      return undefined;
    },

    addZoneDomainPermission: (ctx) => {
      const zone = zoneOf(ctx);
      const { type, domain } = ctx.body;
      if (!DOMAIN.test(domain)) throw badRequest('body.domain', 'is not a domain name');
      const other = type === 'whitelist' ? 'blacklist' : 'whitelist';
      const list = zone.domains[type] ?? [];
      // A domain is on one list at a time.
      const rest = zone.domains[other];
      store.updateZone(zone, {
        domains: {
          ...zone.domains,
          [type]: list.includes(domain) ? list : [...list, domain],
          ...(rest?.includes(domain) ? { [other]: rest.filter((d) => d !== domain) } : {}),
        },
      });
      return { body: domainLists(zone) };
    },

    removeZoneDomainPermission: (ctx) => {
      const zone = zoneOf(ctx);
      const { type, domain } = ctx.body;
      const list = zone.domains[type];
      if (!list?.includes(domain)) throw badRequest('body.domain', `${domain} is not in the ${type} of Zone ${zone.name}`);
      store.updateZone(zone, { domains: { ...zone.domains, [type]: list.filter((d) => d !== domain) } });
      return { body: domainLists(zone) };
    },

    getZoneWhitelist: (ctx) => ({ body: Object.fromEntries(zonesOf(ctx).map((z) => [z.name, z.whitelist])) }),

    addZoneWhitelistIp: (ctx) => {
      const targets = whitelistTargets(ctx);
      const entries = parseWhitelist(ctx.body.ip, 'body.ip');
      for (const z of targets) {
        const added = entries.filter((e, i) => !z.whitelist.includes(e) && entries.indexOf(e) === i);
        if (added.length) store.updateZone(z, { whitelist: [...z.whitelist, ...added] });
      }
      return undefined;
    },

    removeZoneWhitelistIp: (ctx) => {
      const targets = whitelistTargets(ctx);
      const ip = ctx.body.ip;
      const holders = targets.filter((z) => z.whitelist.includes(ip));
      if (holders.length === 0) {
        const where = targets.length === 1 ? `the whitelist of Zone ${targets[0]?.name}` : 'any Zone whitelist';
        throw badRequest('body.ip', `${ip} is not in ${where}`);
      }
      for (const z of holders) store.updateZone(z, { whitelist: z.whitelist.filter((e) => e !== ip) });
      return undefined;
    },
  } satisfies AccountHandlers;
}
