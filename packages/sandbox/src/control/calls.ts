import { type BodyAsSent, readAsSent } from '../router/bodies.js';
import { BODY_DEPTH_LIMIT } from '../router/depth.js';
import type { ApiName } from '../router/spec.js';

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
  /**
   * The body as sent: its text as the request sent it, read (as JSON, or as a form where the manager
   * reads forms) when the call is listed, fields the sandbox ignored included. Absent when there was none.
   */
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
const REDACTED_DEEP = `[redacted: nested deeper than ${BODY_DEPTH_LIMIT} levels]`;
const SECRET = /pass(word)?s?$|token|secret|^key$|api_?key|authorization|credential/i;

/**
 * A copy of `value` with every field whose name says it holds a secret replaced by `[redacted]`. What nests
 * deeper than a body may (BODY_DEPTH_LIMIT; a query's JSON is not bounded so) is not walked: it is
 * redacted whole (it was kept as it came past 32 levels, secrets and all).
 */
export function redact(value: unknown, depth = 0): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (depth > BODY_DEPTH_LIMIT) return REDACTED_DEEP;
  if (Array.isArray(value)) return value.map((v) => redact(v, depth + 1));
  // Keys, not entries: no pair made per field (a body may hold tens of thousands).
  const obj = value as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(obj)) {
    const v = obj[k];
    const copy = SECRET.test(k) && v != null ? REDACTED : redact(v, depth + 1);
    // A field named `__proto__` (JSON.parse makes it one) stays a field of the copy, not its prototype.
    if (k === '__proto__') Object.defineProperty(out, k, { value: copy, enumerable: true, writable: true, configurable: true });
    else out[k] = copy;
  }
  return out;
}

/**
 * The bytes of request bodies (as sent) the record of calls keeps at most: 10,000 calls of the manager's
 * 2 MB bodies would be 20 GB of text, more once parsed. Past it the oldest calls lose their bodies.
 */
export const CALL_BODY_BUDGET = 64 * 1024 * 1024;

/**
 * A call as it is recorded: its body's size as sent, when known (else its JSON's length); `body_text`,
 * the body's text as sent, which the record keeps instead of `body`: no copy is made while the call is
 * answered (a body of 60,000 fields took about 175 ms to copy and redact), and the handler may keep the
 * parsed body as its own (a port's configuration) without the record sharing it.
 */
export type CallToRecord = Omit<Call, 'seq' | 'body_dropped'> & { body_text?: BodyAsSent };

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
  /** The text as sent of the bodies kept as text (read and redacted by list()). */
  private readonly texts = new WeakMap<Call, BodyAsSent>();

  constructor(
    private readonly limit = 10_000,
    private readonly bodyBudget = CALL_BODY_BUDGET,
  ) {}

  record(call: CallToRecord): Call {
    const { body_text: text, body, ...rest } = call;
    const size =
      text !== undefined
        ? (call.body_size ?? Buffer.byteLength(text.text))
        : body === undefined
          ? undefined
          : (call.body_size ?? JSON.stringify(body)?.length ?? 0);
    const c: Call = {
      seq: ++this.seq,
      ...rest,
      params: redact(call.params) as Record<string, unknown>,
      ...(text === undefined && body !== undefined ? { body: redact(body) } : {}),
      ...(size !== undefined ? { body_size: size } : {}),
    };
    if (text !== undefined) this.texts.set(c, text);
    this.calls.push(c);
    this.bodyBytes += size ?? 0;
    // Trimmed in steps of a tenth, not one call at a time (each cut moves the whole array).
    if (this.calls.length > this.limit + Math.ceil(this.limit / 10)) {
      const cut = this.calls.length - this.limit;
      for (const gone of this.calls.slice(this.firstBody, cut)) if (this.hasBody(gone)) this.bodyBytes -= gone.body_size ?? 0;
      this.calls.splice(0, cut);
      this.firstBody = Math.max(0, this.firstBody - cut);
    }
    while (this.bodyBytes > this.bodyBudget && this.firstBody < this.calls.length) {
      const old = this.calls[this.firstBody++] as Call;
      if (!this.hasBody(old)) continue;
      this.bodyBytes -= old.body_size ?? 0;
      delete old.body;
      this.texts.delete(old);
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
      .map((c) => {
        const copy = structuredClone(c);
        const text = this.texts.get(c);
        if (text !== undefined) copy.body = redact(readAsSent(text));
        return copy;
      });
  }

  private hasBody(c: Call): boolean {
    return c.body !== undefined || this.texts.has(c);
  }

  /** Forgets every call (of one account when given); returns how many. */
  clear(account?: string): number {
    const before = this.calls.length;
    this.calls = account === undefined ? [] : this.calls.filter((c) => c.account !== account);
    this.firstBody = 0;
    this.bodyBytes = this.calls.reduce((n, c) => n + (this.hasBody(c) ? (c.body_size ?? 0) : 0), 0);
    return before - this.calls.length;
  }
}
