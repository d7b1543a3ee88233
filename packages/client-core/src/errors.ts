/**
 * Failure kinds: no parsed HTTP response (`timeout`, `network`, `aborted`, or `parse`: a JSON body
 * that does not parse), or, from a `paginate` walk only, a page that answered an error status
 * (`http`, with `status`).
 */
export type ZoneApiErrorKind = 'timeout' | 'network' | 'aborted' | 'parse' | 'http';

/**
 * Thrown when a call gets no HTTP response: a timeout, a network failure or an abort.
 * HTTP error statuses are not thrown: they come back as the typed `error` of the result.
 * The message names the method and path only (no query, no headers) and is redacted of every
 * credential the client was configured with.
 */
export class ZoneApiError extends Error {
  override readonly name = 'ZoneApiError';
  constructor(
    message: string,
    readonly kind: ZoneApiErrorKind,
    readonly method: string,
    readonly path: string,
    readonly attempts: number,
    /** The HTTP status, for kind `http`. */
    readonly status?: number,
    /**
     * For kind `network`: the system's error code (`ECONNREFUSED`, `ECONNRESET`, `ENOTFOUND`), or, when
     * `fetch` itself refused the URL, `ERR_BAD_PORT` (a port fetch never connects to, such as 1 or 6000)
     * or `ERR_UNKNOWN_SCHEME` (not http or https).
     */
    readonly code?: string,
    /** The underlying failure (for `network`: fetch's reason, its message redacted like this one's). */
    cause?: unknown,
  ) {
    super(message, cause === undefined ? undefined : { cause });
  }
}

/**
 * Replaces each secret (and its URL- and base64-encoded forms) by `[REDACTED]` wherever it stands as a
 * whole token: not inside a longer run of letters and digits, so that a short secret does not mangle
 * ordinary words. Longer secrets are replaced first (a header value before the password inside it).
 */
export function redact(text: string, secrets: readonly string[]): string {
  const forms = new Set<string>();
  for (const secret of secrets) {
    if (!secret) continue;
    forms.add(secret);
    forms.add(encodeURIComponent(secret));
    forms.add(Buffer.from(secret).toString('base64'));
  }
  let out = text;
  for (const form of [...forms].sort((a, b) => b.length - a.length)) {
    const escaped = form.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    out = out.replace(new RegExp(`(?<![A-Za-z0-9])${escaped}(?![A-Za-z0-9])`, 'g'), '[REDACTED]');
  }
  return out;
}
