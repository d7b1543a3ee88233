import type { OperationDef } from './spec.js';

/** The provider's documentation puts every account path under this prefix; the provider's current host serves them without it (observed). */
export const ACCOUNT_PREFIX = '/api';

/**
 * The account API's other router path for an operation, derived from its path in the bundle by rule,
 * never from a list of operations: the same path without the documentation's `/api` prefix
 * (`/api/zone/get_active_zones` → `/zone/get_active_zones`), as the provider's current host serves it
 * and its own SDK and tools call it. The alias is the same route: same handler, same validation.
 * (The manager's aliases come from the spec's `x-brand-prefix`: see sandbox.ts.)
 */
export function accountAliases(op: OperationDef): string[] {
  return op.url.startsWith(`${ACCOUNT_PREFIX}/`) ? [op.url.slice(ACCOUNT_PREFIX.length)] : [];
}
