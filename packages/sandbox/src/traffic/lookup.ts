import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { isIP } from 'node:net';
import { isLoopback } from '../domain/net.js';
import { loopbackOpen, remoteLoopbackMessage } from './egress.js';

// Egress lets `localhost` through as loopback by its name; what the name resolves to (the hosts file
// may say anything) is checked when the connection is made: every address must be loopback. Any other
// name a client from beyond loopback asks for is checked there too: none of its addresses may be
// loopback unless `--egress-allow` opens loopback to remote clients (a name it allows, say, could
// resolve to 127.0.0.1 and make the sandbox a gateway to this machine's own services).

type Resolve = (
  hostname: string,
  options: LookupOptions & { all: true },
  done: (err: Error | null, addresses: LookupAddress[]) => void,
) => void;
type Done = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;
/** A client from beyond loopback, and the `--egress-allow` list its targets are checked against. */
export interface Remote {
  clientIp: string;
  allow: readonly string[];
}

const refused = (message: string, remote: boolean) => Object.assign(new Error(message), { code: 'EGRESS_REFUSED', remote });

/** A `lookup` whose every answer `check` passes (undefined) or refuses (the message of an EGRESS_REFUSED error). */
function checkedLookup(check: (hostname: string, addresses: LookupAddress[]) => string | undefined, resolve: Resolve, remote = false) {
  return (hostname: string, options: LookupOptions, done: Done): void => {
    resolve(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return done(err, []);
      const why = check(hostname, addresses);
      if (why !== undefined) return done(refused(why, remote), []);
      if (options.all) return done(null, addresses);
      const first = addresses[0] as LookupAddress;
      done(null, first.address, first.family);
    });
  };
}

/** A `lookup` for net/http connections to a name trusted as loopback: one that resolves elsewhere fails (code EGRESS_REFUSED). */
export function loopbackLookup(resolve: Resolve = dnsLookup as Resolve) {
  return checkedLookup((hostname, addresses) => {
    const outside = addresses.find((a) => !isLoopback(a.address));
    if (outside || !addresses.length)
      return `${hostname} ${outside ? `resolves to ${outside.address}` : 'resolves to nothing'}, which is not loopback`;
    return undefined;
  }, resolve);
}

/** A `lookup` for a remote client's target name: one resolving to a loopback address not open to it fails (code EGRESS_REFUSED). */
export function remoteLookup(remote: Remote, resolve: Resolve = dnsLookup as Resolve) {
  return checkedLookup(
    (hostname, addresses) => {
      const inside = addresses.find((a) => isLoopback(a.address) && !loopbackOpen(a.address, remote.allow));
      if (!inside) return undefined;
      return `${remoteLoopbackMessage(remote.clientIp, hostname)} (${hostname} resolves to ${inside.address})`;
    },
    resolve,
    true,
  );
}

/** Whether `host` is a name (not an IP) that a remote client's connection must resolve and check. */
const remoteName = (host: string, remote: Remote | undefined): remote is Remote =>
  remote !== undefined && !(isIP(remote.clientIp) && isLoopback(remote.clientIp)) && isIP(host.replace(/^\[|\]$/g, '')) === 0;

/**
 * The `lookup` option of a connection to `host`: the loopback check for `localhost`; for a client
 * from beyond loopback (`remote`), the check that another name does not lead to loopback; none else.
 * A checked connection is a new one (`agent: false`): a kept-alive one to the same name was checked
 * for another client, or not at all (a remote client once reached loopback on a local client's socket).
 */
export function lookupFor(host: string, remote?: Remote, resolve?: Resolve): { lookup?: ReturnType<typeof loopbackLookup>; agent?: false } {
  if (host.toLowerCase() === 'localhost') return { lookup: loopbackLookup(resolve), agent: false };
  return remoteName(host, remote) ? { lookup: remoteLookup(remote, resolve), agent: false } : {};
}

/** For a target a port sends on to the network: rejects (EGRESS_REFUSED) when `host` leads a remote client to loopback. */
export function checkRemoteName(host: string, remote: Remote, resolve?: Resolve): Promise<void> {
  const { lookup } = lookupFor(host, remote, resolve);
  if (!lookup || host.toLowerCase() === 'localhost') return Promise.resolve();
  return new Promise((ok, fail) => lookup(host, {}, (err) => (err?.code === 'EGRESS_REFUSED' ? fail(err) : ok())));
}
