// @ts-check
// The facts of a bundle's credentials that OpenAPI has no field for (specs/README.md): the Zone
// credential header's name and value layout, as documented and as observed.

/** @import { OpenApiDoc } from './bundles.js' */

/**
 * The Zone credential header (`x-value-pattern`, `x-observed-name-pattern`, `x-observed-value-pattern`).
 * @typedef {object} ZoneCredential
 * @property {string} name  the documented header name (`X-Service-Auth`)
 * @property {RegExp} documented  the documented value layout (`x-value-pattern`)
 * @property {RegExp} names  the header names that carry it (case-insensitive), the brand word as group `brand`
 * @property {RegExp} values  the values accepted, with the groups `customer`, `zone`, `key`, `country` and,
 *   where the brand word varies, `brand` (equal to the header name's)
 */

/** The groups a value layout must name for a reader to take the credential apart. */
const VALUE_GROUPS = ['customer', 'zone', 'key', 'country'];

/**
 * @param {string} scheme
 * @param {string} key
 * @param {unknown} source
 * @param {string} [flags]
 */
function patternOf(scheme, key, source, flags) {
  if (typeof source !== 'string') throw new Error(`securitySchemes.${scheme}.${key} must be a regular expression (specs/README.md)`);
  try {
    return new RegExp(source, flags);
  } catch (err) {
    throw new Error(`securitySchemes.${scheme}.${key}: ${/** @type {Error} */ (err).message}`);
  }
}

/**
 * The Zone credential of a bundle, read once from its security scheme (`zoneCredential`): what the
 * documentation says and what is observed. Without the observed patterns, the observed form is the
 * documented one (the documented name only). Throws naming the extension that is missing or wrong.
 * @param {OpenApiDoc} doc
 * @param {string} [scheme]
 * @returns {ZoneCredential}
 */
export function zoneCredential(doc, scheme = 'zoneCredential') {
  const s = doc.components?.securitySchemes?.[scheme];
  if (s?.type !== 'apiKey' || s.in !== 'header' || typeof s.name !== 'string') {
    throw new Error(`securitySchemes.${scheme} must be an apiKey scheme in a header`);
  }
  const documented = patternOf(scheme, 'x-value-pattern', s['x-value-pattern']);
  const escaped = s.name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const names =
    s['x-observed-name-pattern'] === undefined
      ? new RegExp(`^${escaped}$`, 'i')
      : patternOf(scheme, 'x-observed-name-pattern', s['x-observed-name-pattern'], 'i');
  const values =
    s['x-observed-value-pattern'] === undefined ? documented : patternOf(scheme, 'x-observed-value-pattern', s['x-observed-value-pattern']);
  // The groups a reader takes the value apart by: an empty match of the pattern's groups shows them.
  const groups = new RegExp(`${values.source}|(?<__probe>)`).exec('')?.groups ?? {};
  const missing = VALUE_GROUPS.filter((g) => !(g in groups));
  if (missing.length) throw new Error(`securitySchemes.${scheme}: the value pattern names no group ${missing.join(', ')}`);
  return { name: s.name, documented, names, values };
}
