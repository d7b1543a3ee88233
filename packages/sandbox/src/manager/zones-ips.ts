import { ipRecord } from '../domain/ips.js';
import { badRequest, onField } from '../shared/errors.js';
import type { ManagerContext, ManagerHandlers } from './context.js';
import { planPerms, zoneRefreshCost } from './manager-options.js';

// Zones and IPs: the account's Zones as the manager sees them, and the IPs and gIPs allocated to them.

export function zonesIpsHandlers(c: ManagerContext) {
  const { store, m, log } = c;
  const zoneNamed = (name = m().settings.zone) => {
    const zone = store.zones.get(name);
    if (!zone) throw badRequest('query.zone', `Zone ${name} does not exist`);
    return zone;
  };
  const gipCountry = (vip: string) => store.gipPool.get(vip)?.country ?? vip.slice(0, 2);
  return {
    listZones: () => ({
      body: {
        zones: [...store.zones.values()]
          .filter((z) => !z.disabled)
          .map((z) => {
            const plan = z.plans[z.plans.length - 1];
            // As the real manager lists a Zone (lib/zones.js 33-45, 67-76): its permissions from its plan (get_perm,
            // lib/zones.js 6-31), its first password (none when it has none).
            return {
              name: z.name,
              perm: planPerms(plan as Record<string, unknown> | undefined, z.perms.join(' ')).join(' '),
              plan,
              ...(z.passwords[0] !== undefined ? { password: z.passwords[0] } : {}),
              refresh_cost: zoneRefreshCost(plan),
            };
          }),
        def: m().settings.zone,
      },
    }),

    refreshZones: () => {
      log('zones refreshed from the account');
      return undefined;
    },

    // With each IP's country (`ips_cn`, `vips_cn`), which the manager's web interface lists (spec: AllocatedIps).
    listAllocatedIps: (ctx) => {
      const zone = zoneNamed(ctx.query.zone);
      return { body: { ips: zone.ips, ips_cn: zone.ips.map((ip) => ({ ip, maxmind: ipRecord(store, ip).maxmind })) } };
    },

    listAllocatedVips: (ctx) => {
      const zone = zoneNamed(ctx.query.zone);
      return { body: { ips: zone.gips, vips_cn: zone.gips.map((ip) => ({ ip, country: gipCountry(ip) })) } };
    },

    refreshIps: (ctx) => {
      const zone = store.zones.get(ctx.body.zone);
      if (!zone) throw badRequest('body.zone', `Zone ${ctx.body.zone} does not exist`);
      // gIPs by name (`vips`), as the manager's web interface refreshes them: the Zone's gIPs come back.
      const vips = ctx.body.vips;
      if (vips !== undefined) {
        onField('body.vips', () => store.pools.replaceGips(zone, vips));
        log(`refreshed ${new Set(vips).size} gIPs of Zone ${zone.name}`);
        return { body: { vips: zone.gips.map((vip) => ({ vip, country: gipCountry(vip) })) } };
      }
      const wanted = ctx.body.ips ?? [...zone.ips];
      onField('body.ips', () => store.pools.replaceIps(zone, wanted));
      const ips = [...new Set(wanted)];
      log(`refreshed ${ips.length} IPs of Zone ${zone.name}`);
      return {
        body: {
          ips: zone.ips.map((ip) => {
            const r = ipRecord(store, ip);
            return { ...r, ext: { ...r.ext, def: r.maxmind } };
          }),
        },
      };
    },
  } satisfies ManagerHandlers;
}
