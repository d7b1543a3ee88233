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
