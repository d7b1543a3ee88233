import type { components } from '@zone-api/spec/sandbox-control';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { declaresOnlyText, textType } from './answers.js';
import type { OperationDef } from './spec.js';

// The fault vocabulary is the control API's (specs/sandbox-control: FaultActionFields names the kinds of
// action, FaultSpec a fault as `POST /__sandbox/faults` takes it): these are its generated types, and
// the kinds' behaviour below is a table keyed by them, so that a kind added to the spec does not
// compile until it acts.
type Schemas = components['schemas'];
/** What a fault does to a request it matches: answer a status (with a body), wait, drop the connection, or let it through. */
export type FaultAction = Schemas['FaultActionFields'];
/** Which requests a fault takes, beyond its operation. */
export type FaultMatch = Schemas['FaultMatch'];
/** One step of a fault's `sequence`. */
export type FaultStep = Schemas['FaultStep'];
/** A fault injected through `POST /__sandbox/faults` or `sandbox.faults.<api>.arm()`. */
export type FaultSpec = Schemas['FaultSpec'];
/** An armed fault: its spec, id, current step and what that step has left. */
export type Fault = Schemas['Fault'];
/** The action a fault takes on one request, and which fault it is. */
export type TakenFault = FaultAction & { id: number };

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
  take(operationId: string, request: FaultRequest, late = false): TakenFault | undefined {
    const i = this.faults.findIndex((f) => matchesLate(f) === late && matches(f, operationId, request));
    if (i < 0) return undefined;
    const fault = this.faults[i] as Fault;
    const step: FaultAction = fault.sequence?.[fault.step] ?? fault;
    const action: TakenFault = { id: fault.id, ...actionOf(step) };
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

/** One request a fault acts on. */
interface Exchange {
  op: OperationDef;
  fault: TakenFault;
  req: FastifyRequest;
  reply: FastifyReply;
  /** Runs the operation. */
  next: () => void;
  textMedia: string | undefined;
}

/** What one kind of action does: answers (or drops, or lets the request through), or hands on to the next kind (`go`). */
type Act = (x: Exchange, go: () => void) => void;

/** Answers the fault's status: its body, or a text or JSON error as the operation declares that status. */
function answer(x: Exchange, status: number): void {
  const { op, fault, reply, textMedia } = x;
  if (status === 429 || status === 503) reply.header('Retry-After', '1');
  reply.code(status);
  if (typeof fault.body === 'string') reply.type(textType(op, status, textMedia)).send(fault.body);
  else if (fault.body !== undefined) reply.send(fault.body);
  else if (declaresOnlyText(op, status)) reply.type(textType(op, status, textMedia)).send(`Injected fault ${fault.id}`);
  else if (status === 204 || status === 304) reply.send();
  else reply.send({ error: `Injected fault ${fault.id}` });
}

/**
 * What each kind of action the spec defines does, in the order they act; after the last, the operation
 * runs. Keyed by the generated `FaultActionFields`: a kind the spec gains fails to compile here.
 */
const ACTS: { readonly [K in keyof FaultAction]-?: Act } = {
  // Unref'd: a fault still waiting when the sandbox closes does not hold the process.
  latency_ms: (x, go) => {
    if (x.fault.latency_ms) setTimeout(go, x.fault.latency_ms).unref();
    else go();
  },
  pass: (x, go) => (x.fault.pass ? x.next() : go()),
  drop: (x, go) => {
    if (!x.fault.drop) return go();
    x.reply.hijack();
    // Over a socket the connection goes; a request served in process (sandbox.handle(), no socket)
    // has its answer destroyed, which rejects it.
    const socket = x.req.raw.socket as { destroy?: unknown } | undefined;
    if (typeof socket?.destroy === 'function') x.req.raw.socket.destroy();
    else x.reply.raw.destroy();
  },
  status: (x, go) => (x.fault.status !== undefined ? answer(x, x.fault.status) : go()),
  // Sent with `status`; alone it does nothing.
  body: (_x, go) => go(),
};
const KINDS = Object.keys(ACTS) as (keyof FaultAction)[];

/** The action of a fault or of one of its steps: the kinds it gives (a `drop: false` gives none). */
function actionOf(step: FaultAction): FaultAction {
  const out: Partial<Record<keyof FaultAction, unknown>> = {};
  for (const kind of KINDS) if (step[kind] !== undefined && step[kind] !== false) out[kind] = step[kind];
  return out as FaultAction;
}

/**
 * Acts out a fault on one request: each kind of its action in turn (ACTS), then the operation (`next`)
 * when none answered.
 */
export function runFault(
  op: OperationDef,
  fault: TakenFault,
  req: FastifyRequest,
  reply: FastifyReply,
  next: () => void,
  textMedia?: string,
) {
  const x: Exchange = { op, fault, req, reply, next, textMedia };
  const act = (i: number): void => {
    const kind = KINDS[i];
    if (kind === undefined) next();
    else ACTS[kind](x, () => act(i + 1));
  };
  act(0);
}
