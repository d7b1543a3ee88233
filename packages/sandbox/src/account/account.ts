import { money } from '../domain/money.js';
import { HttpError } from '../shared/errors.js';
import { LACKS_PERMISSIONS } from './auth.js';
import type { AccountContext, AccountHandlers } from './context.js';

// Account and network: balance, account status, network status, cities.

export function accountStatusHandlers(c: AccountContext) {
  const { store } = c;
  return {
    // `pending_balance` beside the documented `pending_costs`: the provider's reference and CLI read it (the spec's Balance).
    getBalance: () => {
      const pending = money(store.account.pending_costs);
      return { body: { balance: money(store.account.balance), pending_costs: pending, pending_balance: pending } };
    },

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
      if (!ctx.auth.admin) throw new HttpError(403, `${LACKS_PERMISSIONS}: only account admins may change the account status`);
      store.setAccountStatus(ctx.body.status);
      return { body: { status: store.account.status } };
    },

    getNetworkStatus: (ctx) => ({ body: { status: store.networkStatus[ctx.params.network_type] } }),

    listCities: (ctx) => ({ body: store.cities[String(ctx.query.country).toLowerCase()] ?? [] }),

    // The countries of the pool's shared and dedicated IPs; the sandbox has no ISP IPs (parity-account.yaml).
    // Under `zone_types` (the reference) and `zone_type` (the provider's n8n node reads it).
    listAvailableCountries: () => {
      const countries = (shared: boolean) => ({
        country_codes: [...new Set([...store.pool.values()].filter((p) => (p.shared === true) === shared).map((p) => p.country))].sort(),
      });
      const types = {
        DC_shared: countries(true),
        DC_dedicated_ip: countries(false),
        DC_dedicated_host: countries(false),
        ISP_shared: { country_codes: [] },
        ISP_dedicated_ip: { country_codes: [] },
        ISP_dedicated_host: { country_codes: [] },
      };
      return { body: { zone_types: types, zone_type: types } };
    },
  } satisfies AccountHandlers;
}
