import type { Store } from '../domain/state.js';
import { UpstreamFailure } from './port-failure.js';
import { invalidPattern, type Json, type PortRule, type RuleType, type TriggerInput } from './rule-set.js';

// A port's `rules` applied to its requests, as the real local proxy manager 1.570.247 applies them
// (@luminati-io/luminati-proxy, lib/rules.js; the trigger a rule's fields stand for: util/rules_util.js
// 99-160). A rule names a trigger (`trigger_type` with `status`, `body`, `url`, `min_req_time`,
// `max_req_time`) and an action (`action: {ban_ip: ms, retry: true, …}`). Rules run in three places: before
// the request is sent (a rule with no condition on the answer), once the answer's head arrived (status,
// request time), once its body arrived (body). What the sandbox does not apply, and why, is listed in the
// sandbox's docs/traffic.md ("Rules").
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

export const PASS: Outcome = { kind: 'pass' };

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
    // Not applied offline (docs/traffic.md): a request to another URL.
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
