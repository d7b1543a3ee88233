import type { ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import type { RE2JS } from 're2js';
import type { Exchange } from '../domain/har.js';
import { compileRulePattern, RULE_PATTERN_LIMITS } from '../domain/search.js';
import type { Store } from '../domain/state.js';
import type { PortRequest } from './port-context.js';
import { UpstreamFailure } from './port-failure.js';
import { readForRule } from './rule-body.js';
import { STATUS_CHECK_CONTEXT } from './status-check.js';

// A port's `rules` applied to its requests, as the real local proxy manager 1.570.247 applies them
// (@luminati-io/luminati-proxy, lib/rules.js; the trigger a rule's fields stand for: util/rules_util.js
// 99-160). A rule names a trigger (`trigger_type` with `status`, `body`, `url`, `min_req_time`,
// `max_req_time`) and an action (`action: {ban_ip: ms, retry: true, …}`). Rules run in three places: before
// the request is sent (a rule with no condition on the answer), once the answer's head arrived (status,
// request time), once its body arrived (body). What the sandbox does not apply, and why, is listed in the
// sandbox README ("Rules").

type Json = Record<string, unknown>;

/** When a rule runs (the real manager's `type`, util/rules_util.js 113-160). */
export type RuleType = 'before_send' | 'timeout' | 'after_hdr' | 'after_body';

/** What a trigger is tested on (the real manager's `opt`, lib/rules.js 63, 120, 163). */
interface TriggerInput {
  url: string;
  domain?: string;
  status?: number | string;
  body?: string;
  timePassed?: number;
}

export interface PortRule {
  /** The rule as the port's configuration holds it (the log lists it so). */
  rule: Json;
  action: Json;
  type: RuleType;
  active: boolean;
  test(input: TriggerInput): boolean;
  /** Tested before a request was sent: the real manager then gives the rule an empty `url` when it had none (lib/rules.js 74), which its log shows. */
  urlDefaulted?: boolean;
  /** The rule has no `action` (`undefined`, `null`): the real manager fails the request where it reads one (RuleRun.before). */
  noAction?: 'undefined' | 'null';
}

/** Actions a rule only runs before a request is sent, and triggers that can be tested then (util/rules_util.js 48-110). */
const PRE_ACTIONS = new Set(['retry_same', 'retry', 'retry_port', 'null_response', 'timeout_response', 'bypass_proxy', 'cache', 'direct']);
const PRE_TRIGGERS = new Set(['url', 'min_conn_time', 'min_req_time']);

/**
 * A regular expression of a rule's field, tested on a value as the real manager's generated trigger
 * tests it (`new RegExp(String.raw`…`).test(value)`): unanchored, on the value as a string
 * (`"undefined"` when there is none). An invalid expression never matches (the real trigger throws and
 * counts as not matching: lib/rules.js 399-404).
 */
function matcher(pattern: unknown): (value: unknown) => boolean {
  const re = linear(pattern);
  if (typeof re === 'string') return () => false;
  // RE2 (domain/search.ts): a pattern that backtracks, `(a+)+b`, held the event loop for seconds in JavaScript's engine.
  const chars = Math.max(1, Math.floor(RULE_PATTERN_LIMITS.steps / re.programSize()));
  return (value) => re.matcher(String(value).slice(0, chars)).find();
}

/** A rule's pattern compiled (once per text) for RE2, or the message of why it is unusable. */
const patterns = new Map<string, RE2JS | string>();
function linear(pattern: unknown): RE2JS | string {
  const text = String(pattern);
  const known = patterns.get(text);
  if (known !== undefined) return known;
  let out: RE2JS | string;
  try {
    new RegExp(text);
    out = compileRulePattern(text);
  } catch (err) {
    out = (err as Error).message;
  }
  if (patterns.size >= 1000) patterns.delete(patterns.keys().next().value as string);
  patterns.set(text, out);
  return out;
}

/**
 * The message of a regular expression that does not compile, as `new RegExp(String(pattern))` throws it,
 * or of one RE2 cannot run (answered the same way); undefined when it compiles.
 */
function invalidPattern(pattern: unknown): string | undefined {
  const re = linear(pattern);
  return typeof re === 'string' ? re : undefined;
}

/** The condition and type the real manager derives from a rule's fields (util/rules_util.js 113-160). */
function triggerOf(r: Json): { type: RuleType; test: (o: TriggerInput) => boolean } {
  const pre = PRE_ACTIONS.has(String(r.action_type)) && PRE_TRIGGERS.has(String(r.trigger_type));
  let type: RuleType = 'before_send';
  let cond: (o: TriggerInput) => boolean = () => true;
  if (pre && (r.min_req_time || r.min_conn_time)) type = 'timeout';
  else if (!pre && r.status) {
    const m = matcher(r.status);
    cond = (o) => m(o.status);
    type = 'after_hdr';
  } else if (!pre && r.max_req_time) {
    const max = Number(r.max_req_time);
    cond = (o) => !((o.timePassed ?? 0) > max);
    type = 'after_hdr';
  } else if (!pre && r.min_req_time) {
    const min = Number(r.min_req_time);
    cond = (o) => !((o.timePassed ?? 0) < min);
    type = 'after_hdr';
  } else if (!pre && r.body) {
    const m = matcher(r.body);
    cond = (o) => m(o.body);
    type = 'after_body';
  }
  if (r.url) {
    const m = matcher(r.url);
    const onDomain = Boolean(r.domain);
    const before = cond;
    cond = (o) => before(o) && m(onDomain ? o.domain : o.url);
  }
  return { type, test: cond };
}

/** Rules that retry run after the others, those that retry on another port last (lib/rules.js 34-44). */
const priority = (action: Json) => (action.retry ? 1 : action.retry_port ? 2 : 0);

const compiled = new WeakMap<object, PortRule[]>();

/** A port's rules, ready to test (once per configuration). Anything but a list of objects is no rule (lib/config.js 193-198). */
export function portRules(rules: unknown): PortRule[] {
  if (!Array.isArray(rules) || rules.length === 0) return [];
  const known = compiled.get(rules);
  if (known) return known;
  // A rule that is no object is copied into one (`Object.assign({}, rule, …)`, util/rules_util.js 159-160):
  // a text gives its characters as fields, a number nothing, so either is a rule with no condition and
  // no action. Only null and undefined are dropped here (the real manager fails on them when the port starts).
  const out = rules
    .filter((r) => r !== null && r !== undefined)
    .map((r): Json => (typeof r === 'object' && !Array.isArray(r) ? (r as Json) : { ...(r as object) }))
    .map((rule) => {
      const action = typeof rule.action === 'object' && rule.action !== null ? (rule.action as Json) : {};
      const noAction = rule.action === undefined ? ('undefined' as const) : rule.action === null ? ('null' as const) : undefined;
      return { rule, action, active: rule.active !== false, ...(noAction ? { noAction } : {}), ...triggerOf(rule) };
    })
    .sort((a, b) => priority(a.action) - priority(b.action));
  compiled.set(rules, out);
  return out;
}

/** Whether a port's rules need the whole body of an answer before it is handed on (lib/rules.js 181-186). */
export const needsBody = (rules: PortRule[]) => rules.some((r) => r.active && r.type === 'after_body');

/**
 * What a rule decided: hand the answer on, send the request again (with a new session unless `same`),
 * send it again through another port of the manager (`port`, as the rule or the request's route header
 * names it), or answer in its place.
 */
export type Outcome =
  | { kind: 'pass' }
  | { kind: 'retry'; same: boolean }
  | { kind: 'port'; port: unknown; same: boolean }
  | { kind: 'answer'; status: number; statusText: string; headers: Record<string, string>; body: string };

const PASS: Outcome = { kind: 'pass' };

/** The body of a timeout rule's answer (lib/consts.js 12, lib/router.js 85-104). */
const TIMEOUT_BODY = 'Timeout rule triggered';

/** What a rule's action does to the port: ban an exit peer (for `ms`, 0 = until lifted; on a domain or all of them), take a new session. */
export interface RuleEffects {
  ban(ip: string, ms: number, domain: string | null): void;
  newSession(): void;
}

/** The effects on a port of the sandbox's store: its ban list, its session counter (the real `refresh_sessions`, `replace_session`). */
export function storeEffects(store: Store, port: number, now: () => number): RuleEffects {
  return {
    ban: (ip, ms, domain) => store.addBan({ port, ip, domain, to: ms > 0 ? now() + ms : 0 }),
    newSession: () => {
      store.nextSession(port);
    },
  };
}

/** A domain as the real manager takes it from a URL for a per-domain ban (lib/util.js 290-294). */
function domainOf(url: string): string {
  return /^(?:https?:\/\/)?(?:[^@\n]+@)?(?:www\.)?([^:/\n?]+)/i.exec(url)?.[1] ?? '';
}

/** How many times an action lets a request be sent again (lib/rules.js 220-230). */
function retries(action: Json): number {
  const r = action.retry;
  let n = Number(r === 'true' ? true : r === 'false' ? false : r) || 0;
  if (n > 3) n = 3;
  if (action.retry_port) n = 20;
  if (action.retries) n = Number(action.retries) || 0;
  return n;
}

/**
 * The rules of one request, its retries included: which rules ran (the log lists them, without their
 * trigger), how many times it was sent again.
 */
export class RuleRun {
  readonly executed = new Set<PortRule>();
  retried = 0;

  constructor(
    private rules: PortRule[],
    private effects: RuleEffects,
    /** The port the request is on now. */
    private port: number,
  ) {}

  /**
   * The request moved on to another port (or came back to this one): that port's rules and effects from
   * now on. The rules that ran and the count of times it was sent stay the request's (the real manager's
   * request context goes along: lib/context.js 37-49, 264-283; `req.retry`, lib/rules.js 201, 221).
   */
  moveTo(rules: PortRule[], effects: RuleEffects, port: number): void {
    this.rules = rules;
    this.effects = effects;
    this.port = port;
  }

  /**
   * The request's route header names a port (lib/server.js 784-790 `route_port`, before any rule): sent
   * there as a rule's `retry_port` sends it, counted as a retry, the port's sessions refreshed when it names
   * this port.
   */
  route(to: string): Outcome {
    return this.toPort(to, false);
  }

  /** lib/rules.js 196-200: the sessions are refreshed unless `retry_same`, and only when the port is this one (`port==this.server.port`). */
  private toPort(port: unknown, same: boolean): Outcome {
    this.retried++;
    if (!same && Number(port) === this.port) this.effects.newSession();
    return { kind: 'port', port, same };
  }

  /** The rules that ran, as the request's log entry lists them (lib/context.js 269-276). */
  logged(): Json[] {
    return [...this.executed].map((r) => {
      const { trigger_code, ...rule } = r.rule;
      // A rule with its own code keeps its own type; another is given the one derived from its fields (lib/rules.js 28-33).
      return { ...rule, ...(r.urlDefaulted && !rule.url ? { url: '' } : {}), type: rule.type && trigger_code ? rule.type : r.type };
    });
  }

  /** Before the request is sent: the first rule of its kind whose trigger matches decides (lib/rules.js 59-109). */
  before(url: string): Outcome {
    // A rule with no action fails the request where the real manager reads its action (`rule.action.cache`,
    // `rule.action.malware`: lib/rules.js 68-69, 56, 265), as the port's own 502 with the TypeError's message
    // (lib/server.js 862-872; observed, 1.570.247).
    const unreadable = (r: PortRule, field: string) => new UpstreamFailure(`Cannot read properties of ${r.noAction} (reading '${field}')`);
    for (const r of this.rules) {
      if (!r.active) continue;
      if (r.type !== 'before_send' && r.type !== 'timeout') {
        if (r.noAction) throw unreadable(r, 'cache');
        if (!r.action.cache) continue;
      }
      if (r.type === 'before_send') {
        r.urlDefaulted = true;
        if (r.test({ url, domain: url })) {
          if (!r.noAction) return this.act(r, { url }, undefined);
          this.executed.add(r);
          throw unreadable(r, 'malware');
        }
      }
      // A rule that did not match is tried as a cache rule, its `url` compiled first (lib/rules.js 55-57,
      // 76): an invalid regular expression throws there, and the request fails as the port's own 502
      // with the RegExp's message (lib/server.js 862-872; observed, 1.570.247).
      const invalid = invalidPattern(r.rule.url ?? '');
      if (invalid) throw new UpstreamFailure(invalid);
      if (r.noAction) throw unreadable(r, 'cache');
    }
    return PASS;
  }

  /** Once the answer's head arrived (lib/rules.js 110-130). */
  afterHead(o: { url: string; status: number; timePassed: number; peer: string | null }): Outcome {
    return this.after('after_hdr', o);
  }

  /** Once the answer's body arrived (lib/rules.js 131-173): the body as text, decoded as its `content-encoding` says. */
  afterBody(o: { url: string; status: number; timePassed: number; peer: string | null; text: string | undefined }): Outcome {
    if (o.text === undefined) return PASS;
    return this.after('after_body', { ...o, body: o.text });
  }

  private after(type: RuleType, o: TriggerInput & { peer: string | null }): Outcome {
    for (const r of this.rules) {
      if (!r.active || r.type !== type) continue;
      // A rule that ran once for this request does not run again on its retry, but for one that retries (lib/context.js 277-283).
      if (this.executed.has(r) && !r.action.retry && !r.action.cache) continue;
      if (!r.test(o)) continue;
      const out = this.act(r, o, o.peer);
      if (out.kind !== 'pass') return out;
    }
    return PASS;
  }

  /** A rule's action (lib/rules.js 258-360). `peer` is undefined before an answer. */
  private act(r: PortRule, o: TriggerInput, peer: string | null | undefined): Outcome {
    const a = r.action;
    this.executed.add(r);
    if (a.timeout_response)
      return {
        kind: 'answer',
        status: 504,
        statusText: 'Proxy manager tunnel timeout',
        headers: { 'content-type': 'text/html', 'content-length': String(TIMEOUT_BODY.length) },
        body: TIMEOUT_BODY,
      };
    if (a.null_response) return { kind: 'answer', status: 200, statusText: 'NULL', headers: {}, body: '' };
    if (peer !== undefined) {
      if (a.ban_ip !== undefined && a.ban_ip !== null && peer) {
        this.effects.ban(peer, Number(a.ban_ip) || 0, null);
        this.effects.newSession();
      }
      // The real manager bans a global ban on the ports it is given, and it is given none (lib/manager.js
      // 605-611 called from lib/mixins/mgr_proxy.js 104-106 without ports): only the session is replaced.
      if (a.ban_ip_global !== undefined && a.ban_ip_global !== null) this.effects.newSession();
      if (a.ban_ip_domain !== undefined && a.ban_ip_domain !== null && peer) {
        this.effects.ban(peer, Number(a.ban_ip_domain) || 0, domainOf(o.url));
        this.effects.newSession();
      }
    }
    // Not applied offline (see the README): a request to another URL.
    if (a.request_url) return PASS;
    if (this.retried >= retries(a)) return PASS;
    const same = Boolean(a.retry_same);
    // Through another port (or this one again): lib/rules.js 196-217.
    if (a.retry_port) return this.toPort(a.retry_port, same);
    this.retried++;
    if (!same) this.effects.newSession();
    return { kind: 'retry', same };
  }
}

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
