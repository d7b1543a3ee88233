import type { Store } from '../domain/state.js';
import type { Handler } from '../router/api-options.js';
import { combineHandlers, routerTable } from '../router/handlers.js';
import { banningHandlers } from './banning.js';
import { type ManagerHandlerTable, type ManagerOptions, managerContext } from './context.js';
import { lifecycleHandlers } from './lifecycle.js';
import { logsStatsHandlers } from './logs-stats.js';
import { portCopiesHandlers } from './port-copies.js';
import { portsHandlers } from './ports.js';
import { settingsHandlers } from './settings.js';
import { usersAccessHandlers } from './users-access.js';
import { webUiHandlers } from './web-ui.js';
import { zonesIpsHandlers } from './zones-ips.js';

export { authenticateManager, managerErrorBody } from './auth.js';
export type { ManagerOptions } from './context.js';

/**
 * The manager API's handlers by operationId: one module per tag of the manager spec. The table is
 * complete for the compiler (an operation without a handler, or a handler without an operation,
 * fails `tsc`); the router checks it again at start-up.
 */
export function managerHandlers(store: Store, options: ManagerOptions): Record<string, Handler<undefined>> {
  const c = managerContext(store, options);
  const ports = portsHandlers(c);
  const table: ManagerHandlerTable = combineHandlers(
    ports,
    portCopiesHandlers(c, ports),
    banningHandlers(c),
    settingsHandlers(c),
    zonesIpsHandlers(c),
    logsStatsHandlers(c),
    usersAccessHandlers(c),
    lifecycleHandlers(c),
    webUiHandlers(c),
  );
  return routerTable<undefined>(table);
}
