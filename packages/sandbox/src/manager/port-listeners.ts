import type { ProxyPortConfig } from '../domain/types.js';
import { listenHost } from '../host/free-ports.js';
import type { ManagerOptions } from './context.js';
import { type FieldTypes, runningConfig } from './port-config.js';
import { portErrors } from './proxy-check.js';

/**
 * Opens the listeners of new ports (when ports carry traffic: `traffic`), each with the configuration it
 * runs (port-config.ts runningConfig). A port that cannot bind is refused, naming the port and why; the
 * ports opened before it close again.
 */
export async function openListeners(traffic: ManagerOptions['ports'], configs: ProxyPortConfig[], types: FieldTypes): Promise<void> {
  if (!traffic) return;
  const opened: number[] = [];
  for (const cfg of configs) {
    try {
      await traffic.open(runningConfig(cfg, types));
      opened.push(cfg.port);
    } catch (err) {
      await Promise.allSettled(opened.map((p) => traffic.close(p)));
      const why = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
      throw portErrors(`port ${cfg.port} cannot be opened on ${listenHost(cfg.iface)}: ${why}`, 'port');
    }
  }
}
