import type { Store } from '../domain/state.js';
import { HttpError } from '../errors.js';
import { combineHandlers } from '../router/http.js';
import { accountStatusHandlers } from './account.js';
import { UNAUTHORIZED } from './auth.js';
import { type AccountHandlers, accountContext, input } from './context.js';
import { inventoryHandlers } from './inventory.js';
import { statisticsHandlers } from './statistics.js';
import { zonesHandlers } from './zones.js';

/** The account API's handlers by operationId: one module per tag of the account spec. */
export function accountHandlers(store: Store): AccountHandlers {
  const c = accountContext(store);
  const handlers = combineHandlers(statisticsHandlers(c), inventoryHandlers(c), zonesHandlers(c), accountStatusHandlers(c));
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
