import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';

// A port's status check as the real manager 1.570.247 makes it (lib/manager.js 627-662, test_port):
// a GET of the settings' `test_url` through the port itself, with `x-hola-context: STATUS CHECK`
// (which the port reads as the request's context: logged under it, counted, no rules applied), and
// the status read from the answer. The real manager makes that request with got 14 (util/lpm_request.js
// 9, 91-97), whose default retry sends it again: so a failed check is up to three requests through
// the port, each logged (RETRY below).

/** The context of the status check's request (`x-hola-context`), under which the port logs it and skips its rules (lib/rules.js 60, 111, 132). */
export const STATUS_CHECK_CONTEXT = 'STATUS CHECK';

/** The real manager's status of a check that its firewall may have refused (lib/manager.js 652-656, 660-661). */
export const CHECK_REFUSED = 'connection refused (may have been caused due to firewall settings)';
/** How long the real manager waits for each test request (20 s, lib/manager.js 640). */
const TIMEOUT_MS = 20_000;

/**
 * got 14's default retry, with which the real manager's test request is sent (got
 * dist/source/core/options.js 82-118, calculate-retry-delay.js): at most 2 more requests, for a GET
 * answered with one of `statusCodes` or failed with one of `errorCodes`, after 1 s then 2 s (and up
 * to `noise` ms more), or after the answer's `Retry-After` unless it is longer than the timeout.
 * `throwHttpErrors: false` (util/lpm_request.js 56) does not stop it: the last answer is read.
 */
const RETRY = {
  limit: 2,
  statusCodes: new Set([408, 413, 429, 500, 502, 503, 504, 521, 522, 524]),
  errorCodes: new Set(['ETIMEDOUT', 'ECONNRESET', 'EADDRINUSE', 'ECONNREFUSED', 'EPIPE', 'ENOTFOUND', 'ENETUNREACH', 'EAI_AGAIN']),
  noise: 100,
} as const;

type Attempt = { status: number; statusMessage: string; headers: IncomingHttpHeaders } | { code: string };

/** How long got waits before its `attempt`-th retry; 0: no retry (calculate-retry-delay.js, core/index.js 210-236). */
export function retryDelay(attempt: number, answer: Attempt, random = Math.random): number {
  if (attempt > RETRY.limit) return 0;
  if ('code' in answer) return RETRY.errorCodes.has(answer.code) ? 2 ** (attempt - 1) * 1000 + random() * RETRY.noise : 0;
  if (!RETRY.statusCodes.has(answer.status)) return 0;
  const header = [answer.headers['retry-after']].flat()[0];
  if (header !== undefined) {
    let after = Number(header);
    if (Number.isNaN(after)) after = Math.max(Date.parse(header) - Date.now(), 0) || 1;
    else after *= 1000;
    return after > TIMEOUT_MS ? 0 : after;
  }
  if (answer.status === 413) return 0;
  return 2 ** (attempt - 1) * 1000 + random() * RETRY.noise;
}

/** One test request through the proxy at `host`:`port`: its answer's head (the body read and dropped), or why it failed. */
function attemptCheck(host: string, port: number, url: URL, userAgent: string): Promise<Attempt> {
  return new Promise((resolve) => {
    const req = httpRequest(
      {
        host,
        port,
        method: 'GET',
        path: url.href,
        agent: false,
        headers: {
          host: url.host,
          'x-hola-context': STATUS_CHECK_CONTEXT,
          'x-hola-agent': userAgent,
          'user-agent': userAgent,
          accept: 'application/json',
        },
      },
      (res) => {
        res.resume();
        const head = { status: res.statusCode ?? 0, statusMessage: res.statusMessage ?? '', headers: res.headers };
        res.once('end', () => resolve(head));
        res.once('error', () => resolve({ code: 'ECONNRESET' }));
      },
    );
    req.setTimeout(TIMEOUT_MS, () => req.destroy(Object.assign(new Error('timeout'), { code: 'ETIMEDOUT' })));
    req.once('error', (err: NodeJS.ErrnoException) => resolve({ code: err.code ?? 'error' }));
    req.end();
  });
}

/**
 * Sends the test request through the proxy at `host`:`port`, again as got retries it, and reads the
 * port's status from the last answer as the real manager does: `ok` for a 200; otherwise the port's or
 * network's error header (`x-luminati-error`, `x-lpm-error`; one naming ECONNREFUSED as the firewall
 * text), else the answer's status text. A request that failed (the port cannot be reached, or no answer
 * in time) is `error`: the real manager's catch looks for the `request` library's `ESOCKETTIMEDOUT`,
 * which got never throws (its timeout is `ETIMEDOUT`), so its timeout text is never given.
 */
export async function statusCheck(host: string, port: number, testUrl: string, userAgent: string): Promise<string> {
  let url: URL;
  try {
    url = new URL(testUrl);
  } catch {
    return 'error';
  }
  for (let attempt = 1; ; attempt++) {
    const answer = await attemptCheck(host, port, url, userAgent);
    const delay = retryDelay(attempt, answer);
    if (delay > 0) {
      await new Promise((resolve) => setTimeout(resolve, delay));
      continue;
    }
    if ('code' in answer) return 'error';
    const success = answer.status === 200;
    const header = (name: string) => [answer.headers[name]].flat()[0];
    const error = header('x-luminati-error') || header('x-lpm-error') || (!success && answer.statusMessage) || '';
    return /ECONNREFUSED/.test(error) ? CHECK_REFUSED : error || (success ? 'ok' : 'error');
  }
}
