import { money } from '../domain/ips.js';
import { HttpError } from '../errors.js';
import type { AccountContext, AccountHandlers } from './context.js';

// Account and network: balance, account status, network status, cities.

export function accountStatusHandlers(c: AccountContext) {
  const { store } = c;
  return {
    getBalance: () => ({ body: { balance: money(store.account.balance), pending_costs: money(store.account.pending_costs) } }),

    getAccountStatus: (ctx) => ({
      body: {
        status: store.account.status,
        customer: store.account.customer,
        can_make_requests: store.account.status === 'active',
        auth_fail_reason: null,
        ip: ctx.ip,
      },
    }),

    setAccountStatus: (ctx) => {
      if (!ctx.auth.admin) throw new HttpError(403, 'Permission denied: only account admins may change the account status');
      store.account.status = ctx.body.status;
      return { body: { status: store.account.status } };
    },

    getNetworkStatus: (ctx) => ({ body: { status: store.networkStatus[ctx.params.network_type] } }),

    listCities: (ctx) => ({ body: store.cities[String(ctx.query.country).toLowerCase()] ?? [] }),
  } satisfies AccountHandlers;
}
