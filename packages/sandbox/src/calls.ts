import type { ApiName } from './router/spec.js';

// The calls a sandbox received, per API, account and operation, so that a test asserts what its code
// sent (WireMock's verify, MSW's request events). Credentials never enter the record: no header is
// kept, and any field of the params or body whose name says it holds a secret is redacted.

/** One call as the sandbox received and answered it. */
export interface Call {
  /** Order of arrival in this sandbox (1, 2, …). */
  seq: number;
  api: ApiName;
  operationId: string;
  /** The customer the credential belongs to (the manager API: the manager's customer). */
  account: string;
  method: string;
  /** The path as sent, without the query. */
  path: string;
  /** Path and query parameters as the operation read them (JSON-in-query parsed). */
  params: Record<string, unknown>;
  /** The JSON body as parsed; absent when there was none. */
  body?: unknown;
  status: number;
  /** When the call arrived, on the sandbox's clock (ISO 8601). */
  time: string;
  /** How long the answer took, in milliseconds. */
  duration_ms: number;
  /** The injected fault that answered it, if any. */
  fault?: number;
}

export interface CallFilter {
  api?: ApiName;
  operationId?: string;
  account?: string;
  method?: string;
  status?: number;
  /** Only calls after this `seq`. */
  after?: number;
}

export const REDACTED = '[redacted]';
const SECRET = /pass(word)?s?$|token|secret|^key$|api_?key|authorization|credential/i;

/** A copy of `value` with every field whose name says it holds a secret replaced by `[redacted]`. */
export function redact(value: unknown, depth = 0): unknown {
  if (depth > 32 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((v) => redact(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>))
    out[k] = SECRET.test(k) && v != null ? REDACTED : redact(v, depth + 1);
  return out;
}

/** The record of calls, the oldest dropped beyond `limit` (10 000 by default, up to a tenth more between cuts). */
export class CallLog {
  private calls: Call[] = [];
  private seq = 0;

  constructor(private readonly limit = 10_000) {}

  record(call: Omit<Call, 'seq'>): Call {
    const c = {
      seq: ++this.seq,
      ...call,
      params: redact(call.params) as Record<string, unknown>,
      ...(call.body !== undefined ? { body: redact(call.body) } : {}),
    };
    this.calls.push(c);
    // Trimmed in steps of a tenth, not one call at a time (each cut moves the whole array).
    if (this.calls.length > this.limit + Math.ceil(this.limit / 10)) this.calls.splice(0, this.calls.length - this.limit);
    return c;
  }

  list(filter: CallFilter = {}): Call[] {
    return this.calls
      .filter(
        (c) =>
          (filter.api === undefined || c.api === filter.api) &&
          (filter.operationId === undefined || c.operationId === filter.operationId) &&
          (filter.account === undefined || c.account === filter.account) &&
          (filter.method === undefined || c.method === filter.method.toUpperCase()) &&
          (filter.status === undefined || c.status === filter.status) &&
          (filter.after === undefined || c.seq > filter.after),
      )
      .map((c) => structuredClone(c));
  }

  /** Forgets every call (of one account when given); returns how many. */
  clear(account?: string): number {
    const before = this.calls.length;
    this.calls = account === undefined ? [] : this.calls.filter((c) => c.account !== account);
    return before - this.calls.length;
  }
}
