import { type ServerResponse, validateHeaderValue } from 'node:http';
import { RequestError } from 'proxy-chain';
import type { Exchange } from '../domain/har.js';
import { PORT_ERROR_HEADER } from '../shared/brand.js';
import type { PortRequest } from './port-context.js';

// A port's own failures, answered and logged as the real manager answers and logs them: its 502s
// (`Proxy Manager - Bad Gateway`, `x-lpm-error`, an empty body), an upstream it could not reach
// (UpstreamFailure, logged), and port `headers` its request handler cannot read (not logged).

export const portError = (status: number, message: string) => new RequestError(message, status, { [PORT_ERROR_HEADER]: message });

/**
 * The status text of the real manager's own 502s: a request its port failed (lib/mixins/server_send.js
 * 54-83, `send_error`: `Proxy Manager - Bad Gateway`, with `Connection: close` and `x-lpm-error`).
 */
export const PORT_FAILED = 'Proxy Manager - Bad Gateway';

/** The headers of such a 502, as answered and as logged (lib/server.js 872): `x-lpm-error` is the failure's own message. */
export const portFailedHeaders = (message: string) => ({ Connection: 'close', [PORT_ERROR_HEADER]: message });

/**
 * Answers a plain request with the port's own 502 and `headers`, as the real manager writes it
 * (lib/util.js 109-152, write_http_reply): a header whose value no HTTP header may carry (the TLS error
 * of an upstream that does not speak TLS ends in a line break) makes Node refuse the head, and the real
 * manager writes it again without such headers (remove_invalid_headers, 77-89): the client then gets no
 * `x-lpm-error`, though the log keeps it (observed on 1.570.247). An empty body follows.
 */
export function answerPortFailed(response: ServerResponse, headers: Record<string, string>): void {
  const writable = Object.fromEntries(
    Object.entries(headers).filter(([name, value]) => {
      try {
        validateHeaderValue(name, value);
        return true;
      } catch {
        return false;
      }
    }),
  );
  response.writeHead(502, PORT_FAILED, writable);
  response.end();
}

/**
 * The port could not reach its upstream: refused, reset (hung up) or unreachable, `message` Node's own
 * (`connect ECONNREFUSED 127.0.0.1:1`, `socket hang up`). The real manager sends the request once, not
 * again (its error handler retries only on `proxy_err.can_retry`, which `check_proxy_response` never
 * sets: lib/mixins/server_handle.js 438-459, lib/server.js 697-711), logs it as a 502 with its own headers
 * and no body (lib/server.js 862-872, the port's `response`), then answers `PORT_FAILED` with those
 * headers and an empty body.
 */
export class UpstreamFailure extends Error {
  /** The port's rules that ran on this 502 (lib/server.js 866-867), as its log entry lists them. */
  rules: Record<string, unknown>[] = [];
  /** Not logged: the 502 of a request a rule sent again after the port's own 502 (observed, rules.ts withRules). */
  unlogged = false;
  /**
   * A rule failed the request before it was sent: the real manager had not yet built the upstream login
   * (lib/server.js 827-830, 743-754), so its log entry names no username.
   */
  beforeSend = false;
}

/** Logs a request the port failed (UpstreamFailure) as the real manager logs it: 502, no status text, its own headers, no body. */
export function logFailure(ctx: PortRequest, x: Exchange, message: string, session: string): void {
  x.status = 502;
  x.statusText = '';
  x.responseHeaders = portFailedHeaders(message);
  x.session = session;
  x.answered = ctx.now() - ctx.started;
  x.time = x.answered;
  ctx.log(x);
}

/**
 * Whether a port's `headers` make the real manager's request handler throw before it has a response to
 * fill (lib/server.js 816-818): `add_headers` calls `forEach` on them and `get_user_agent` looks for a
 * `user-agent` entry with `.find(f=>f.name.toLowerCase()==…)`, then `ua.value.startsWith` (server.js
 * 948-974). Its catch then fails too, setting `status_code` on the response it has not made yet (server.js
 * 862-864), and the client gets `HEADERS_UNUSABLE` (below), nothing logged.
 */
export function headersUnusable(headers: unknown): boolean {
  if (!headers) return false;
  if (!Array.isArray(headers)) return true;
  if (headers.some((h) => h === null || h === undefined)) return true;
  for (const h of headers as Array<{ name?: unknown; value?: unknown }>) {
    if (typeof h.name !== 'string') return true;
    if (h.name.toLowerCase() === 'user-agent') return !!h.value && typeof h.value !== 'string';
  }
  return false;
}

/** The real manager's answer then: 502, an empty body, the failed catch's message as its x-lpm-error. */
export const HEADERS_UNUSABLE = {
  status: 502,
  headers: { Connection: 'close', [PORT_ERROR_HEADER]: "Cannot set properties of undefined (setting 'status_code')" },
};
