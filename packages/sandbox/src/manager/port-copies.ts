import type { ProxyPortConfig } from '../domain/types.js';
import { HttpError } from '../shared/errors.js';
import type { ManagerContext, ManagerHandlers, ManagerHandlerTable } from './context.js';
import { storedConfigs } from './multiply.js';

// One stored port read, and a port copied: the real manager's routes `GET /api/proxies/:port` and
// `POST /api/proxy_dup` (lib/mixins/web_api.js 86, 92), which its web interface uses.

type Stored = Record<string, unknown> & { port: number };

/** The lowest port the real manager gives a copy (`Math.max(...ports, 23999)+1`, web_api.js 327-330). */
const BEFORE_FIRST_PORT = 23999;

/**
 * JavaScript's `==` between a stored port number and what a client named (a number, `"24000"`,
 * `"0x5DC0"`, `[24000]`): the real manager's `p.port==port` (web_api.js 317).
 */
function looselyEqual(port: number, named: unknown): boolean {
  if (named === null || named === undefined) return false;
  if (typeof named === 'object') return looselyEqual(port, String(named));
  if (typeof named === 'boolean') return port === Number(named);
  return port === Number(named);
}

/**
 * The stored configurations, as `GET /api/proxies` lists them (the real manager's `this.proxies`): the
 * ports stored as running, then those an update took off the running ports (ports.ts dropPort).
 */
export const storedList = (c: ManagerContext): ProxyPortConfig[] => [
  ...storedConfigs(c.store, new Set(c.m().kept_stored ?? [])),
  ...(c.m().stored_stopped ?? []),
];

export function portCopiesHandlers(c: ManagerContext, ports: Pick<ManagerHandlerTable, 'createProxy'>) {
  const stored = () => storedList(c) as unknown as Stored[];
  return {
    getProxy: (ctx) => {
      // `proxies[port]` of an object keyed by each stored port's number (web_api.js 897-907): the text as given.
      const named = String(ctx.params.port);
      const found = stored().find((p) => String(p.port) === named);
      if (!found) throw new HttpError(400, 'invalid port number');
      return { body: found as ProxyPortConfig };
    },

    createProxyCopy: async (ctx) => {
      const named = (ctx.body as { port?: unknown } | undefined)?.port;
      const source = stored().find((p) => looselyEqual(p.port, named));
      // `proxy.port = …` of no proxy throws, and the handler answers the error as a refusal of `port` (web_api.js 317-321).
      if (!source)
        throw new HttpError(400, "Cannot set properties of undefined (setting 'port')", {
          body: { errors: [{ msg: "Cannot set properties of undefined (setting 'port')", field: 'port' }] },
        });
      // The highest port running (duplicates of multiplied ports too: `proxy_ports`) + 1.
      const port = Math.max(BEFORE_FIRST_PORT, ...c.store.ports.keys()) + 1;
      const copy = { ...structuredClone(source), port };
      // Created as the real manager creates it (create_new_proxy, mgr_proxy.js 266-289), answered as copied.
      await ports.createProxy({ ...ctx, body: { proxy: structuredClone(copy) } } as never);
      return { body: { proxy: copy as ProxyPortConfig } };
    },
  } satisfies ManagerHandlers;
}
