import { request as httpRequest } from 'node:http';

// A port's status check as the real manager 1.570.247 makes it (lib/manager.js 627-662, test_port):
// a GET of the settings' `test_url` through the port itself, with `x-hola-context: STATUS CHECK`
// (which the port reads as the request's context: logged under it, counted, no rules applied), and
// the status read from the answer.

/** The context of the status check's request (`x-hola-context`), under which the port logs it and skips its rules (lib/rules.js 60, 111, 132). */
export const STATUS_CHECK_CONTEXT = 'STATUS CHECK';

/** The real manager's status of a check that its firewall may have refused (lib/manager.js 652-656, 660-661). */
export const CHECK_REFUSED = 'connection refused (may have been caused due to firewall settings)';
const CHECK_TIMEOUT = 'timeout (may have been caused due to firewall settings)';
/** How long the real manager waits for the test request (20 s). */
const TIMEOUT_MS = 20_000;

/**
 * Sends the test request through the proxy at `host`:`port` and reads the port's status from its
 * answer as the real manager does: `ok` for a 200; otherwise the port's or network's error header
 * (`x-luminati-error`, `x-lpm-error`; one naming ECONNREFUSED as the firewall text), else the
 * answer's status text; a timeout its text; a port that cannot be reached `error`.
 */
export function statusCheck(host: string, port: number, testUrl: string, userAgent: string): Promise<string> {
  return new Promise((resolve) => {
    let url: URL;
    try {
      url = new URL(testUrl);
    } catch {
      resolve('error');
      return;
    }
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
        res.once('end', () => {
          const success = res.statusCode === 200;
          const header = (name: string) => {
            const v = res.headers[name];
            return Array.isArray(v) ? v[0] : v;
          };
          const error = header('x-luminati-error') || header('x-lpm-error') || (!success && res.statusMessage) || '';
          resolve(/ECONNREFUSED/.test(error) ? CHECK_REFUSED : error || (success ? 'ok' : 'error'));
        });
        res.once('error', () => resolve('error'));
      },
    );
    req.setTimeout(TIMEOUT_MS, () => {
      req.destroy();
      resolve(CHECK_TIMEOUT);
    });
    // The port itself cannot be reached: no status text but `error` (the real manager's catch).
    req.once('error', () => resolve('error'));
    req.end();
  });
}
