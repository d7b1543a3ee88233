import { isLoopback } from '../domain/net.js';
import type { ProxyPortConfig } from '../domain/types.js';
import type { PortTrafficOptions } from './port-context.js';
import { extProxy } from './upstream.js';

// Proxy loops among the sandbox's own ports (see ports.ts, which refuses a request on such a port).

/**
 * The ports of a chain that comes back to itself, however many hops: from this port, each external
 * proxy (`ext_proxies`) that is a port of this sandbox on loopback, else the manager-wide upstream
 * (`--proxy`) when it is one, followed until a port comes again; undefined when every chain ends
 * elsewhere. One request through such a chain once took 512 sockets (through `ext_proxies`, 2,046)
 * and filled the log. A chain any of whose entries loops is refused, whichever entry a request's turn
 * would take. `byAt`: each listening port by the number it listens on.
 */
export function loopOf(
  cfg: ProxyPortConfig,
  on: { byAt: ReadonlyMap<number, number>; ports: ReadonlyMap<number, ProxyPortConfig>; network: PortTrafficOptions['network'] },
): number[] | undefined {
  const own = (host: string, port: number) => {
    const h = host.replace(/^\[|\]$/g, '').toLowerCase();
    return h === 'localhost' || isLoopback(h) ? on.byAt.get(port) : undefined;
  };
  const next = (c: ProxyPortConfig): number[] => {
    const entries = (c.ext_proxies ?? []).filter(Boolean);
    if (entries.length) {
      const out: number[] = [];
      for (const e of entries) {
        const ext = extProxy(e, c);
        const to = ext && own(ext.host, ext.port);
        if (to !== undefined) out.push(to);
      }
      return out;
    }
    const up = on.network();
    if (!up || up.network) return [];
    const to = own(up.host, up.port);
    return to === undefined ? [] : [to];
  };
  const path: number[] = [];
  const seen = new Set<number>();
  const walk = (c: ProxyPortConfig): number[] | undefined => {
    if (path.includes(c.port)) return [...path, c.port];
    if (seen.has(c.port)) return undefined;
    seen.add(c.port);
    path.push(c.port);
    for (const to of next(c)) {
      const n = on.ports.get(to);
      const found = n && walk(n);
      if (found) return found;
    }
    path.pop();
    return undefined;
  };
  return walk(cfg);
}
