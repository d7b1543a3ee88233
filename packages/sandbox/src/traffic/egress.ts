import { isIP } from 'node:net';
import { ipInList, isLoopback, plainAddress } from '../domain/net.js';

// Where traffic may go: the egress rules of the network and the ports (`--egress-allow`).

/** Whether traffic may go to `host`: loopback always, anything else only when `--egress-allow` names it. */
export function egressAllowed(host: string, allow: readonly string[]): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (h === 'localhost' || isLoopback(h)) return true;
  for (const entry of allow) {
    if (entry === '*' || entry.toLowerCase() === h) return true;
    if (entry.startsWith('.') && h.endsWith(entry.toLowerCase())) return true;
  }
  return (
    isIP(h) !== 0 &&
    ipInList(
      h,
      allow.filter((e) => e !== '*'),
    )
  );
}

/**
 * Whether a loopback target is refused to this client. Loopback is this machine's own services: a
 * client on this machine reaches them, one from beyond loopback (a sandbox listening on 0.0.0.0) only
 * when `--egress-allow` names loopback (`loopback`, `localhost`, a loopback address or range).
 */
export function loopbackRefused(host: string, clientIp: string, allow: readonly string[]): boolean {
  if (isLoopback(clientIp)) return false;
  const bare = host
    .replace(/^\[|\]$/g, '')
    .replace(/\.+$/, '')
    .toLowerCase();
  // An address in its usual text, so that --egress-allow's `127.0.0.1` names `2130706433` too.
  const h = plainAddress(bare)?.toString() ?? bare;
  if (!(h === 'localhost' || h.endsWith('.localhost') || isLoopback(h))) return false;
  const named = allow.filter((e) => e !== '*').map((e) => e.toLowerCase());
  return !(
    named.includes('loopback') ||
    named.includes(h) ||
    (isIP(h) !== 0 &&
      ipInList(
        h,
        named.filter((e) => e !== 'loopback'),
      ))
  );
}

/** The refusal of a loopback target to a client from beyond loopback. */
export const remoteLoopbackMessage = (clientIp: string, host: string) =>
  `A client from ${clientIp} may not reach ${host}: loopback targets are this machine's own services, open to clients on it only; name loopback in --egress-allow to open them to remote clients`;

/** Whether `--egress-allow` opens the loopback address `address` to clients from beyond loopback (`loopback`, or an entry holding it). */
export function loopbackOpen(address: string, allow: readonly string[]): boolean {
  const named = allow.filter((e) => e !== '*').map((e) => e.toLowerCase());
  return (
    named.includes('loopback') ||
    ipInList(
      address,
      named.filter((e) => e !== 'loopback'),
    )
  );
}

/** The refusal's text of a connection egress stopped where it resolved (lookup.ts): a remote client's own message, else why. */
export const egressMessage = (err: Error & { remote?: boolean }) =>
  err.remote ? err.message : `The sandbox sends traffic only to loopback: ${err.message}`;
