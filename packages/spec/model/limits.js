// @ts-check
// The rate limits a bundle states (`x-rate-limits` of `info`, specs/README.md), read here once.

/** @import { OpenApiDoc } from './bundles.js' */

/**
 * @typedef {object} RateLimit
 * @property {number} requests  at most this many requests
 * @property {number} perSeconds  in any window of this many seconds
 * @property {string} appliesTo  to whom (`limited trial accounts, …`)
 */

/**
 * The rate limits of a bundle, the strictest first (fewest requests a second); none when it states none.
 * Throws naming the entry that is not a limit.
 * @param {OpenApiDoc} doc
 * @returns {RateLimit[]}
 */
export function rateLimits(doc) {
  const raw = doc.info?.['x-rate-limits'];
  if (raw === undefined) return [];
  if (!Array.isArray(raw)) throw new Error('info.x-rate-limits must be a list (specs/README.md)');
  return raw
    .map((l, i) => {
      const ok = l && Number.isInteger(l.requests) && l.requests > 0 && typeof l['per-seconds'] === 'number' && l['per-seconds'] > 0;
      if (!ok) throw new Error(`info.x-rate-limits[${i}] needs a positive integer \`requests\` and a positive \`per-seconds\``);
      return { requests: l.requests, perSeconds: l['per-seconds'], appliesTo: String(l['applies-to'] ?? '') };
    })
    .sort((a, b) => a.requests / a.perSeconds - b.requests / b.perSeconds);
}
