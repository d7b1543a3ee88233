import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { RequestError } from 'proxy-chain';
import { type Exchange, harKeep } from '../domain/har.js';
import { PORT_DEFAULTS } from '../domain/port-defaults.js';
import type { ProxyPortConfig } from '../domain/types.js';
import { NETWORK_REALM, PEER_IP_HEADERS, PORT_ROUTE_HEADER } from '../shared/brand.js';
import { StreamedBody } from './body.js';
import { fakeAnswer } from './control-headers.js';
import { forward, passHeaders, passOn, requestBytes, responseHeadBytes, writeAnswerHead } from './forward.js';
import { harText } from './har-body.js';
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
import { answerByRule, portRules, RuleRun, storeEffects, withRules } from './rules.js';
import { connectHead, connectVia, relay, smtpSockets, type UpstreamTunnel } from './tunnel.js';

// One request through a proxy port (plain HTTP, or HTTPS inside an SSL-analyzing port): the port's
// headers added, sent upstream (within its throttle; an upstream that cannot be reached is the port's
// own 502, logged), a banned exit peer answered by taking a new session, and the exchange logged.

/**
 * Runs `send` with the port's session, once while the upstream cannot be reached (UpstreamFailure,
 * whatever `proxy_retry` says, as the real manager), and again with a new session while the exit peer it
 * names is banned for the port and the target's host (up to `max_ban_retries`, then 502 Too many banned IPs). `drop` lets go of
 * an answer that is not used. `checkBans: false` takes the first answer whatever its peer (a tunnel the
 * port does not open, as the real manager).
 */
export async function throughUpstream<T>(
  ctx: PortRequest,
  target: { host: string; authority: string },
  send: (session: string) => Promise<T>,
  peerOf: (answer: T) => string | null,
  drop: (answer: T) => void,
  checkBans = true,
): Promise<{ answer: T; peer: string | null; session: string }> {
  const { store, cfg, port, session, now, gate } = ctx;
  const { host } = target;
  const retries = cfg.max_ban_retries ?? PORT_DEFAULTS.max_ban_retries;
  /** One attempt through the upstream; one that cannot reach it is not sent again, whatever `proxy_retry` says (UpstreamFailure). */
  const attemptOnce = async (current: string) => {
    try {
      return await (gate ? gate.run(() => send(current)) : send(current));
    } catch (err) {
      // An answer already (a body that cannot be sent again).
      if (err instanceof RequestError) throw err;
      const code = (err as NodeJS.ErrnoException).code ?? 'error';
      // The target's TLS (or a tunnel the upstream refused) is not the upstream failing.
      if (/TLS|CERT|ETUNNEL|SELF_SIGNED|UNABLE_TO/.test(code))
        throw portError(502, `The HTTPS target ${target.authority} failed: ${code} (${(err as Error).message})`);
      throw new UpstreamFailure((err as Error).message || code);
    }
  };
  let current = session;
  for (let attempt = 0; ; attempt++) {
    const answer = await attemptOnce(current);
    const peer = peerOf(answer);
    const banned =
      checkBans && peer !== null && store.activeBans(port, now()).some((b) => b.ip === peer && (b.domain === null || b.domain === host));
    if (!banned) return { answer, peer, session: current };
    drop(answer);
    if (attempt >= retries) throw portError(502, 'Too many banned IPs');
    current = `${session}_b${attempt + 1}`;
  }
}

/** The upstream username of a session: an external proxy's own, else the port's login. */
export function upstreamUser(ctx: PortRequest, session: string): string {
  const own = ctx.upstream.authorization?.replace(/^Basic /, '');
  if (own) return Buffer.from(own, 'base64').toString('utf8').split(':')[0] ?? '';
  return ctx.login(session).username;
}

