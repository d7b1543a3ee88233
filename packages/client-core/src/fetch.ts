import { redact, ZoneApiError } from './errors.js';
import { limited, MAX_RESPONSE_BYTES } from './read.js';

export interface RetryOptions {
  /** Retries after the first attempt. Default 2. */
  retries?: number;
  /** Base of the exponential backoff, in ms. Default 200. */
  baseDelayMs?: number;
  /** Cap of one backoff delay, in ms. Default 5000. */
  maxDelayMs?: number;
  /** A `Retry-After` longer than this (ms) is not waited for: the 429/503 is returned. Default 60000. */
  maxRetryAfterMs?: number;
  /** Response statuses retried. Default 429, 502, 503, 504. */
  statuses?: readonly number[];
  /**
   * Also retry what is not safe to repeat: operations the spec marks `x-idempotent: false` (every POST,
   * and `getNewToken`, a GET that rotates the token) and path-based POST/PATCH calls. Default false:
   * those are sent exactly once.
   */
  retryNonIdempotent?: boolean;
  /** Called before each retry, e.g. for logging. */
  onRetry?: (info: { attempt: number; delayMs: number; reason: string; method: string; path: string }) => void;
}

export interface TransportOptions {
  fetch?: typeof globalThis.fetch;
  /** Per-attempt timeout in ms. Default 30000; 0 turns it off. */
  timeoutMs?: number;
  /**
   * Deadline of a whole call in ms: every attempt, backoff and `Retry-After` wait included. No retry
   * starts that could not finish in time, and the last attempt is cut at the deadline. Default
   * 120000; 0 turns it off.
   */
  deadlineMs?: number;
  /** Retry policy; `false` turns retries off. */
  retry?: RetryOptions | false;
  /**
   * The largest answer body read, in bytes after decompression (default 64 MiB; 0 turns it off). Past
   * it, reading fails with a ZoneApiError (`network`, code `ERR_RESPONSE_TOO_LARGE`).
   */
  maxResponseBytes?: number;
}

const IDEMPOTENT = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE', 'TRACE']);
const DEFAULT_STATUSES = [429, 502, 503, 504];

/** Milliseconds from a Retry-After value (delta-seconds or an HTTP date), or undefined. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (value == null || value.trim() === '') return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

function sleep(ms: number, signal?: AbortSignal | null): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * What openapi-fetch builds a request from (its URL and its `RequestInit`), kept as it is instead of a
 * `Request`: the transport hands both to `fetch`, which builds the one `Request` of the call. A real
 * `Request` would be built twice per call (once by openapi-fetch, once by `fetch` to attach the
 * attempt's signal), and copied for each retry. Given to openapi-fetch as its `Request` only while no
 * middleware is registered (a middleware gets real Requests).
 */
export class PlainRequest {
  readonly method: string;
  readonly signal: AbortSignal | undefined;
  constructor(
    readonly url: string,
    readonly init: RequestInit,
  ) {
    this.method = (init.method ?? 'GET').toUpperCase();
    this.signal = init.signal ?? undefined;
  }
}

/** Full jitter: a random delay up to the exponential backoff of `attempt`, capped. */
function jitter(attempt: number, baseDelay: number, maxDelay: number): number {
  return Math.random() * Math.min(maxDelay, baseDelay * 2 ** (attempt - 1));
}

/** The path of a request's URL, for messages: never its query, which may carry a customer or zone. */
const pathOf = (request: { url: string }) => new URL(request.url).pathname;

const timedOut = () => new DOMException('The operation timed out', 'TimeoutError');

/**
 * A fetch with a per-attempt timeout and retries with exponential backoff (full jitter).
 * Idempotent methods are retried on network errors, timeouts and the retry statuses; 429 and 503
 * wait for `Retry-After` when the server sends it. POST/PATCH are never retried unless
 * `retryNonIdempotent` is set. Errors carry no credential: `secrets` are redacted from messages.
 * `answer`, if given, turns the final response into what the fetch returns (never a retried one).
 */
