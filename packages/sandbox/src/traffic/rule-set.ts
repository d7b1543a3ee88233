import type { RE2JS } from 're2js';
import { compileRulePattern, RULE_PATTERN_LIMITS } from '../domain/search.js';

// A port's `rules` as the sandbox reads them (see rules.ts): each rule's trigger, when it runs (before the
// request is sent, after the answer's head, after its body) and its action, compiled once per list.

export type Json = Record<string, unknown>;

/** When a rule runs (the real manager's `type`, util/rules_util.js 113-160). */
export type RuleType = 'before_send' | 'timeout' | 'after_hdr' | 'after_body';

/** What a trigger is tested on (the real manager's `opt`, lib/rules.js 63, 120, 163). */
export interface TriggerInput {
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
export function invalidPattern(pattern: unknown): string | undefined {
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
