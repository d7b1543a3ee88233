import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { isLoopback } from '../domain/net.js';

// Egress lets `localhost` through as loopback by its name; what the name resolves to (the hosts file
// may say anything) is checked when the connection is made: every address must be loopback.

type Resolve = (
  hostname: string,
  options: LookupOptions & { all: true },
  done: (err: Error | null, addresses: LookupAddress[]) => void,
) => void;
type Done = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** A `lookup` for net/http connections to a name trusted as loopback: one that resolves elsewhere fails (code EGRESS_REFUSED). */
export function loopbackLookup(resolve: Resolve = dnsLookup as Resolve) {
  return (hostname: string, options: LookupOptions, done: Done): void => {
    resolve(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return done(err, []);
      const outside = addresses.find((a) => !isLoopback(a.address));
      if (outside || !addresses.length) {
        const why = outside ? `resolves to ${outside.address}` : 'resolves to nothing';
        return done(Object.assign(new Error(`${hostname} ${why}, which is not loopback`), { code: 'EGRESS_REFUSED' }), []);
      }
      if (options.all) return done(null, addresses);
      const first = addresses[0] as LookupAddress;
      done(null, first.address, first.family);
    });
  };
}

/** The `lookup` option of a connection to `host`: the loopback check for `localhost`, none for anything else. */
export const lookupFor = (host: string) => (host.toLowerCase() === 'localhost' ? { lookup: loopbackLookup() } : {});
