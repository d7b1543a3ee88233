import { HttpError } from '../shared/errors.js';
import type { ManagerContext, ManagerCtx, ManagerHandlers } from './context.js';

// Banning: IPs banned from a port's exit peers (per domain, with an expiry), or from several ports.
// As the real manager 1.570.247 does it (@luminati-io/luminati-proxy, lib/mixins/web_api.js 436-506,
// lib/manager.js 605-619): a ban is keyed by IP and domain; the unban of an IP without a domain lifts
// only its ban without a domain; `unbanips` clears the port's list; a ban on "all ports" bans on the
// ports it names and on no port when it names none.

/**
 * What the real manager takes for an IP (lib/util.js 29-30, 178-180): four dot-separated numbers, or
 * an "eip" (a letter or digit and 32 hex digits, the provider's encoded IP).
 */
export const isManagerIp = (ip: unknown): ip is string =>
  typeof ip === 'string' && (/^\d+\.\d+\.\d+\.\d+$/.test(ip) || /^\w[0-9a-f]{32}$/i.test(ip));

/** The real manager's refusal of a ban without a usable IP (web_api.js 456, 468, 480). */
const noIp = () => new HttpError(400, 'No IP provided', { text: true });

/** `ms` as the real manager reads it (`+ms`): a number, a numeric string, or nothing (no expiry). */
const duration = (ms: unknown): number => {
  const n = Number(ms ?? 0);
  return Number.isFinite(n) && n > 0 ? n : 0;
};

/** A domain as the real manager keys it: none when absent or empty. */
const domainOf = (domain: unknown): string | null => (typeof domain === 'string' && domain !== '' ? domain : null);

export function banningHandlers(c: ManagerContext) {
  const { store, log, portByKey, portOf } = c;
  /** The port of an unban: the real handler throws on an unknown one, `500` (web_api.js 477-478, 492-493, 63-68). */
  function unbanPort(ctx: ManagerCtx): number {
    const cfg = portByKey(ctx.params.port);
    if (!cfg) throw new HttpError(500, `Server error: No proxy at port ${ctx.params.port}`, { text: true });
    return cfg.port;
  }
  function ban(ports: number[], ips: string[], domain: string | null, ms: number): void {
    if (!ports.length || !ips.length) return;
    const to = ms ? store.clock.now() + ms : 0;
    for (const port of ports) for (const ip of ips) store.addBan({ port, ip, domain, to });
    log(`banned ${ips.join(', ')} on port${ports.length === 1 ? '' : 's'} ${ports.join(', ')}${ms ? ` for ${ms} ms` : ''}`);
  }

  /**
   * A port's ban list as the real manager's `get_banlist(server, full)` lists it (manager.js 613-619):
   * items `{ip, domain}` (`""` without a domain) and `to` only for a ban that ends; or, not `full`,
   * the keys `ip` / `ip|domain`.
   */
  function banList(port: number, full: boolean) {
    const bans = store.activeBans(port);
    if (!full) return { ips: bans.map((b) => (b.domain === null ? b.ip : `${b.ip}|${b.domain}`)) };
    return { ips: bans.map(({ ip, domain, to }) => ({ ip, domain: domain ?? '', ...(to ? { to } : {}) })) };
  }

  return {
    banIp: (ctx) => {
      const cfg = portOf(ctx);
      const { ip, domain, ms } = ctx.body ?? {};
      if (!isManagerIp(ip)) throw noIp();
      ban([cfg.port], [ip], domainOf(domain), duration(ms));
      return { status: 204 };
    },

    // BanIpsRequest and BanIpAllPortsRequest are a union of two forms (`ip` or `ips` required).
    banIps: (ctx) => {
      const cfg = portOf(ctx);
      const b = ctx.body ?? {};
      // The real manager reads `ips` and drops what is not an IP (web_api.js 441-444); the documentation's `ip` is read too.
      const given = [...(Array.isArray(b.ip) ? b.ip : []), ...(Array.isArray(b.ips) ? b.ips : [])];
      const ips = given.filter(isManagerIp);
      if (!ips.length) throw new HttpError(400, 'No ips provided', { text: true });
      ban([cfg.port], ips, domainOf(b.domain), duration(b.ms));
      return { status: 204 };
    },

    unbanIp: (ctx) => {
      const cfg = { port: unbanPort(ctx) };
      const { ip, domain } = ctx.body ?? {};
      if (!isManagerIp(ip)) throw noIp();
      // "Not banned" means no ban of that IP at all, whatever its domain (web_api.js 482-484) ...
      if (!store.activeBans(cfg.port).some((b) => b.ip === ip)) throw new HttpError(400, 'IP is not banned', { text: true });
      // ... but only the ban of the domain given (none: the ban without a domain) is lifted.
      if (store.liftBan(cfg.port, ip, domainOf(domain)))
        log(`unbanned ${ip}${domainOf(domain) ? ` for ${domain}` : ''} on port ${cfg.port}`);
      return { body: banList(cfg.port, true) };
    },

    unbanIps: (ctx) => {
      const cfg = { port: unbanPort(ctx) };
      // Every ban of the port, whatever the body names (web_api.js 489-496, server.js 1227).
      for (const b of store.activeBans(cfg.port)) store.liftBan(cfg.port, b.ip, b.domain);
      log(`unbanned every IP on port ${cfg.port}`);
      return { text: 'OK' };
    },

    banIpAllPorts: (ctx) => {
      const b = ctx.body ?? {};
      // Only the ports named, and only those that exist; none named, none banned; a port named as text
      // names none (manager.js 605-611: `ports.includes(p.opt.port)`, a number).
      const named: unknown[] = Array.isArray(b.ports) ? b.ports : [];
      const ports = [...store.ports.keys()].filter((p) => named.includes(p));
      if (Array.isArray(b.ips)) {
        // A list is banned as given, unchecked (web_api.js 451-454).
        ban(
          ports,
          b.ips.filter((ip): ip is string => typeof ip === 'string'),
          domainOf(b.domain),
          duration(b.ms),
        );
        return { status: 204 };
      }
      if (!isManagerIp(b.ip)) throw noIp();
      ban(ports, [b.ip], domainOf(b.domain), duration(b.ms));
      return { status: 204 };
    },

    getBanList: (ctx) => {
      const port = portByKey(ctx.params.port)?.port;
      if (port === undefined) throw new HttpError(400, 'server does not exist', { text: true });
      const full = ctx.query.full;
      return { body: banList(port, full !== undefined && full !== '') };
    },
  } satisfies ManagerHandlers;
}
