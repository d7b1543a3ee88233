import { type AddressInfo, createServer } from 'node:net';
import { networkInterfaces } from 'node:os';
import type { StateData } from '../domain/types.js';

// Free ports for sandboxes that run side by side: a port the system gives on request (`0`), the
// seed's proxy ports moved to such ports, and errors that say which option frees a taken port.

/** A port free on `host` now (the system's choice): listened on, then released for the caller to bind. */
export function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen({ host, port: 0, exclusive: true }, () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/**
 * Where a port with this `iface` listens, as the real manager finds it (lib/util.js 382-400,
 * lib/server.js 650-655): an IPv4 address as given, an interface's name as its first IPv4 address;
 * anything else (none, `any`, an unknown name, no string) on every interface for the real manager,
 * on loopback for the sandbox (its default: it does not open ports to the network unless told).
 */
export function listenHost(iface: unknown): string {
  if (typeof iface !== 'string' || !iface) return '127.0.0.1';
  if (/^\d{1,3}(?:\.\d{1,3}){3}$/.test(iface)) return iface;
  return networkInterfaces()[iface]?.find((a) => a.family === 'IPv4')?.address ?? '127.0.0.1';
}

/**
 * The address a client on this machine connects to for a listener bound on `host`: the wildcard
 * addresses are reached on loopback (`0.0.0.0` on 127.0.0.1, `::` on ::1), any other as it is.
 */
export function loopbackFor(host: string): string {
  return host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host;
}

/** Whether `port` can be bound on `host` now. */
export function portFree(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve(true)));
  });
}

/**
 * The state with its proxy ports renumbered by `map` (seed port -> new port): the ports, their bans,
 * their session counters, and the port fields of the HAR log, so that logs and stats by port follow.
 */
export function renumberPorts(data: StateData, map: ReadonlyMap<number, number>): StateData {
  const to = (p: number) => map.get(p) ?? p;
  const m = data.manager;
  const har = m.har.map((e) => {
    const d = e.details;
    if (!d || typeof d.port !== 'number' || !map.has(d.port)) return e;
    return {
      ...e,
      details: { ...d, port: to(d.port), timeline: d.timeline?.map((t) => (typeof t.port === 'number' ? { ...t, port: to(t.port) } : t)) },
    } as typeof e;
  });
  return {
    ...data,
    manager: {
      ...m,
      ports: m.ports.map((p) => ({ ...p, port: to(p.port) })),
      bans: m.bans.map((b) => ({ ...b, port: to(b.port) })),
      sessions: Object.fromEntries(Object.entries(m.sessions).map(([k, v]) => [String(to(Number(k))), v])),
      har,
    },
  };
}

/** A port of the sandbox's own listeners that is taken, with the option (and CLI flag) that picks another. */
export function portInUse(what: string, port: number, host: string, option: string, flag: string, err: unknown): Error {
  const code = (err as NodeJS.ErrnoException).code;
  if (code !== 'EADDRINUSE' && code !== 'EACCES') return err as Error;
  const why = code === 'EADDRINUSE' ? 'is in use (EADDRINUSE)' : 'cannot be bound (EACCES)';
  return Object.assign(
    new Error(`The ${what} port ${port} on ${host} ${why}: pass ${option}: 0 (CLI: ${flag} 0) for a free port, or another number`),
    { code },
  );
}