export function createTransport(
  options: TransportOptions,
  secrets: readonly string[],
  answer?: (response: Response) => Response | Promise<Response>,
): typeof globalThis.fetch {
  const baseFetch = options.fetch ?? globalThis.fetch;
  const maxBytes = options.maxResponseBytes ?? MAX_RESPONSE_BYTES;
  /** The call's answer: its body bounded, then readied by `answer`. */
  const final = (response: Response) => {
    const bounded = limited(response, maxBytes);
    return answer ? answer(bounded) : bounded;
  };
  const timeoutMs = options.timeoutMs ?? 30_000;
  const retry = options.retry === false ? { retries: 0 } : (options.retry ?? {});
  const retries = retry.retries ?? 2;
  const baseDelay = retry.baseDelayMs ?? 200;
  const maxDelay = retry.maxDelayMs ?? 5000;
  const maxRetryAfter = retry.maxRetryAfterMs ?? 60_000;
  const statuses = new Set(retry.statuses ?? DEFAULT_STATUSES);
  const retryNonIdempotent = retry.retryNonIdempotent === true;

  const deadlineMs = options.deadlineMs ?? 120_000;
  const perAttempt = timeoutMs > 0 ? timeoutMs : Number.POSITIVE_INFINITY;
  const timed = timeoutMs > 0 || deadlineMs > 0;

  return async function transport(input, init) {
    // openapi-fetch hands over a PlainRequest, or a Request (used as it is, not copied: each copy costs
    // a share of a call). A stream body can be sent only once: it goes the Request way.
    let plain = input instanceof PlainRequest && init === undefined ? input : undefined;
    let original: PlainRequest | Request;
    if (plain && !(plain.init.body instanceof ReadableStream)) original = plain;
    else {
      plain = undefined;
      if (input instanceof PlainRequest) original = new Request(input.url, { ...input.init, ...init });
      else original = input instanceof Request && init === undefined ? input : new Request(input, init);
    }
    const method = plain ? plain.method : (original as Request).method.toUpperCase();
    const mayRetry = retries > 0 && (retryNonIdempotent || IDEMPOTENT.has(method));
    // A Request's body can be sent once: it is copied for each attempt only when another may follow.
    // A PlainRequest's body (a string, FormData, …) can be sent again as it is.
    const copyBody = !plain && mayRetry && (original as Request).body !== null;
    const callerSignal = original.signal;
    const started = timed ? Date.now() : 0;
    // Redirects are followed here, not by `fetch`, so that no credential and no body goes to another
    // origin (fetch keeps `X-…-Auth` and re-sends a body on 307/308). A caller's own `redirect` mode is kept.
    const ownRedirects = (plain ? plain.init.redirect : (original as Request).redirect) ?? 'follow';
    const follow = ownRedirects === 'follow';
    const send = async (signal: AbortSignal | undefined) => {
      const manual = follow ? { redirect: 'manual' as const } : {};
      if (plain) {
        const response = await baseFetch(plain.url, { ...plain.init, ...manual, ...(signal ? { signal } : {}) });
        return follow
          ? followRedirects(baseFetch, response, plain.url, plain.method, plain.init.headers, plain.init.body, signal)
          : response;
      }
      const request = copyBody ? (original as Request).clone() : (original as Request);
      const response = await baseFetch(request, { ...manual, ...(signal ? { signal } : {}) });
      // A Request's body was read by the first send: it is never sent again (a 307/308 is then answered as it is).
      const body = request.body === null ? undefined : NOT_AGAIN;
      return follow ? followRedirects(baseFetch, response, request.url, method, request.headers, body, signal) : response;
    };

    for (let attempt = 1; ; attempt++) {
      // The attempt's own timeout, or what is left of the call's deadline if that is shorter.
      const left = deadlineMs > 0 ? deadlineMs - (Date.now() - started) : Number.POSITIVE_INFINITY;
      const limit = Math.min(perAttempt, left);
      const byDeadline = limit < perAttempt;
      // With no limit and no caller's signal to follow, the Request goes out as it is. Otherwise one
      // controller per attempt, aborted by its timer or by the caller (cheaper than composing
      // AbortSignal.timeout and AbortSignal.any on every call). The timer keeps running while the body
      // is read, so the limit covers the whole answer; it is unref'd and does not hold the process.
      let timer: ReturnType<typeof setTimeout> | undefined;
      let signal: AbortSignal | undefined;
      if (Number.isFinite(limit)) {
        const controller = new AbortController();
        signal = controller.signal;
        timer = setTimeout(() => controller.abort(timedOut()), Math.max(1, Math.floor(limit)));
        timer.unref();
        if (callerSignal?.aborted) controller.abort(callerSignal.reason);
        else callerSignal?.addEventListener('abort', () => controller.abort(callerSignal.reason), { once: true });
      }
      let reason: string;
      let backoff: number;
      try {
        const response = await send(signal);
        if (!mayRetry || attempt > retries || !statuses.has(response.status)) return final(response);
        const retryAfter =
          response.status === 429 || response.status === 503 ? parseRetryAfter(response.headers.get('Retry-After')) : undefined;
        if (retryAfter !== undefined && retryAfter > maxRetryAfter) return final(response);
        backoff = retryAfter ?? jitter(attempt, baseDelay, maxDelay);
        // No time left to wait and ask again: this answer is the call's answer.
        if (backoff >= deadlineLeft(deadlineMs, started)) return final(response);
        clearTimeout(timer);
        reason = `status ${response.status}`;
        await response.body?.cancel();
      } catch (err) {
        clearTimeout(timer);
        const e = err as Error & { cause?: { code?: unknown } };
        const path = pathOf(original);
        if (callerSignal?.aborted) {
          throw new ZoneApiError(`${method} ${path} was aborted`, 'aborted', method, path, attempt);
        }
        const isTimeout = signal?.aborted === true;
        // A PlainRequest that cannot be built (an invalid header value, say) fails as a Request would
        // have: a TypeError at once, no retry (its message redacted all the same).
        if (plain && attempt === 1 && !isTimeout) {
          try {
            new Request(plain.url, plain.init);
          } catch (invalid) {
            throw new TypeError(withoutUserinfo(redact(String((invalid as Error)?.message ?? invalid), secrets)));
          }
        }
        // The network's reason (ECONNREFUSED, ECONNRESET, ...), never the request itself; or fetch's
        // own refusal of the URL, which carries no code of its own.
        const code = typeof e?.cause?.code === 'string' && /^[A-Z0-9_]{2,40}$/.test(e.cause.code) ? e.cause.code : refusalCode(e?.cause);
        backoff = jitter(attempt, baseDelay, maxDelay);
        if (!mayRetry || attempt > retries || backoff >= deadlineLeft(deadlineMs, started)) {
          const message = isTimeout
            ? byDeadline
              ? `${method} ${path} timed out: the call's deadline of ${deadlineMs} ms passed`
              : `${method} ${path} timed out after ${timeoutMs} ms`
            : `${method} ${path} failed: ${withoutUserinfo(redact(String(e?.message ?? e), secrets))}${code ? ` (${code})` : ''}`;
          throw new ZoneApiError(
            attempt > 1 ? `${message} (after ${attempt} attempts)` : message,
            isTimeout ? 'timeout' : 'network',
            method,
            path,
            attempt,
            undefined,
            isTimeout ? undefined : code,
            isTimeout ? undefined : causeOf(e, code, secrets),
          );
        }
        reason = isTimeout ? 'timeout' : code ? `network error (${code})` : 'network error';
      }
      const path = pathOf(original);
      retry.onRetry?.({ attempt, delayMs: backoff, reason, method, path });
      try {
        await sleep(backoff, callerSignal);
      } catch {
        throw new ZoneApiError(`${method} ${path} was aborted`, 'aborted', method, path, attempt);
      }
    }
  };
}

