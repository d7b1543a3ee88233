// Money, in one place: what traffic costs per Zone plan, what a gIP refresh costs, how an amount is
// billed and the one rule by which amounts are rounded when they are shown.
//
// Amounts are kept unrounded in the state (a request of a few kB costs less than a micro-dollar, and
// rounding each one would lose it); `money()` rounds only what an answer shows.
import type { StoredPlan } from './types.js';

/** US dollars per gIP and refresh: the account API's seed ("Refreshing one exclusive residential IP costs 0.02 US dollars"). */
export const GIP_REFRESH_COST = 0.02;

/**
 * The sandbox's bandwidth prices in US dollars per GB, by plan (the seed gives none: these are the
 * sandbox's choice, stated in its README). Unlimited-bandwidth plans pay nothing per GB.
 */
export const PRICE_PER_GB = { static: 0.6, resident: 8.4, mobile: 24, unlimited: 0 } as const;

/** The price per GB of traffic through a Zone on this plan. */
export function pricePerGb(plan: Pick<StoredPlan, 'type' | 'bandwidth' | 'mobile'> | undefined): number {
  if (plan?.bandwidth === 'unlimited') return PRICE_PER_GB.unlimited;
  if (plan?.type === 'resident') return plan.mobile ? PRICE_PER_GB.mobile : PRICE_PER_GB.resident;
  return plan?.type === 'static' ? PRICE_PER_GB.static : PRICE_PER_GB.resident;
}

/** What `bytes` of traffic cost at `perGb` dollars per GB (10^9 bytes), unrounded. */
export const costOf = (bytes: number, perGb: number): number => (bytes / 1e9) * perGb;

/** An amount as answers show it: to the micro-dollar, without the float noise of repeated cents. */
export const money = (n: number): number => Math.round(n * 1e6) / 1e6;
