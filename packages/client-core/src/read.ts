// Reading an answer's body: bounded in size, and every way it can fail turned into a ZoneApiError
// (a body cut short or dripped past the timeout once surfaced as fetch's raw `TypeError: terminated` or
// `TimeoutError`).
import { ZoneApiError } from './errors.js';

/** The largest answer body a client reads by default (after decompression): 64 MiB. */
export const MAX_RESPONSE_BYTES = 64 * 1024 * 1024;
const TOO_LARGE = 'ERR_RESPONSE_TOO_LARGE';

/**
 * The response with its body bounded to `max` bytes as it is read (decoded: a 1 MB gzip bomb stops at
 * `max`, not at 1 GiB); reading past it fails. An answer whose Content-Length is within `max` and that
 * is not encoded is handed on as it is (nearly every answer: no cost).
 */
export function limited(response: Response, max: number): Response {
  if (!(max > 0) || response.body === null) return response;
  const length = response.headers.get('Content-Length');
  if (length !== null && !response.headers.has('Content-Encoding') && Number(length) <= max) return response;
  let seen = 0;
  const body = response.body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        seen += chunk.byteLength;
        if (seen > max) controller.error(Object.assign(new Error(`the answer is larger than ${max} bytes`), { code: TOO_LARGE, max }));
        else controller.enqueue(chunk);
      },
    }),
  );
  const bounded = new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  Object.defineProperty(bounded, 'url', { value: response.url });
  return bounded;
}

/**
 * What a failure while an answer's body was read becomes: a ZoneApiError naming the method and path
 * (`timeout` for a body dripped past the timeout, `aborted`, `network` with the code for one cut short
 * or past `maxResponseBytes`), or undefined for anything else.
 */
export function readFailure(err: unknown, method: string, path: string): ZoneApiError | undefined {
  if (err instanceof ZoneApiError || !(err instanceof Error)) return undefined;
  const e = err as Error & { code?: string; max?: number; cause?: { code?: unknown } };
  if (e.name === 'TimeoutError')
    return new ZoneApiError(`${method} ${path} timed out while its answer was read`, 'timeout', method, path, 1);
  if (e.name === 'AbortError') return new ZoneApiError(`${method} ${path} was aborted`, 'aborted', method, path, 1);
  if (e.code === TOO_LARGE)
    return new ZoneApiError(
      `${method} ${path} answered more than ${e.max} bytes (maxResponseBytes)`,
      'network',
      method,
      path,
      1,
      undefined,
      TOO_LARGE,
    );
  if (e instanceof TypeError && e.message === 'terminated') {
    const code = typeof e.cause?.code === 'string' && /^[A-Z0-9_]{2,40}$/.test(e.cause.code) ? e.cause.code : 'ECONNRESET';
    const cause = Object.assign(new Error('the connection closed before the answer ended'), { code });
    return new ZoneApiError(
      `${method} ${path} failed: its answer was cut short (${code})`,
      'network',
      method,
      path,
      1,
      undefined,
      code,
      cause,
    );
  }
  return undefined;
}
