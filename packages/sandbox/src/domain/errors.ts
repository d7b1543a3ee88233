/** One problem of a refused change: the item of the list it was given (its index), when one is at fault, and why. */
export interface Problem {
  item?: number;
  reason: string;
}

/**
 * A change the domain refuses, raised before anything changed. It knows nothing of requests: the
 * handler that asked for the change names the request field each problem came from (`fieldErrors`).
 */
export class DomainError extends Error {
  constructor(readonly problems: readonly Problem[]) {
    super(problems.map((p) => p.reason).join('; '));
  }
}
