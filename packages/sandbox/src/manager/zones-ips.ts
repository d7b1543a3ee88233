import { ipRecord } from '../domain/ips.js';
import { badRequest, onField } from '../shared/errors.js';
import type { ManagerContext, ManagerHandlers } from './context.js';
import { planPerms, zoneRefreshCost } from './manager-options.js';

// Zones and IPs: the account's Zones as the manager sees them, and the IPs and gIPs allocated to them.

export function zonesIpsHandlers(c: ManagerContext) {
  const { store, m, log } = c;
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

    listAllocatedIps: (ctx) => {
      const name = ctx.query.zone ?? m().settings.zone;
      const zone = store.zones.get(name);
      if (!zone) throw badRequest('query.zone', `Zone ${name} does not exist`);
      return { body: { ips: zone.ips } };
    },

    listAllocatedVips: (ctx) => {
      const name = ctx.query.zone ?? m().settings.zone;
      const zone = store.zones.get(name);
      if (!zone) throw badRequest('query.zone', `Zone ${name} does not exist`);
      return { body: { ips: zone.gips } };
    },

    refreshIps: (ctx) => {
      const zone = store.zones.get(ctx.body.zone);
      if (!zone) throw badRequest('body.zone', `Zone ${ctx.body.zone} does not exist`);
      const wanted = ctx.body.ips;
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
