import type { Store } from '../domain/state.js';
import type { Handler } from '../router/api-options.js';
import { combineHandlers, routerTable } from '../router/handlers.js';
import { HttpError } from '../shared/errors.js';
import { accountStatusHandlers } from './account.js';
import type { AccountAuth } from './auth.js';
import { UNAUTHORIZED } from './auth.js';
import { type AccountHandlerTable, accountContext, input } from './context.js';
import { inventoryHandlers } from './inventory.js';
import { statisticsHandlers } from './statistics.js';
import { zonesHandlers } from './zones.js';

/**
 * The account API's handlers by operationId: one module per tag of the account spec. The table is
 * complete for the compiler (an operation without a handler, or a handler without an operation,
 * fails `tsc`); the router checks it again at start-up.
 */
export function accountHandlers(store: Store): Record<string, Handler<AccountAuth>> {
  const c = accountContext(store);
  const table: AccountHandlerTable = combineHandlers(
    statisticsHandlers(c),
    inventoryHandlers(c),
    zonesHandlers(c),
    accountStatusHandlers(c),
  );
  const handlers = routerTable<AccountAuth>(table);
  // The credential belongs to one account: naming another one is refused before any handler runs.
  for (const [id, handler] of Object.entries(handlers)) {
    handlers[id] = (ctx) => {
      const customer = input(ctx).values.customer;
      if (customer !== undefined && customer !== ctx.auth.customer) {
        throw new HttpError(401, UNAUTHORIZED, {
          details: [{ field: `${input(ctx).where}.customer`, reason: 'the credential does not belong to this customer' }],
        });
      }
      return handler(ctx);
    };
  }
  return handlers;
}
