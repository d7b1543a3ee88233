import type { ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import type { Exchange } from '../domain/har.js';
import type { PortRequest } from './port-context.js';
import { UpstreamFailure } from './port-failure.js';
import { readForRule } from './rule-body.js';
import { type Json, needsBody, portRules } from './rule-set.js';
import { type Outcome, PASS, RuleRun, storeEffects } from './rules.js';
import { STATUS_CHECK_CONTEXT } from './status-check.js';

// A request sent with its port's rules around it (see rules.ts): sent again, through another port, or
// answered in its place, as the rules decide.

/** An upstream's answer as a rule reads it. */
interface Answer {
  status: number;
  headers: Record<string, string>;
  body: Readable;
}

/** A request a rule sends again at most this often, whatever its `retries` (a rule matching every answer would otherwise loop a billion times). */
const MAX_RULE_RETRIES = 100;

/** One pass of a request through a port (the real manager's `timeline.add(port, session)` on each, lib/context.js 85): the log's timeline lists them. */
export interface Pass {
  port: number;
  session: string;
}

/** Where a request ended: the port (and its context) that sent it last, and every pass before it. */
interface Trail {
  rules: Json[];
  at: PortRequest;
  passes: Pass[];
}

/**
 * A port's request with its rules applied around `send` (one attempt through the upstream, with the
 * session of `attempt`): before it is sent, once the answer's head and (for body rules) its body arrived.
 * The answer to hand on (its body whole when a rule read it), or the one a rule gives in its place; with
 * the rules that ran, for the log, and the port it ended on. A rule's `retry_port`, or the request's route
 * header (`route`, read before any rule), sends it on through another port of the manager, whose rules
 * then apply (lib/server.js 784-790 and 837, lib/rules.js 196-217, lib/worker.js 255-264): `held` when
 * that port does not exist, the request then left unanswered as the real manager leaves it (observed).
 */
export async function withRules<T extends Answer, S extends { answer: T; peer: string | null; session: string }>(
  ctx: PortRequest,
  url: string,
  send: (attempt: PortRequest) => Promise<S>,
  route?: string,
): Promise<({ sent: S } & Trail) | ({ byRule: Extract<Outcome, { kind: 'answer' }>; unlogged?: boolean } & Trail) | { held: true }> {
  // The status check's request runs no rule (lib/rules.js 60, 111, 132).
  const rulesOf = (c: PortRequest) => (c.context === STATUS_CHECK_CONTEXT ? [] : portRules(c.cfg.rules));
  const rules = rulesOf(ctx);
  if (!rules.length && !route) return { sent: await send(ctx), rules: [], at: ctx, passes: [] };
  const run = new RuleRun(rules, storeEffects(ctx.store, ctx.port, ctx.now), ctx.port);
  let attempt = ctx;
  const passes: Pass[] = [];
  const trail = (): Trail => ({ rules: run.logged(), at: attempt, passes });
  let failedRetry = false; // a rule sent the request again after the port's own 502
  const again = (o: { same: boolean }, session: string): PortRequest => ({
    ...attempt,
    session: o.same ? session : (attempt.nextSession?.() ?? `${session}_r${run.retried}`),
  });
  /** The request on the port a rule or the route header names (its key as the real manager's table of servers reads it), with that port's rules; undefined when there is none. */
  const onPort = (o: { port: unknown; same: boolean }, session: string): PortRequest | undefined => {
    const next = attempt.reroute?.(String(o.port));
    if (!next) return undefined;
    run.moveTo(rulesOf(next), storeEffects(next.store, next.port, next.now), next.port);
    return o.same ? { ...next, session } : next;
  };
  let routed = route === undefined;
  for (;;) {
    passes.push({ port: attempt.listensAt ?? attempt.port, session: attempt.session });
    let before: Outcome = PASS;
    // A rule that fails the request before it is sent (an invalid `url`: RuleRun.before) fails it as an upstream would.
    let failed: UpstreamFailure | undefined;
    try {
      if (!routed) {
        routed = true;
        before = run.route(route as string);
      } else if (run.retried < MAX_RULE_RETRIES) before = run.before(url);
    } catch (err) {
      if (!(err instanceof UpstreamFailure)) throw err;
      failed = err;
    }
    if (before.kind === 'answer') return { byRule: before, ...trail() };
    if (before.kind === 'retry') {
      attempt = again(before, attempt.session);
      continue;
    }
    if (before.kind === 'port') {
      const next = onPort(before, attempt.session);
      if (!next) return { held: true };
      attempt = next;
      continue;
    }
    let sent: S;
    try {
      if (failed) throw failed;
      sent = await send(attempt);
    } catch (err) {
      if (!(err instanceof UpstreamFailure)) throw err;
      if (failed) {
        // A rule failed it before it was sent: the 502 runs the answer rules as an answer would (lib/server.js
        // 862-867), a retry as often as it says, each time failing again; the last is logged with the rules
        // (observed, 1.570.247: rules.test.ts, issue 34's differential finding).
        const out =
          run.retried < MAX_RULE_RETRIES ? run.afterHead({ url, status: 502, timePassed: ctx.now() - ctx.started, peer: null }) : PASS;
        if (out.kind === 'answer') return { byRule: out, unlogged: true, ...trail() };
        if (out.kind === 'pass') throw Object.assign(err, { rules: run.logged(), beforeSend: true });
        if (out.kind === 'port') {
          const next = onPort(out, attempt.session);
          if (!next) return { held: true };
          attempt = next;
        } else attempt = again(out, attempt.session);
        continue;
      }
      // The port's own 502 runs the port's rules too, with no peer (lib/server.js 862-867). Observed (1.570.247):
      // a rule's answer (null_response) is not logged; a retry sends the request once more, whatever its
      // retries (an answer then is handed on and logged, the same 502 is answered and not logged).
      if (failedRetry) throw Object.assign(err, { unlogged: true });
      const out =
        run.retried < MAX_RULE_RETRIES ? run.afterHead({ url, status: 502, timePassed: ctx.now() - ctx.started, peer: null }) : PASS;
      if (out.kind === 'answer') return { byRule: out, unlogged: true, ...trail() };
      if (out.kind === 'pass') throw Object.assign(err, { rules: run.logged() });
      failedRetry = true;
      if (out.kind === 'port') {
        const next = onPort(out, attempt.session);
        if (!next) return { held: true };
        attempt = next;
      } else attempt = again(out, attempt.session);
      continue;
    }
    const { answer, peer } = sent;
    const seen = { url, status: answer.status, timePassed: ctx.now() - ctx.started, peer };
    let out = run.retried < MAX_RULE_RETRIES ? run.afterHead(seen) : PASS;
    if (out.kind === 'pass' && needsBody(rulesOf(attempt)) && run.retried < MAX_RULE_RETRIES) {
      // The real manager reads the whole body before such a rule (lib/mixins/server_handle.js 214-231); the
      // sandbox its first RULE_BODY_LIMIT bytes, decoded (rule-body.ts).
      const read = await readForRule(answer.body, answer.headers['content-encoding']);
      answer.body = read.body;
      out = run.afterBody({ ...seen, text: read.text });
    }
    if (out.kind === 'pass') return { sent, ...trail() };
    answer.body.destroy();
    // A rule's answer once the upstream's answer arrived (null_response, timeout_response on a status, a
    // body, a request time) is written and the request dropped (lib/mixins/server_handle.js 212-213 and
    // 229-231: abort_proxy_req, its context never handed to the log): not logged, not counted (observed,
    // 1.570.247). Only a rule that answers before the request is sent is logged.
    if (out.kind === 'answer') return { byRule: out, unlogged: true, ...trail() };
    if (out.kind === 'port') {
      const next = onPort(out, sent.session);
      if (!next) return { held: true };
      attempt = next;
    } else attempt = again(out, sent.session);
  }
}

/** The answer a rule gives in the upstream's place (a null or timeout response: lib/router.js 16-24, 85-104), written and logged in `x`. */
export function answerByRule(a: Extract<Outcome, { kind: 'answer' }>, response: ServerResponse, x: Exchange): void {
  x.status = a.status;
  x.statusText = a.statusText;
  x.responseHeaders = a.headers;
  x.responseBody = Buffer.from(a.body);
  response.writeHead(a.status, a.statusText, a.headers);
  response.end(a.body);
  x.inBw = Buffer.byteLength(a.body);
}
