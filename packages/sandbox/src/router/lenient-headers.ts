// What the sandbox accepted without `--strict` (lenient.ts), told in the answer's headers.

/** Response header listing the request fields the sandbox accepted but ignored (not sent with `--strict`). */
export const IGNORED_FIELDS_HEADER = 'X-Sandbox-Ignored-Fields';
/** Response header listing request values the sandbox accepted as an alias of a value the documentation lists. */
export const NORMALIZED_FIELDS_HEADER = 'X-Sandbox-Normalized-Fields';

/** What the sandbox accepted without `--strict` in one request, for the response headers. */
export interface Leniency {
  ignored: string[];
  normalized: string[];
}

/** The response headers that report a request's leniency (none when nothing was ignored or normalised). */
export function leniencyHeaders(found: Leniency[]): Record<string, string> {
  const ignored = found.flatMap((f) => f.ignored);
  const normalized = found.flatMap((f) => f.normalized);
  const out: Record<string, string> = {};
  if (ignored.length) out[IGNORED_FIELDS_HEADER] = headerList(ignored);
  if (normalized.length) out[NORMALIZED_FIELDS_HEADER] = headerList(normalized);
  return out;
}

const MAX_LISTED = 20;
const MAX_NAME = 200;

/**
 * A list as one header value. Field names come from the request: anything outside printable ASCII,
 * the list's separator and the backslash are written as `\uXXXX`, and the list is bounded so that a body with
 * thousands of unknown fields cannot make the header too large for a client.
 */
function headerList(items: string[]): string {
  const shown = items.slice(0, MAX_LISTED).map((s) => {
    const safe = s.replace(/[^\x20-\x7e]|[,\\]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
    return safe.length > MAX_NAME ? `${safe.slice(0, MAX_NAME)}...` : safe;
  });
  if (items.length > MAX_LISTED) shown.push(`(${items.length - MAX_LISTED} more)`);
  return shown.join(', ');
}
