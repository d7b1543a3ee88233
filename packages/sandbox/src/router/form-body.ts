import { type FormLimits, FormTooDeep, parseForm, parseFormInPieces } from './form.js';

// A form body as the real manager's body-parser 1.20.3 takes it (types/urlencoded.js 158-228) before qs
// reads it (form.ts): a body of too many parameters refused, the limits body-parser sets for qs.

/**
 * The most parameters a form body may have (`api_parameter_limit`, util/lpm_config_static.js 128), counted
 * as body-parser counts them (types/urlencoded.js 214-228: a body with as many `&` as the limit has too many).
 */
export const FORM_PARAMETER_LIMIT = 10_000;

/**
 * Form fields as body-parser's `extended` form reads them (types/urlencoded.js 158-190, qs 6.13.0, read by
 * form.ts in linear time): nested names, lists by index up to as many as the body has parameters (at least
 * 100; a larger index names a field), at most 32 levels (deeper is its error, the 500). Names that shadow
 * Object.prototype are dropped (body-parser keeps them), a sandbox choice that no client of the manager's
 * documented fields meets.
 */
export const formLimits = (parameters: number): FormLimits => ({
  depth: 32,
  arrayLimit: Math.max(100, parameters),
  parameterLimit: FORM_PARAMETER_LIMIT,
});

/** The limits for a form's text (formLimits), undefined for one of too many parameters (body-parser's 500). */
function limitsFor(text: string): FormLimits | undefined {
  const parameters = parameterCount(text);
  return parameters === undefined ? undefined : formLimits(parameters);
}
/** A form nested too deep is body-parser's 500, as one it cannot read (undefined). */
function tooDeepAsNone(err: unknown): undefined {
  if (err instanceof FormTooDeep) return undefined;
  throw err;
}

/** A form's text read as body-parser reads it (formLimits); undefined where it cannot (its 500). */
export function readForm(text: string): unknown {
  const limits = limitsFor(text);
  if (!limits) return undefined;
  try {
    return parseForm(text, limits);
  } catch (err) {
    return tooDeepAsNone(err);
  }
}

/** readForm for a request's body, `inPieces` (a large one): read in pieces, the event loop let go of between them. */
export async function readFormOf(text: string, inPieces: boolean): Promise<unknown> {
  const limits = inPieces ? limitsFor(text) : undefined;
  if (!limits) return readForm(text);
  return parseFormInPieces(text, limits).catch(tooDeepAsNone);
}

/**
 * body-parser's parameterCount (types/urlencoded.js 214-228): the `&` of a form, undefined once they are as
 * many as the limit (too many parameters, its 500).
 */
function parameterCount(text: string): number | undefined {
  let count = 0;
  for (let at = text.indexOf('&'); at !== -1; at = text.indexOf('&', at + 1)) if (++count === FORM_PARAMETER_LIMIT) return undefined;
  return count;
}