/** fetch's refusals of a URL (undici's network errors, which have a message and no code). */
const REFUSALS: Readonly<Record<string, string>> = { 'bad port': 'ERR_BAD_PORT', 'unknown scheme': 'ERR_UNKNOWN_SCHEME' };
function refusalCode(cause: unknown): string | undefined {
  return cause instanceof Error ? REFUSALS[cause.message] : undefined;
}

/**
 * The cause a network failure's ZoneApiError carries: fetch's reason (its `cause`, else the error
 * itself) as a new Error with a redacted message and the code, not the original, whose other
 * properties (a socket, a request) are not ours to hand on.
 */
function causeOf(err: Error & { cause?: unknown }, code: string | undefined, secrets: readonly string[]): Error {
  const reason = err?.cause instanceof Error ? err.cause : err;
  const cause = new Error(withoutUserinfo(redact(String(reason?.message ?? reason), secrets))) as Error & { code?: string };
  if (reason instanceof Error) cause.name = reason.name;
  if (code) cause.code = code;
  return cause;
}

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
const MAX_REDIRECTS = 20;
/** A body that cannot be sent again (a stream the first request read). */
const NOT_AGAIN = Symbol('body read');

/**
 * Headers that carry a credential: the clients' own (`Authorization`, `X-Service-Auth`, `X-Lum-Auth`),
 * a proxy's, cookies, and the caller's `X-…` headers with a word of a credential in their name
 * (`X-Auth-Token`, `X-Api-Key`, `X-Client-Secret`; not `X-Author`). None goes with a redirect to another origin.
 */
