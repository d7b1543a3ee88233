/** Failure kinds that never reached a parsed HTTP response. */
export type ZoneApiErrorKind = 'timeout' | 'network' | 'aborted';

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
  ) {
    super(message);
  }
}

/** Replaces every occurrence of each secret (and its URL- and base64-encoded forms) by `[REDACTED]`. */
export function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) {
    if (!secret) continue;
    for (const form of new Set([secret, encodeURIComponent(secret), Buffer.from(secret).toString('base64')])) {
      out = out.split(form).join('[REDACTED]');
    }
  }
  return out;
}
