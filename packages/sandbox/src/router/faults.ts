import type { FastifyReply, FastifyRequest } from 'fastify';
import { declaresOnlyText, textType } from './answers.js';
import type { OperationDef } from './spec.js';

/** What a fault does to a request it matches: answer a status, wait, drop the connection, or let it through. */
export interface FaultAction {
  /** Answer with this status instead of running the operation. */
  status?: number;
  /** Body sent with `status` (JSON, or a string sent as text/plain); an `Error` body by default. */
  body?: unknown;
  /** Delay before answering (or before running the operation, when no `status` or `drop` is given). */
  latency_ms?: number;
  /** Destroy the connection without an answer. */
  drop?: boolean;
  /** Let the request through untouched (a step of a sequence: "fail, then succeed once, then fail"). */
  pass?: boolean;
}

/**
 * Which requests a fault takes, beyond its operation: every condition given must hold. Values are
 * compared as the request carries them (path and query parameters as strings or parsed JSON, header
 * names in any case); `body` matches when each field it gives is in the request's body with that
 * value (nested objects the same way, arrays whole).
 */
export interface FaultMatch {
  /** Path and query parameters, by name. */
  params?: Record<string, unknown>;
  /** A part of the JSON body. */
  body?: unknown;
  /** Request headers, by name (case-insensitive), exact values. */
  headers?: Record<string, string>;
  /** The customer the request's credential belongs to. */
  account?: string;
}

/** One step of a fault's `sequence`: its action, for `count` matching requests (1 unless given; the last step: until cleared). */
export interface FaultStep extends FaultAction {
  count?: number;
}

/** A fault injected through `POST /__sandbox/faults` or `sandbox.faults.<api>.arm()`. */
export interface FaultSpec extends FaultAction {
  /** Only requests to this operation; any operation of the API when absent. */
  operationId?: string;
  /** Only requests that match these conditions too. */
  when?: FaultMatch;
  /** How many matching requests get the fault. Default: 1 without `operationId`, unlimited with it. */
  count?: number;
  /**
   * Steps instead of one action: the first `count` matching requests get the first step, the next ones
   * the second, … (`[{ status: 503, count: 2 }, { pass: true }]`: fail two, then succeed).
   */
  sequence?: FaultStep[];
}

export interface Fault extends FaultSpec {
  id: number;
  /** Matching requests still to be hit by the current step; undefined = until cleared. */
  remaining?: number;
  /** The current step of its `sequence` (0 without one). */
  step: number;
}

/** What a fault matches against: known before the body is read (`early`), or once it is read and the credential checked. */
export interface FaultRequest {
  params: Record<string, unknown>;
  headers: Record<string, string | string[] | undefined>;
  body?: unknown;
  account?: string;
}

/** Whether `sub` is part of `value`: the same scalar, or each of its fields part of the same field. */
function partOf(sub: unknown, value: unknown): boolean {
  if (sub === null || typeof sub !== 'object' || Array.isArray(sub)) return JSON.stringify(sub) === JSON.stringify(value);
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  return Object.entries(sub as Record<string, unknown>).every(([k, v]) => partOf(v, (value as Record<string, unknown>)[k]));
}

const sameParam = (want: unknown, got: unknown) =>
  got !== undefined && (typeof want === 'object' && want !== null ? partOf(want, got) : String(want) === String(got));

/** Whether a fault needs the body or the account, known only once the body is read and the credential checked. */
export const matchesLate = (f: FaultSpec) => f.when?.body !== undefined || f.when?.account !== undefined;

function matches(f: Fault, operationId: string, r: FaultRequest): boolean {
  if (f.operationId !== undefined && f.operationId !== operationId) return false;
  const w = f.when;
  if (!w) return true;
  if (w.params && !Object.entries(w.params).every(([k, v]) => sameParam(v, r.params[k]))) return false;
  if (w.headers && !Object.entries(w.headers).every(([k, v]) => String(r.headers[k.toLowerCase()] ?? '') === v)) return false;
  if (w.account !== undefined && w.account !== r.account) return false;
  if (w.body !== undefined && !partOf(w.body, r.body)) return false;
  return true;
}

