import type { IncomingMessage } from 'node:http';
import { RequestError } from 'proxy-chain';
import type { Store } from '../domain/state.js';
import type { ProxyPortConfig } from '../domain/types.js';
import { forward, passHeaders, readBody, requestBytes, responseBytes } from './forward.js';
import type { Exchange } from './har.js';
import type { Gate } from './upstream.js';
import { headerBrand } from './username.js';

// One request through a proxy port (plain HTTP, or HTTPS inside an SSL-analyzing port): the port's
// headers added, sent upstream (within its throttle, retried when the upstream cannot be reached),
// a banned exit peer answered by taking a new session, and the exchange logged.

/** The brand word the real manager sends upstream, and reads its answers by (`x-luminati-ip`). */
export const BRAND = 'lum';

export interface PortRequest {
  store: Store;
  cfg: ProxyPortConfig;
  port: number;
  clientIp: string;
  session: string;
  upstream: { host: string; port: number; authorization?: string };
  /** The upstream `Proxy-Authorization` for a session. */
  credential: (session: string) => string;
  started: number;
  now: () => number;
  gate?: Gate;
  /** CA certificates trusted for HTTPS targets beside the system's (SSL analyzing talks TLS to the target itself). */
  targetCa?: readonly string[];
  /** A new HAR exchange of this request. */
  exchange: (method: string, url: string) => Exchange;
  log: (x: Exchange) => void;
}

export const portError = (status: number, message: string) => new RequestError(message, status, { 'x-lpm-error': message });

export async function servePortRequest(
  ctx: PortRequest,
  request: IncomingMessage,
  url: URL,
): Promise<{ statusCode: number; headers: Record<string, string>; body: Buffer }> {
  const { store, cfg, port, session, upstream, credential, started, now, gate, exchange, log } = ctx;
  const body = await readBody(request);
  const headers = { ...request.headers };
  for (const h of (cfg as { headers?: { name: string; value: string }[] }).headers ?? []) headers[h.name.toLowerCase()] = h.value;
  const host = url.hostname;
  const retries = (cfg as { max_ban_retries?: number }).max_ban_retries ?? 10;
  const upstreamRetries = (cfg as { proxy_retry?: number }).proxy_retry ?? 2;
  const send = (authorization: string) =>
    forward({
      method: request.method as string,
      url,
      headers,
      body,
      via: { ...upstream, authorization: upstream.authorization ?? authorization },
      ca: ctx.targetCa,
      insecure: (cfg as { insecure?: boolean }).insecure === true,
    });
  /** One attempt through the upstream, retried `proxy_retry` times when the upstream cannot be reached. */
  const attemptOnce = async (authorization: string) => {
    for (let tries = 0; ; tries++) {
      try {
        return await (gate ? gate.run(() => send(authorization)) : send(authorization));
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code ?? 'error';
        // The target's TLS (or a tunnel the upstream refused) is not the upstream failing: no retry.
        if (/TLS|CERT|ETUNNEL|SELF_SIGNED|UNABLE_TO/.test(code))
          throw portError(502, `The HTTPS target ${url.host} failed: ${code} (${(err as Error).message})`);
        if (tries >= upstreamRetries) throw portError(502, `The upstream ${upstream.host}:${upstream.port} cannot be reached (${code})`);
      }
    }
  };
  let attempt = 0;
  let current = session;
  for (;;) {
    const res = await attemptOnce(credential(current));
    const peer = res.headers[`x-${headerBrand(BRAND)}-ip`] ?? null;
    const banned = peer !== null && store.activeBans(port, now()).some((b) => b.ip === peer && (b.domain === null || b.domain === host));
    if (banned && attempt < retries) {
      attempt++;
      current = `${session}_b${attempt}`;
      continue;
    }
    if (banned) throw portError(502, 'Too many banned IPs');
    const x = exchange(request.method as string, url.href);
    x.requestHeaders = passHeaders(headers);
    x.requestBody = body;
    x.status = res.status;
    x.statusText = res.statusText;
    x.responseHeaders = res.headers;
    x.responseBody = res.body;
    x.peer = peer;
    x.outBw = requestBytes(request, body);
    x.inBw = responseBytes(res);
    x.time = now() - started;
    log(x);
    return { statusCode: res.status, headers: res.headers, body: res.body };
  }
}
