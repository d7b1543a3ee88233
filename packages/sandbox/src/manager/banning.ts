import { isIP } from 'node:net';
import { HttpError } from '../errors.js';
import type { ManagerContext, ManagerHandlers } from './context.js';

// Banning: IPs banned from a port's exit peers (per domain, with an expiry), or from all ports.

function validIps(list: string[], field: string): void {
  const details = list
    .map((ip, i) => (isIP(ip) ? undefined : { field: `${field}[${i}]`, reason: `${ip} is not an IP address` }))
    .filter((d) => d !== undefined);
  if (details.length) throw new HttpError(400, 'Invalid request', { details });
}

export function banningHandlers(c: ManagerContext) {
  const { store, log, portOf } = c;
  function ban(ports: number[], ips: string[], domain: string | undefined, ms: number | undefined): void {
    const to = ms ? store.clock.now() + ms : 0;
    for (const port of ports) for (const ip of ips) store.addBan({ port, ip, domain: domain ?? null, to });
    log(`banned ${ips.join(', ')} on port${ports.length === 1 ? '' : 's'} ${ports.join(', ')}${ms ? ` for ${ms} ms` : ''}`);
  }

  /** Lifts bans of `ips` on a port (all domains unless one is named); returns how many were lifted. */
  function unban(port: number, ips: string[], domain: string | undefined): number {
    if (domain !== undefined) return ips.filter((ip) => store.liftBan(port, ip, domain)).length;
    const wanted = new Set(ips);
    const lift = store.activeBans(port).filter((b) => wanted.has(b.ip));
    for (const b of lift) store.liftBan(port, b.ip, b.domain);
    return lift.length;
  }

  return {
    banIp: (ctx) => {
      const cfg = portOf(ctx);
      validIps([ctx.body.ip], 'body.ip');
      ban([cfg.port], [ctx.body.ip], ctx.body.domain, ctx.body.ms);
      return { status: 204 };
    },

    // BanIpsRequest and BanIpAllPortsRequest are a union of two forms (`ip` or `ips` required).
    banIps: (ctx) => {
      const cfg = portOf(ctx);
      const field = ctx.body.ip ? 'body.ip' : 'body.ips';
      const ips = [...(ctx.body.ip ?? []), ...(ctx.body.ips ?? [])];
      validIps(ips, field);
      ban([cfg.port], ips, ctx.body.domain, ctx.body.ms);
      return { status: 204 };
    },

    unbanIp: (ctx) => {
      const cfg = portOf(ctx);
      if (unban(cfg.port, [ctx.body.ip], ctx.body.domain) === 0) throw new HttpError(400, 'IP is not banned', { text: true });
      log(`unbanned ${ctx.body.ip} on port ${cfg.port}`);
      return { body: { ips: store.activeBans(cfg.port).map(({ ip, domain, to }) => ({ ip, domain, to })) } };
    },

    unbanIps: (ctx) => {
      const cfg = portOf(ctx);
      unban(cfg.port, ctx.body.ip, ctx.body.domain);
      log(`unbanned ${ctx.body.ip.join(', ')} on port ${cfg.port}`);
      return { text: 'OK' };
    },

    banIpAllPorts: (ctx) => {
      const b = ctx.body;
      const ips = [...(b.ip ? [b.ip] : []), ...(b.ips ?? [])];
      validIps(b.ip ? [b.ip] : [], 'body.ip');
      validIps(b.ips ?? [], 'body.ips');
      const unknown = (b.ports ?? [])
        .map((p, i) => (store.ports.has(p) ? undefined : { field: `body.ports[${i}]`, reason: `no proxy port ${p}` }))
        .filter((d) => d !== undefined);
      if (unknown.length) throw new HttpError(400, 'Invalid request', { details: unknown });
      ban(b.ports ?? [...store.ports.keys()], ips, b.domain, b.ms);
      return { status: 204 };
    },
  } satisfies ManagerHandlers;
}
