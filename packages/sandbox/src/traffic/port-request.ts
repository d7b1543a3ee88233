import type { IncomingMessage, ServerResponse } from 'node:http';
import { harKeep } from '../domain/har.js';
import type { ProxyPortConfig } from '../domain/types.js';
import { PORT_ROUTE_HEADER } from '../shared/brand.js';
import { StreamedBody } from './body.js';
import { fakeAnswer } from './control-headers.js';
import { forward, passOn, requestBytes, responseHeadBytes, writeAnswerHead } from './forward.js';
import { harText } from './har-body.js';
import { loggedAnswerHeaders, loggedRequestHeaders } from './logged-headers.js';
import type { PortRequest } from './port-context.js';
import {
  answerPortFailed,
  HEADERS_UNUSABLE,
  headersUnusable,
  logFailure,
  PORT_FAILED,
  portError,
  portFailedHeaders,
  UpstreamFailure,
} from './port-failure.js';
import { authorization, connectionHeaders, keptAlive, peerOf, throughUpstream, upstreamUser } from './port-upstream.js';
import { answerByRule, withRules } from './rule-sends.js';

// One request through a proxy port (plain HTTP, or HTTPS inside an SSL-analyzing port): the port's
// headers added, sent upstream (within its throttle; an upstream that cannot be reached is the port's
// own 502, logged), a banned exit peer answered by taking a new session, and the exchange logged.

/** The port's own exit IP a fake answer names when the request names none (lib/mixins/server_send.js 216-221: the session's `ip`). */
const fakePortIp = (cfg: ProxyPortConfig): string | undefined => (typeof cfg.ip === 'string' && cfg.ip ? cfg.ip : undefined);

/** The port's whitelist as the real manager holds it: the settings' fixed and default whitelists, then the port's own (lib/mixins/mgr_proxy.js 176-177). */
const fakeWhitelist = (ctx: PortRequest): string[] => {
  const s = ctx.store.manager.settings;
  return [...new Set([...s.fixed_whitelist_ips, ...s.whitelist_ips, ...(ctx.cfg.whitelist_ips ?? [])])];
};

/** `headers` with the port's own `headers` set over them (lib/server.js 966-975 `add_headers`). */
function withPortHeaders(headers: IncomingMessage['headers'], ctx: PortRequest): IncomingMessage['headers'] {
  for (const h of ctx.cfg.headers ?? []) {
    // A header no HTTP message can carry once failed as a misleading 502 about the upstream; the value is not shown.
    if (/[\r\n\0]/.test(`${h.name}${h.value}`) || !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(h.name))
      throw portError(
        502,
        `The header ${JSON.stringify(h.name.slice(0, 64))} of port ${ctx.port} cannot be sent: a name or value holds a line break or a character no header may carry; fix the port's headers`,
      );
    headers[h.name.toLowerCase()] = h.value;
  }
  return headers;
}

/**
 * A plain request (or one inside an SSL-analyzing port) answered on `response`: the upstream's answer
 * is handed on as it arrives, and logged once it ended (or the client or target went away) with its
 * bytes counted and its first `har_limit` bytes kept.
 */