/** The faults of one API. Kept out of the state: a reset or a restart of the state does not clear them. */
export class FaultRegistry {
  private faults: Fault[] = [];
  private nextId = 1;

  get active(): boolean {
    return this.faults.length > 0;
  }

  /** Whether some fault waits for the body or the account. */
  get late(): boolean {
    return this.faults.some(matchesLate);
  }

  add(spec: FaultSpec): Fault {
    const first = spec.sequence?.[0];
    const remaining = first
      ? (first.count ?? (spec.sequence?.length === 1 ? undefined : 1))
      : (spec.count ?? (spec.operationId ? undefined : 1));
    const fault: Fault = { ...structuredClone(spec), id: this.nextId++, remaining, step: 0 };
    this.faults.push(fault);
    return fault;
  }

  list(): Fault[] {
    return this.faults.map((f) => structuredClone(f));
  }

  /** Disarms every fault (those `which` selects, when given); returns how many. */
  clear(which?: (f: Fault) => boolean): number {
    const n = this.faults.length;
    this.faults = which ? this.faults.filter((f) => !which(f)) : [];
    return n - this.faults.length;
  }

  /**
   * The action of the first fault that matches the request, used up by one (moving its sequence on);
   * `late`: only faults that need the body or the account, else only the others.
   */
  take(operationId: string, request: FaultRequest, late = false): (FaultAction & { id: number }) | undefined {
    const i = this.faults.findIndex((f) => matchesLate(f) === late && matches(f, operationId, request));
    if (i < 0) return undefined;
    const fault = this.faults[i] as Fault;
    const step: FaultAction = fault.sequence?.[fault.step] ?? fault;
    const action: FaultAction & { id: number } = {
      id: fault.id,
      ...(step.status !== undefined ? { status: step.status } : {}),
      ...(step.body !== undefined ? { body: step.body } : {}),
      ...(step.latency_ms !== undefined ? { latency_ms: step.latency_ms } : {}),
      ...(step.drop ? { drop: true } : {}),
      ...(step.pass ? { pass: true } : {}),
    };
    if (fault.remaining !== undefined) {
      fault.remaining -= 1;
      if (fault.remaining <= 0) {
        const next = fault.sequence?.[fault.step + 1];
        if (next) {
          fault.step += 1;
          const last = fault.step === (fault.sequence?.length ?? 0) - 1;
          fault.remaining = next.count ?? (last ? undefined : 1);
        } else this.faults.splice(i, 1);
      }
    }
    return action;
  }
}

/**
 * Acts out a fault on one request: after its latency, drops the connection, answers its status (with
 * its body, or a text or JSON one as the operation declares), or lets the request go on (`next`).
 */
export function runFault(
  op: OperationDef,
  fault: FaultAction & { id: number },
  req: FastifyRequest,
  reply: FastifyReply,
  next: () => void,
  textMedia?: string,
) {
  const act = () => {
    if (fault.pass) return next();
    if (fault.drop) {
      reply.hijack();
      // Over a socket the connection goes; a request served in process (sandbox.handle(), no socket)
      // has its answer destroyed, which rejects it.
      const socket = req.raw.socket as { destroy?: unknown } | undefined;
      if (typeof socket?.destroy === 'function') req.raw.socket.destroy();
      else reply.raw.destroy();
      return;
    }
    if (fault.status !== undefined) {
      const status = fault.status;
      if (status === 429 || status === 503) reply.header('Retry-After', '1');
      reply.code(status);
      if (typeof fault.body === 'string') return reply.type(textType(op, status, textMedia)).send(fault.body);
      if (fault.body !== undefined) return reply.send(fault.body);
      if (declaresOnlyText(op, status)) return reply.type(textType(op, status, textMedia)).send(`Injected fault ${fault.id}`);
      if (status === 204 || status === 304) return reply.send();
      return reply.send({ error: `Injected fault ${fault.id}` });
    }
    next();
  };
  // Unref'd: a fault still waiting when the sandbox closes does not hold the process.
  if (fault.latency_ms) setTimeout(act, fault.latency_ms).unref();
  else act();
}