/** The upstream `Proxy-Authorization` of a session: an external proxy's own, else the port's login. */
export function authorization(ctx: PortRequest, session: string): string {
  if (ctx.upstream.authorization) return ctx.upstream.authorization;
  const { username, password } = ctx.login(session);
  return `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
}

/** The exit peer an upstream's answer names, if any (PEER_IP_HEADERS: the real manager reads either). */
export function peerOf(headers: Record<string, string | string[] | undefined> | undefined): string | null {
  for (const name of PEER_IP_HEADERS) {
    const value = [headers?.[name]].flat()[0];
    if (value) return value;
  }
  return null;
}

/**
 * An answer of the sandbox's own network reached in process, with the connection headers the network
 * writes over TCP to a port that keeps its connection open, as the real manager's keep-alive connection
 * to its upstream gets them: Node's `keep-alive` (5 s), or `close` after a refusal of the network (its
 * `server` header), which ends the connection.
 */
async function keptAlive<T extends { rawHeaders: string[]; headers: Record<string, string> }>(answer: Promise<T>): Promise<T> {
  const a = await answer;
  const refused = a.headers.server === NETWORK_REALM;
  const kept: string[] = [];
  for (let i = 0; i + 1 < a.rawHeaders.length; i += 2)
    if (!/^(connection|keep-alive)$/i.test(a.rawHeaders[i] as string)) kept.push(a.rawHeaders[i] as string, a.rawHeaders[i + 1] as string);
  return { ...a, rawHeaders: [...kept, ...(refused ? ['connection', 'close'] : ['connection', 'keep-alive', 'keep-alive', 'timeout=5'])] };
}

/** The `connection` and `keep-alive` headers of an upstream's answer, names in lower case, as it sent them. */
function connectionHeaders(res: { rawHeaders: string[] }): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i + 1 < res.rawHeaders.length; i += 2) {
    const name = (res.rawHeaders[i] as string).toLowerCase();
    if (name === 'connection' || name === 'keep-alive') out[name] = res.rawHeaders[i + 1] as string;
  }
  return out;
}

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
  x.requestHeaders = passHeaders(headers);
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
  x.responseHeaders = res.headers;
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

/** A CONNECT's exchange, on the port it was routed to (`at`) after the one it came to (`first`). */
function routedExchange(first: PortRequest, at: PortRequest, authority: string): Exchange {
  const x = first.exchange('CONNECT', authority);
  if (at === first) return x;
  x.port = at.port;
  x.upstream = `${at.upstream.host}:${at.upstream.port}`;
  x.earlier = [{ port: first.port, session: first.session }];
  return x;
}

/** No rule decided. */
const PASS_RULES = { kind: 'pass' } as const;

/**
 * A CONNECT through a port without SSL analyzing: a CONNECT to the upstream, whose answer the client
 * gets (the peer's header with it), then the tunnel relayed, logged when it closes as the real manager
 * logs a tunnel (below), with the peer the upstream named. Bans are not checked on it: the
 * real manager checks them on requests it reads (plain, SSL-analyzed), not on a tunnel it does not
 * open (proven in the real-manager suite).
 */
export async function servePortTunnel(
  first: PortRequest,
  request: IncomingMessage,
  socket: Socket,
  head: Buffer,
  hostname: string,
  targetPort: number,
): Promise<void> {
  /** The port the tunnel goes through: the one it came to, or the one its route header names. */
  let ctx = first;
  const authority = `${hostname.includes(':') ? `[${hostname}]` : hostname}:${targetPort}`;
  // Headers the real manager cannot read fail a CONNECT as they fail a plain request (headersUnusable):
  // its answer, written on the socket, and nothing logged.
  if (headersUnusable(ctx.cfg.headers)) {
    socket.end(connectHead(HEADERS_UNUSABLE.status, PORT_FAILED, HEADERS_UNUSABLE.headers));
    return;
  }
  if (ctx.upstream.unusable) {
    socket.end(connectHead(502, PORT_FAILED, portFailedHeaders(ctx.upstream.unusable)));
    return;
  }
  // The route header of the CONNECT sends the tunnel through the port it names (as a plain request's:
  // rules.ts withRules; observed on the real manager 1.570.247), logged there; none such: no answer.
  const route = [request.headers[PORT_ROUTE_HEADER]].flat()[0] || undefined;
  if (route) {
    if (Number(route) === first.port) storeEffects(first.store, first.port, first.now).newSession();
    const next = first.reroute?.(route);
    if (!next) return;
    ctx = next;
  }
  let sent: { answer: UpstreamTunnel; peer: string | null; session: string };
  /** The port's rules on its own 502 (below); none ran until it failed once. */
  let run: RuleRun | undefined;
  for (;;) {
    try {
      sent = await throughUpstream(
        ctx,
        { host: hostname, authority },
        (session) =>
          ctx.network
            ? ctx.network.openTunnel({ ...ctx.login(session), clientIp: ctx.upstream.host, hostname, port: targetPort, ua: ctx.ua })
            : connectVia(ctx.upstream, authority, authorization(ctx, session)),
        (u) => (u.status === 200 ? peerOf(u.headers) : null),
        (u) => u.socket?.destroy(),
        false,
      );
      break;
    } catch (err) {
      if (!(err instanceof UpstreamFailure) || smtpSockets.has(socket)) throw err;
      // The port's own 502 runs the port's status rules, a CONNECT's as a plain request's (lib/server.js
      // 862-867, lib/rules.js 110-128; observed on the real manager 1.570.247): a retry sends the CONNECT
      // once more (the same 502 then answered and not logged), a null_response answers `501 NULL`
      // (lib/router.js 16-24), not logged; any other rule that matches is listed in the 502's entry.
      const again = run !== undefined;
      const rules = portRules(ctx.cfg.rules);
      if (!again && rules.length) run = new RuleRun(rules, storeEffects(ctx.store, ctx.port, ctx.now), ctx.port);
      const out =
        !again && run ? run.afterHead({ url: authority, status: 502, timePassed: ctx.now() - ctx.started, peer: null }) : PASS_RULES;
      if (out.kind === 'answer') {
        // A null response to a CONNECT is `501 NULL` (lib/router.js 16-18).
        const status = out.statusText === 'NULL' ? 501 : out.status;
        socket.end(connectHead(status, out.statusText, out.headers) + out.body);
        return;
      }
      if (out.kind === 'retry') {
        ctx = out.same ? ctx : { ...ctx, session: ctx.nextSession?.() ?? `${ctx.session}_r${run?.retried ?? 1}` };
        continue;
      }
      if (out.kind === 'port') {
        const next = ctx.reroute?.(String(out.port));
        // A port the manager does not run: the CONNECT is left unanswered, as a plain request is (rules.ts withRules).
        if (!next) return;
        ctx = out.same ? { ...next, session: ctx.session } : next;
        continue;
      }
      if (!again) {
        // Logged as the CONNECT it was, with the rules that ran on it, answered with its head alone.
        const x = routedExchange(first, ctx, authority);
        x.received = 0;
        x.outBw = 0;
        if (run?.executed.size) x.rules = run.logged();
        logFailure(ctx, x, err.message, ctx.session);
      }
      socket.end(connectHead(502, PORT_FAILED, portFailedHeaders(err.message)));
      return;
    }
  }
  const { answer: up, peer, session } = sent;
  // Logged as the real manager logs a tunnel it does not open: its authority as the URL, the
  // upstream's answer to the CONNECT as the response, whose status and body are `unknown` for port
  // 443; the bytes each way with the heads of the CONNECT and of its answer.
  const x = routedExchange(first, ctx, authority);
  x.peer = peer;
  x.session = session;
  x.username = upstreamUser(ctx, session);
  x.answered = ctx.now() - x.started;
  // A CONNECT a rule sent again after the port's own 502 is logged with the rule, as a plain request is.
  if (run?.executed.size) x.rules = run.logged();
  const passed = passHeaders(up.headers);
  x.status = up.status === 200 && targetPort === 443 ? 'unknown' : up.status;
  x.statusText = up.statusText;
  x.responseHeaders = Object.fromEntries(Object.entries(passed).map(([k, v]) => [k, [v].flat().join(', ')]));
  const connectBytes = requestBytes(request, 0);
  // A port relaying SMTP answers its own CONNECT to no one: its client reads the tunnel from the start.
  const smtp = smtpSockets.has(socket);
  if (up.socket) {
    const answer = smtp ? '' : connectHead(up.status, up.statusText, passed);
    if (answer) socket.write(answer);
    const { up: outBw, down: inBw } = await relay(socket, up.socket, head, up.head);
    x.received = inBw;
    x.inBw = Buffer.byteLength(answer) + inBw;
    x.outBw = connectBytes + outBw;
  } else if (smtp) {
    socket.end();
    x.received = 0;
    x.inBw = 0;
    x.outBw = connectBytes;
  } else {
    const text = Buffer.from(up.body ?? '');
    const answer = connectHead(up.status, up.statusText, { ...up.headers, 'content-length': String(text.length), connection: 'close' });
    socket.end(answer + text);
    x.received = text.length;
    x.inBw = Buffer.byteLength(answer) + text.length;
    x.outBw = connectBytes;
  }
  x.time = ctx.now() - x.started;
  ctx.log(x);
}