export async function servePortRequest(ctx: PortRequest, request: IncomingMessage, url: URL, response: ServerResponse): Promise<void> {
  const { cfg, upstream, started, now, exchange, log } = ctx;
  if (headersUnusable(cfg.headers)) {
    response.writeHead(HEADERS_UNUSABLE.status, PORT_FAILED, HEADERS_UNUSABLE.headers);
    response.end();
    return;
  }
  // An upstream the real manager cannot read (an ext_proxies entry that is no text) fails the request
  // before it has a response to log: the same 502, not logged (observed).
  if (upstream.unusable) {
    answerPortFailed(response, portFailedHeaders(upstream.unusable));
    return;
  }
  // Streamed on as it arrives (body.ts): counted, and its first har_limit bytes kept for the log.
  const body = new StreamedBody(request, harKeep(ctx.store.manager.settings.har_limit, undefined));
  await body.start();
  // The route header names the port to send the request through (lib/server.js 784-790): read, neither
  // passed on nor logged, as the real manager's own headers (lib/context.js 13-15, 134-139).
  const routeHeader = request.headers[PORT_ROUTE_HEADER];
  const route = [routeHeader].flat()[0] || undefined;
  const headers = withPortHeaders({ ...request.headers }, ctx);
  // A client's `connection: close` spelled in lower case reaches the real manager's upstream (logged-headers.ts), which closes.
  const closes = /\bclose\b/i.test(String(loggedRequestHeaders(request, ctx.cfg.headers).connection ?? ''));
  delete headers[PORT_ROUTE_HEADER];
  // The port's rules (rules.ts) may send the request again (on this port or another), or answer in the upstream's place.
  const ruled = await withRules(
    ctx,
    url.href,
    (attempt) =>
      throughUpstream(
        attempt,
        { host: url.hostname, authority: url.host },
        (session) => {
          // On another port, that port's headers too, over the first one's (lib/server.js 816 on each port's pass).
          const sent = attempt.port === ctx.port ? headers : withPortHeaders({ ...headers }, attempt);
          // A fake answer in place of the upstream's (lib/router.js 13-15, lib/server.js 995-996), which the port's rules read as any.
          const fake = attempt.control?.fake;
          if (fake) return fakeAnswer(fake, { session, portIp: fakePortIp(attempt.cfg), whitelist: fakeWhitelist(attempt) });
          return attempt.network && url.protocol === 'http:'
            ? keptAlive(
                attempt.network.request(
                  {
                    ...attempt.login(session),
                    clientIp: attempt.upstream.host,
                    hostname: url.hostname,
                    port: Number(url.port) || 80,
                    ua: attempt.ua,
                  },
                  { method: request.method as string, url, headers: sent, body: body.open() },
                ),
                closes,
              )
            : forward({
                method: request.method as string,
                url,
                headers: sent,
                body: body.open(),
                via: { ...attempt.upstream, authorization: authorization(attempt, session) },
                ca: attempt.targetCa,
                insecure: attempt.cfg.insecure === true,
              });
        },
        // The peer is named in the answer, or for HTTPS (SSL analyzing) in the answer to the CONNECT.
        (r) => peerOf(r.headers) ?? peerOf(r.connectHeaders),
        (r) => r.body.destroy(),
      ),
    route,
  ).catch((err: unknown) => {
    if (err instanceof UpstreamFailure) return { failed: err };
    throw err;
  });
  // Sent to a port that does not exist: the real manager answers nothing and logs nothing (observed,
  // 1.570.247); the client's connection stays open until it or the port's inactivity timeout ends it.
  if ('held' in ruled) return;
  const x = exchange(request.method as string, url.href);
  // This request's (inside an SSL-analyzing port, not its tunnel's), as the real manager logs them (logged-headers.ts).
  x.requestHeaders = loggedRequestHeaders(request, ctx.cfg.headers);
  if ('failed' in ruled) {
    // The port's own 502 (UpstreamFailure): logged with the rules that ran on it (unless a rule had sent
    // it again: rules.ts withRules), then answered with no body.
    body.finish();
    x.requestBody = body.kept;
    x.requestSize = body.bytes;
    x.rules = ruled.failed.rules;
    // Failed once sent: the entry names the upstream login the request went with (lib/server.js 426-431).
    if (!ruled.failed.beforeSend) x.username = upstreamUser(ctx, ctx.session);
    if (!ruled.failed.unlogged) logFailure(ctx, x, ruled.failed.message, ctx.session);
    answerPortFailed(response, portFailedHeaders(ruled.failed.message));
    return;
  }
  x.rules = ruled.rules;
  // Logged on the port the request ended on, with each port it passed through before (the real manager's
  // `response` is the last port's, its timeline the request's: lib/server.js 853, lib/context.js 85).
  const at = ruled.at;
  x.port = at.listensAt ?? at.port;
  x.upstream = `${at.upstream.host}:${at.upstream.port}`;
  x.earlier = ruled.passes.slice(0, -1);
  if ('byRule' in ruled) {
    // Answered without sending the body: what the client sends of it is read and dropped.
    body.finish();
    x.requestBody = body.kept;
    x.requestSize = body.bytes;
    x.outBw = requestBytes(request, body.bytes);
    x.answered = now() - started;
    answerByRule(ruled.byRule, response, x);
    x.time = now() - started;
    // A rule's answer after the upstream answered, or to the port's own 502, is not logged (observed: rules.ts withRules).
    if (!ruled.unlogged) log(x);
    return;
  }
  const { answer: res, peer, session } = ruled.sent;
  x.status = 'loggedStatus' in res ? (res.loggedStatus as number | string) : res.status;
  x.statusText = res.statusText;
  // As its upstream sent them, connection headers included (logged-headers.ts).
  x.responseHeaders = { ...loggedAnswerHeaders(res.rawHeaders ?? []), ...res.headers };
  x.peer = peer;
  x.session = session;
  x.username = upstreamUser(at, session);
  x.answered = now() - started;
  // The client gets the network's answer with the peer's header, as from the real manager (proven in
  // the real-manager suite), as it arrives.
  // The upstream's own connection headers are handed on as they came (the real manager copies its
  // upstream's answer headers whole, `connection` and `keep-alive` among them: observed on 1.570.247,
  // new-user-values.test.ts) and counted in the answer's bytes, as the real manager counts what it wrote
  // on the client's socket (lib/context.js 92-112).
  const written = { ...res.headers, ...connectionHeaders(res) };
  try {
    writeAnswerHead(response, { ...res, headers: written });
  } catch (err) {
    res.body.destroy();
    throw err;
  }
  const passed = await passOn(res.body, response, harKeep(x.harLimit, res.headers['content-type']));
  body.finish();
  x.requestBody = body.kept;
  x.requestSize = body.bytes;
  x.outBw = requestBytes(request, body.bytes);
  x.responseBody = passed.kept;
  x.responseSize = passed.bytes;
  x.decoded = await harText(passed.kept, res.headers['content-encoding'], x.harLimit, passed.bytes);
  const writtenRaw = Object.entries(written).flatMap(([k, v]) => [v].flat().flatMap((one) => [k, String(one)]));
  x.inBw = responseHeadBytes({ ...res, rawHeaders: writtenRaw }) + passed.bytes;
  x.time = now() - started;
  log(x);
}
