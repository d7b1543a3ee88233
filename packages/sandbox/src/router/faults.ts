import type { FastifyReply, FastifyRequest } from 'fastify';
import { declaresOnlyText, textType } from './answers.js';
import type { OperationDef } from './spec.js';

/** A fault injected through `POST /__sandbox/faults`. */
export interface FaultSpec {
  /** Only requests to this operation; any operation of the API when absent. */
  operationId?: string;
  /** How many matching requests get the fault. Default: 1 without `operationId`, unlimited with it. */
  count?: number;
  /** Answer with this status instead of running the operation. */
  status?: number;
  /** Body sent with `status` (JSON, or a string sent as text/plain); an `Error` body by default. */
  body?: unknown;
  /** Delay before answering (or before running the operation, when no `status` or `drop` is given). */
  latency_ms?: number;
  /** Destroy the connection without an answer. */
  drop?: boolean;
}

export interface Fault extends FaultSpec {
  id: number;
  /** Matching requests still to be hit; undefined = until cleared. */
  remaining?: number;
}

/** The faults of one API. Kept out of the state: a reset or a restart of the state does not clear them. */
export class FaultRegistry {
  private faults: Fault[] = [];
  private nextId = 1;

  get active(): boolean {
    return this.faults.length > 0;
  }

  add(spec: FaultSpec): Fault {
    const remaining = spec.count ?? (spec.operationId ? undefined : 1);
    const fault: Fault = { ...spec, id: this.nextId++, remaining };
    this.faults.push(fault);
    return fault;
  }

  list(): Fault[] {
    return this.faults.map((f) => ({ ...f }));
  }

  clear(): number {
    const n = this.faults.length;
    this.faults = [];
    return n;
  }

  /** The first fault that matches `operationId`, used up by one. */
  take(operationId: string): Fault | undefined {
    const i = this.faults.findIndex((f) => f.operationId === undefined || f.operationId === operationId);
    if (i < 0) return undefined;
    const fault = this.faults[i] as Fault;
    if (fault.remaining !== undefined) {
      fault.remaining -= 1;
      if (fault.remaining <= 0) this.faults.splice(i, 1);
    }
    return fault;
  }
}

/**
 * Acts out a fault on one request: after its latency, drops the connection, answers its status (with
 * its body, or a text or JSON one as the operation declares), or lets the request go on (`next`).
 */
export function runFault(op: OperationDef, fault: Fault, req: FastifyRequest, reply: FastifyReply, next: () => void, textMedia?: string) {
  const act = () => {
    if (fault.drop) {
      reply.hijack();
      req.raw.socket.destroy();
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
  if (fault.latency_ms) setTimeout(act, fault.latency_ms);
  else act();
}