function isCredentialHeader(name: string): boolean {
  return /^(authorization|proxy-authorization|cookie|x(-[^-]+)*-(auth|authorization|token|secret|password|api-?key)(-[^-]+)*)$/i.test(name);
}

/**
 * Follows the redirects of `response` as fetch does (at most 20; 301/302 turn a POST into a GET, 303
 * anything but HEAD; 307/308 keep the method and body), with two differences. To another origin
 * (scheme, host or port) every credential header is dropped, and no body is sent: a 307/308 that would
 * have to re-send one is the answer itself, as is a redirect to a scheme other than http(s) or the 21st.
 */
async function followRedirects(
  baseFetch: typeof globalThis.fetch,
  first: Response,
  startUrl: string,
  startMethod: string,
  startHeaders: RequestInit['headers'],
  startBody: RequestInit['body'] | typeof NOT_AGAIN,
  signal: AbortSignal | undefined,
): Promise<Response> {
  let response = first;
  let url = new URL(startUrl);
  let method = startMethod;
  let body = startBody ?? undefined;
  let headers: Headers | undefined;
  for (let hops = 0; REDIRECT_STATUSES.has(response.status); hops++) {
    const location = response.headers.get('location');
    if (location === null || hops >= MAX_REDIRECTS) return response;
    let next: URL;
    try {
      next = new URL(location, url);
    } catch {
      return response;
    }
    if (next.protocol !== 'http:' && next.protocol !== 'https:') return response;
    headers ??= new Headers(startHeaders);
    const toGet =
      (response.status === 303 && method !== 'HEAD') || ((response.status === 301 || response.status === 302) && method === 'POST');
    if (toGet) {
      method = 'GET';
      body = undefined;
      for (const name of ['content-type', 'content-length', 'content-encoding', 'content-language', 'content-location'])
        headers.delete(name);
    }
    const crossOrigin = next.origin !== url.origin;
    if (body === NOT_AGAIN || (body !== undefined && body !== null && crossOrigin)) return response;
    if (crossOrigin) for (const name of [...headers.keys()]) if (isCredentialHeader(name)) headers.delete(name);
    await response.body?.cancel();
    response = await baseFetch(next.href, {
      method,
      headers,
      redirect: 'manual',
      ...(body !== undefined ? { body: body as NonNullable<RequestInit['body']> } : {}),
      ...(signal ? { signal } : {}),
    });
    url = next;
  }
  return response;
}

/** A message with the credentials of any URL in it (`http://user:password@host`, a `baseUrl` with them) left out. */
const withoutUserinfo = (text: string) => text.replace(/\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@]*@/gi, '$1[REDACTED]@');

/** What is left of a call's deadline, in ms (infinite with no deadline). */
function deadlineLeft(deadlineMs: number, started: number): number {
  return deadlineMs > 0 ? deadlineMs - (Date.now() - started) : Number.POSITIVE_INFINITY;
}
