import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Exchange } from '../domain/har.js';
import { PORT_ROUTE_HEADER } from '../shared/brand.js';
import { passHeaders, requestBytes } from './forward.js';
import type { PortRequest } from './port-context.js';
import { HEADERS_UNUSABLE, headersUnusable, logFailure, PORT_FAILED, portFailedHeaders, UpstreamFailure } from './port-failure.js';
import { authorization, peerOf, throughUpstream, upstreamUser } from './port-upstream.js';
import { portRules } from './rule-set.js';
import { RuleRun, storeEffects } from './rules.js';
import { connectHead, connectVia, relay, smtpSockets, type UpstreamTunnel } from './tunnel.js';

// A CONNECT through a proxy port (see port-request.ts for a plain request): routed, run through the
// port's rules, opened through its upstream and relayed, logged.

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
    const head = { ...up.headers, 'content-length': String(text.length), connection: 'close' };
    const answer = connectHead(up.status, up.statusText, head);
    socket.end(answer + text);
    // Logged as the real manager logs its upstream's refusal of a CONNECT: the answer's headers as
    // the upstream sent them, `connection` and `content-length` among them, no body, and only the head
    // counted in (observed on 1.570.247: traffic-cases.test.ts).
    x.responseHeaders = Object.fromEntries(Object.entries(head).flatMap(([k, v]) => (v === undefined ? [] : [[k, [v].flat().join(', ')]])));
    x.received = 0;
    x.inBw = Buffer.byteLength(answer);
    x.outBw = connectBytes;
  }
  x.time = ctx.now() - x.started;
  ctx.log(x);
}
