import { randomInt } from 'node:crypto';
import { intToIpv4, ipv4Range, isWhitelistEntry } from '../domain/net.js';
import { HttpError } from '../shared/errors.js';
import type { ManagerContext, ManagerHandlers, ManagerHandlerTable } from './context.js';

// Users and access: the API token, the whitelists of the ports and of the admin UI, the users.

const TOKEN_LIMIT = 5;
const HOUR = 3_600_000;
const TOKEN_CHARS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** `list` with `ip` at its end, unless it holds it. */
const withEntry = (list: string[] | undefined, ip: string): string[] => (list?.includes(ip) ? list : [...(list ?? []), ip]);

/**
 * The manager's default whitelist (command line, admin and all-ports whitelists) changed from `prev`
 * to what it is now: every port's whitelist drops the old default entries and takes the new ones
 * first, its own after them, stored and running alike (lib/manager.js 528-553 `set_whitelist_ips`,
 * lib/proxy_port.js 214-222, lib/mixins/mgr_proxy.js 719-733).
 */
export function defaultWhitelistChanged(c: ManagerContext, prev: string[]): void {
  const curr = c.portFacts({}).whitelist;
  for (const cfg of [...c.store.ports.values()]) {
    const own = (Array.isArray(cfg.whitelist_ips) ? cfg.whitelist_ips : []).filter((ip) => !prev.includes(ip));
    c.store.putPort({ ...cfg, whitelist_ips: [...new Set(curr.concat(own))] });
  }
}

/** A whitelist body as the router hands it on: its documented `ip`, unchecked (the spec's `x-observed-unchecked`). */
type WhitelistBody = Parameters<ManagerHandlerTable['addWhitelistIp' | 'addAdminWhitelistIp']>[0]['body'];

/**
 * The `ip` of a whitelist body, read as the real manager reads it, unchecked (web_api.js 1058-1062 and
 * 1127-1136): a body without one (none, a text, a form without `ip`) or with a false one (`""`, `0`) is
 * answered 400 with its text; one it cannot parse as an IP or subnet (no text, `any`) 422.
 */
function ipOf(body: WhitelistBody): string {
  const ip = body?.ip;
  if (!ip) throw new HttpError(400, 'You need to pass an IP to add\n', { text: true });
  if (typeof ip !== 'string' || ip === 'any' || !isWhitelistEntry(ip)) throw new HttpError(422, 'Wrong format\n', { text: true });
  return ip;
}

export function usersAccessHandlers(c: ManagerContext) {
  const { m, log, store } = c;
  return {
    getNewToken: () => {
      const now = store.clock.now();
      const recent = m().token_issued.filter((t) => now - t < HOUR);
      if (recent.length >= TOKEN_LIMIT) {
        const wait = Math.ceil(((recent[0] as number) + HOUR - now) / 1000);
        throw new HttpError(429, 'Too many requests: at most 5 tokens an hour', { text: true, headers: { 'Retry-After': String(wait) } });
      }
      const token = Array.from({ length: 14 }, () => TOKEN_CHARS[randomInt(TOKEN_CHARS.length)]).join('');
      store.setManager({ token_issued: [...recent, now], token });
      log('new token generated');
      return { body: { token } };
    },

    addWhitelistIp: (ctx) => {
      const ip = ipOf(ctx.body);
      const prev = c.portFacts({}).whitelist;
      store.setSettings({ whitelist_ips: withEntry(m().settings.whitelist_ips, ip) });
      defaultWhitelistChanged(c, prev);
      log(`${ip} added to the whitelist of all ports`);
      return { text: 'OK' };
    },

    addAdminWhitelistIp: (ctx) => {
      const ip = ipOf(ctx.body);
      // A subnet is stored as its network address, the mask dropped (`new Netmask(ip).base`, web_api.js 1061).
      const range = ip.includes('/') ? ipv4Range(ip) : undefined;
      const entry = range ? intToIpv4(range[0]) : ip;
      const prev = c.portFacts({}).whitelist;
      store.setSettings({ www_whitelist_ips: withEntry(m().settings.www_whitelist_ips, entry) });
      defaultWhitelistChanged(c, prev);
      log(`${entry} allowed into the admin UI`);
      return { text: 'OK' };
    },

    listUsers: () => ({ body: m().users }),

    addUser: (ctx) => {
      const email = ctx.body.email;
      if (!m().users.some((u) => u.email === email)) store.setManager({ users: [...m().users, { email }] });
      log(`user ${email} added`);
      return undefined;
    },
  } satisfies ManagerHandlers;
}
