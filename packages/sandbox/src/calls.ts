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
  /** The body's size as sent, in bytes (absent when there was none). */
  body_size?: number;
  /**
   * Why `body` is absent although one was sent: the record keeps `CALL_BODY_BUDGET` bytes of bodies,
   * and lets go of the oldest calls' bodies first (the call itself stays).
   */
  body_dropped?: string;
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
  // Keys, not entries: no pair made per field (a body may hold tens of thousands).
  const obj = value as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(obj)) {
    const v = obj[k];
    out[k] = SECRET.test(k) && v != null ? REDACTED : redact(v, depth + 1);
  }
  return out;
}

/**
 * The bytes of request bodies (as sent) the record of calls keeps at most: 10,000 calls of the manager's
 * 2 MB bodies would be 20 GB of text, more once parsed. Past it the oldest calls lose their bodies.
 */
export const CALL_BODY_BUDGET = 64 * 1024 * 1024;

/** A call as it is recorded: its body's size as sent, when known (else its JSON's length). */
export type CallToRecord = Omit<Call, 'seq' | 'body_dropped'>;

/**
 * The record of calls, the oldest dropped beyond `limit` (10 000 by default, up to a tenth more between
 * cuts), and the oldest bodies dropped beyond `bodyBudget` bytes (each such call says so in `body_dropped`).
 */
export class CallLog {
  private calls: Call[] = [];
  private seq = 0;
  /** Bytes of the bodies kept, and the index in `calls` before which none is. */
  private bodyBytes = 0;
  private firstBody = 0;

  constructor(
    private readonly limit = 10_000,
    private readonly bodyBudget = CALL_BODY_BUDGET,
  ) {}

  record(call: CallToRecord): Call {
    const size = call.body === undefined ? undefined : (call.body_size ?? JSON.stringify(call.body)?.length ?? 0);
    const c: Call = {
      seq: ++this.seq,
      ...call,
      params: redact(call.params) as Record<string, unknown>,
      ...(call.body !== undefined ? { body: redact(call.body), body_size: size } : {}),
    };
    this.calls.push(c);
    this.bodyBytes += size ?? 0;
    // Trimmed in steps of a tenth, not one call at a time (each cut moves the whole array).
    if (this.calls.length > this.limit + Math.ceil(this.limit / 10)) {
      const cut = this.calls.length - this.limit;
      for (const gone of this.calls.slice(this.firstBody, cut)) if (gone.body !== undefined) this.bodyBytes -= gone.body_size ?? 0;
      this.calls.splice(0, cut);
      this.firstBody = Math.max(0, this.firstBody - cut);
    }
    while (this.bodyBytes > this.bodyBudget && this.firstBody < this.calls.length) {
      const old = this.calls[this.firstBody++] as Call;
      if (old.body === undefined) continue;
      this.bodyBytes -= old.body_size ?? 0;
      delete old.body;
      old.body_dropped = `the record of calls keeps ${this.bodyBudget} bytes of request bodies, the newest: this body of ${old.body_size} bytes was let go of`;
    }
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
    this.firstBody = 0;
    this.bodyBytes = this.calls.reduce((n, c) => n + (c.body !== undefined ? (c.body_size ?? 0) : 0), 0);
    return before - this.calls.length;
  }
}
