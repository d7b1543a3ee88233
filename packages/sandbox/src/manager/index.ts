import type { Store } from '../domain/state.js';
import { combineHandlers } from '../router/http.js';
import { banningHandlers } from './banning.js';
import { type ManagerHandlers, type ManagerOptions, managerContext } from './context.js';
import { lifecycleHandlers } from './lifecycle.js';
import { logsStatsHandlers } from './logs-stats.js';
import { portsHandlers } from './ports.js';
import { settingsHandlers } from './settings.js';
import { usersAccessHandlers } from './users-access.js';
import { zonesIpsHandlers } from './zones-ips.js';

export { authenticateManager, managerErrorBody } from './auth.js';
export type { ManagerOptions } from './context.js';

/** The manager API's handlers by operationId: one module per tag of the manager spec. */
export function managerHandlers(store: Store, options: ManagerOptions): ManagerHandlers {
  const c = managerContext(store, options);
  return combineHandlers(
    portsHandlers(c),
    banningHandlers(c),
    settingsHandlers(c),
    zonesIpsHandlers(c),
    logsStatsHandlers(c),
    usersAccessHandlers(c),
    lifecycleHandlers(c),
  );
}
