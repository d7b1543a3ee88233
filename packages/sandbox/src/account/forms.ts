import { currentPlan } from '../domain/ips.js';
import type { Store } from '../domain/state.js';
import type { AnswerForms, ZoneState } from '../domain/types.js';

// The words and forms the account API answers in, where the seed documentation and the provider's API
// reference (with the clients of the live service) differ: one place for the handlers to ask.

/** The form of answers where the seed and the reference disagree (the account's `answer_forms`; default `live`). */
export function answerForms(store: Store): AnswerForms {
  return store.account.answer_forms ?? 'live';
}

/**
 * A query flag as the provider's clients send it (the spec's `Flag`): `1` or `true` in any case sets it;
 * `0`, `false` or its absence does not. The bare name (an empty value) sets it: only a parameter whose
 * schema accepts one gets this far with it (`ip_per_country`).
 */
export function flagOn(value: unknown): boolean {
  if (value === undefined || value === null) return false;
  if (value === '') return true;
  if (value === true || value === 1) return true;
  return /^(1|true)$/i.test(String(value));
}

/**
 * The product word of a Zone: the listings' `type` and `GET /api/zone`'s `plan.product` (the spec's
 * `ZoneListingType`): `dc` for a static Zone as the seed documentation shows, and the words of the provider's reference and clients for the others (`res_rotating`, `mobile`, and
 * the creation type of `unblocker`, `serp`, `browser_api`).
 */
export function productOf(z: ZoneState): string {
  const plan = currentPlan(z);
  switch (plan.type) {
    case 'resident':
      return plan.mobile ? 'mobile' : 'res_rotating';
    case 'unblocker':
      return plan.serp ? 'serp' : 'unblocker';
    case 'browser_api':
      return 'browser_api';
    default:
      return 'dc';
  }
}
