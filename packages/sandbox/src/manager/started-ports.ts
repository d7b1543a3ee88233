import type { ProxyPortConfig } from '../domain/types.js';
import type { ManagerContext } from './context.js';
import { managerOptions, type StartedWith } from './manager-options.js';
import { masterFields } from './multiply.js';

// What each stored port started with, for the answer of an update in place: the real manager 1.570.247
// answers it with the running port's options (`proxy_port.update_config(new_proxy)`, mgr_proxy.js 422,
// lib/proxy_port.js 214-234), built once as the port started (a create, a restart, a move) and with each
// update in place assigned over them. So that answer shows the settings and the Zone permissions of the
// port's start (manager-options.ts StartedWith), and the first entries of its lists a multiplied port
// runs with (multiply.ts masterFields) until an update gives the list. Kept in memory, as the real one
// keeps them: a port of a loaded state (a restart of the sandbox) starts with the settings of then.

type Json = Record<string, unknown>;

interface Started {
  /** The store's ports this port started in: a load of the store starts every port anew. */
  of: Map<number, ProxyPortConfig>;
  at: StartedWith;
  master: Json;
}

export function startedPorts(c: ManagerContext) {
  const { store } = c;
  const { startedWith, complete } = managerOptions(c);
  const kept = new Map<number, Started>();
  const of = (port: number): Started | undefined => {
    const s = kept.get(port);
    return s && s.of === store.ports ? s : undefined;
  };

  return {
    /**
     * A port starts (created, restarted or moved) with `cfg` and the number fields it runs with
     * (`started`, port-config.ts startedFields): what it takes now is kept, and is the answer.
     */
    start(cfg: ProxyPortConfig, started: Json): Promise<Json> {
      const at = startedWith(cfg);
      const master = masterFields(cfg);
      kept.set(cfg.port, { of: store.ports, at, master });
      return complete(cfg, { ...started, ...master }, at);
    },
    /**
     * An update in place of the port (`given`: the update's fields) to `cfg`: the answer, from what the
     * port started with; a field the update gives takes the place of the one the port started with.
     */
    updated(cfg: ProxyPortConfig, given: Json, started: Json): Promise<Json> {
      const s = of(cfg.port);
      if (!s) return complete(cfg, started);
      for (const k of Object.keys(given)) delete s.master[k];
      return complete(cfg, { ...started, ...s.master }, s.at);
    },
    /** The port stopped (deleted, or moved away). */
    stop(port: number): void {
      kept.delete(port);
    },
  };
}
