import { DEFAULT_BRAND } from '@zone-api/manager-client';
import {
  type ApiName,
  Conformance,
  operations as listOperations,
  loadBundle,
  type OpenApiDoc,
  type Operation,
  type ProblemKind,
  parameterExample,
  type RateLimit,
  rateLimits,
} from '@zone-api/spec/model';
import { Redactor } from './redact.js';
import { type AnswerShape, compareShapes, type Difference, type ReferenceAnswers, shapeOf } from './reference.js';

// One probe run: the operations of a bundle that only read (or all, when asked), each called once
// against a team's own service, each answer held to the bundle, and the run kept for a report.

/** What the probe found wrong: the bundle's problem kinds, a credential sent back, or no answer at all. */
export type FindingKind = Exclude<ProblemKind, 'no-operation'> | 'secret-in-answer' | 'no-answer';

export interface Finding {
  kind: FindingKind;
  operationId: string;
  message: string;
}

export interface Exchange {
  operationId: string;
  method: string;
  /** The operation's path in the spec (`/api/zone`). */
  path: string;
  /** The path and query sent. */
  sent: string;
  /** 0 when no answer came. */
  status: number;
  media: string | null;
  ms: number;
  findings: Finding[];
  headers: Record<string, string>;
  /** The body (JSON written anew), or the error when no answer came; a report keeps `BODY_KEPT` characters of it, cut after redaction. */
  body: string;
}

export interface Skipped {
  operationId: string;
  reason: string;
}

export interface ProbeOptions {
  api: ApiName;
  /** Where the service is. There is no default: the probe reaches only what it is told to. */
  baseUrl: string;
  /** The account API token (`Authorization: Bearer`). */
  token?: string;
  /** HTTP basic credentials (deprecated by the provider, still accepted). */
  basic?: { user: string; password: string };
  /** The value of an `apiKey` scheme's header: the Zone credential (account), the manager token (manager). */
  apiKey?: string;
  /** The account id, sent where an operation takes `customer`. */
  customer?: string;
  /**
   * The brand word of paths whose prefix stands for the program's brand (`x-brand-prefix`: `/api/pm_users`);
   * default for the manager: the real program's (`lpm`, the manager client's default). A mock of the spec serves `pm`.
   */
  brand?: string;
  /** Parameter values by name (`zone`, `port`, …), in place of the spec's examples. */
  params?: Record<string, string>;
  /** Only these operations (operationIds), of those the probe may call. */
  only?: string[];
  /** Call the operations that change state or cost money too (`x-changes-state`, or a method that is not GET/HEAD). */
  allowWrites?: boolean;
  /** At most this many requests a minute; below the bundle's strictest `x-rate-limits` (default: half of it). */
  maxPerMinute?: number;
  /** Give up on an answer after this long (default 30 s). */
  timeoutMs?: number;
  /** The bundle (default: the one `@zone-api/spec` ships for `api`). */
  doc?: OpenApiDoc;
  /** What a known version answered, compared answer by answer (the manager: 1.570.247). */
  reference?: ReferenceAnswers;
  fetch?: typeof globalThis.fetch;
  sleep?: (ms: number) => Promise<void>;
  now?: () => number;
}

export interface ProbeResult {
  api: ApiName;
  baseUrl: string;
  specVersion: string;
  /** The version whose answers were compared (`reference`), if any. */
  referenceVersion?: string;
  startedAt: string;
  maxPerMinute?: number;
  rateLimit?: RateLimit;
  exchanges: Exchange[];
  findings: Finding[];
  skipped: Skipped[];
  differences: Difference[];
  /** Every secret given or seen; the report is redacted with it. */
  redactor: Redactor;
}

/** How much of a body a report keeps. */
export const BODY_KEPT = 2000;
const MAX_RETRY_AFTER_S = 120;

/** A JSON body written anew (`\u` escapes and all spaces gone), so that the report holds each value in one form; any other body as it came. */
function normalised(body: string): string {
  try {
    return JSON.stringify(JSON.parse(body));
  } catch {
    return body;
  }
}

/** Read-only: a safe method (GET, HEAD) and, per the spec, no change to the server's state. */
export const readsOnly = (op: Operation): boolean => (op.method === 'get' || op.method === 'head') && !op.facts.changesState;

const text = (v: unknown, json: boolean) => (typeof v === 'string' && !json ? v : json ? JSON.stringify(v) : String(v));

type Built = { path: string; sent: string; init: RequestInit } | { skip: string };

/** The request for one operation, or why it cannot be made. */
function build(doc: OpenApiDoc, op: Operation, o: ProbeOptions): Built {
  const prefix = op.facts.brandPrefix;
  const brand = o.brand ?? (o.api === 'manager' ? DEFAULT_BRAND : undefined);
  let path = prefix && brand ? op.path.replace(`/${prefix}_`, `/${brand}_`) : op.path;
  const query = new URLSearchParams();
  const headers = new Headers();
  for (const p of op.parameters) {
    // Every parameter with an example, as the spec's code samples send them (the ordinary call), unless given.
    const given = o.params?.[p.name] ?? (p.name === 'customer' ? o.customer : undefined);
    const value = given ?? parameterExample(p)?.value;
    if (value === undefined) {
      if (p.required) return { skip: `no value for its required ${p.in} parameter \`${p.name}\` (give one with --param ${p.name}=…)` };
      continue;
    }
    const json = p.content !== undefined && typeof value !== 'string';
    if (p.in === 'path') path = path.replace(`{${p.name}}`, encodeURIComponent(text(value, json)));
    else if (p.in === 'query') {
      if (Array.isArray(value) && !json) for (const v of value) query.append(p.name, text(v, false));
      else query.append(p.name, text(value, json));
    } else if (p.in === 'header') headers.set(p.name, text(value, json));
  }
  const credential = authorise(doc, op, o, headers);
  if (credential) return { skip: credential };
  let body: string | undefined;
  if (op.requestBody) {
    const media = op.requestBody.media[0];
    const example = media ? op.requestBody.content[media]?.examples[0] : undefined;
    if (example === undefined) {
      if (op.requestBody.required) return { skip: 'no example of its request body in the spec' };
    } else if (media) {
      headers.set('content-type', media);
      body =
        media === 'application/x-www-form-urlencoded'
          ? new URLSearchParams(example as Record<string, string>).toString()
          : typeof example === 'string'
            ? example
            : JSON.stringify(example);
    }
  }
  const qs = query.toString();
  const sent = `${path}${qs ? `?${qs}` : ''}`;
  return { path, sent, init: { method: op.method.toUpperCase(), headers, ...(body !== undefined ? { body } : {}) } };
}

/** Sets the credential of the first security requirement the options can meet; else says which is missing. */
function authorise(doc: OpenApiDoc, op: Operation, o: ProbeOptions, headers: Headers): string | undefined {
  if (!op.security.length) return undefined;
  const schemes = doc.components?.securitySchemes ?? {};
  for (const requirement of op.security) {
    const set: Array<[string, string]> = [];
    let met = true;
    for (const name of Object.keys(requirement)) {
      const s = schemes[name];
      if (s?.type === 'http' && /^bearer$/i.test(s.scheme) && o.token) set.push(['authorization', `Bearer ${o.token}`]);
      else if (s?.type === 'http' && /^basic$/i.test(s.scheme) && o.basic)
        set.push(['authorization', `Basic ${Buffer.from(`${o.basic.user}:${o.basic.password}`).toString('base64')}`]);
      else if (s?.type === 'apiKey' && s.in === 'header' && o.apiKey) set.push([s.name, o.apiKey]);
      else met = false;
    }
    if (met) {
      for (const [h, v] of set) headers.set(h, v);
      return undefined;
    }
  }
  return `none of its credentials given (${op.credentials.join(', ')}: --token, --basic or --api-key)`;
}

/** The requests a minute the probe allows itself, checked against the bundle's strictest limit. */
export function pace(doc: OpenApiDoc, maxPerMinute?: number): { perMinute?: number; limit?: RateLimit } {
  const limit = rateLimits(doc)[0];
  const ceiling = limit ? (limit.requests * 60) / limit.perSeconds : undefined;
  if (maxPerMinute !== undefined && (!Number.isFinite(maxPerMinute) || maxPerMinute <= 0))
    throw new Error(`--max-per-minute must be a positive number, not ${maxPerMinute}`);
  if (ceiling !== undefined && maxPerMinute !== undefined && maxPerMinute >= ceiling)
    throw new Error(
      `--max-per-minute ${maxPerMinute} is not below the documented limit of ${ceiling} requests a minute (${limit?.appliesTo}); the probe stays under it`,
    );
  const perMinute = maxPerMinute ?? (ceiling !== undefined ? Math.max(1, Math.floor(ceiling / 2)) : undefined);
  return { ...(perMinute !== undefined ? { perMinute } : {}), ...(limit ? { limit } : {}) };
}

/** Runs the probe: each chosen operation called once, in the bundle's order, paced, every answer checked. */
export async function runProbe(o: ProbeOptions): Promise<ProbeResult> {
  const base = new URL(o.baseUrl);
  if (base.protocol !== 'http:' && base.protocol !== 'https:') throw new Error(`--base-url must be http(s), not ${base.protocol}`);
  // Said without the URL: it holds them.
  if (base.username || base.password)
    throw new Error('--base-url must not carry credentials: give them with --basic, --token or --api-key');
  const doc = o.doc ?? loadBundle(o.api);
  const conformance = new Conformance(doc, { undeclaredFields: true });
  const doFetch = o.fetch ?? globalThis.fetch;
  const now = o.now ?? Date.now;
  const sleep = o.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const { perMinute, limit } = pace(doc, o.maxPerMinute);
  const interval = perMinute ? 60_000 / perMinute : 0;
  const redactor = new Redactor();
  redactor.add(o.token, 'token');
  redactor.add(o.apiKey, 'credential');
  redactor.learnText(o.apiKey ?? '');
  redactor.add(o.customer, 'customer');
  if (o.basic) redactor.addBasic(o.basic.user, o.basic.password);
  // The credentials the probe sends: none of them may come back in an answer.
  const sentSecrets = [
    o.token,
    o.apiKey,
    o.basic?.password,
    o.basic && Buffer.from(`${o.basic.user}:${o.basic.password}`).toString('base64'),
  ].filter((s): s is string => typeof s === 'string' && s.length >= 3);

  const result: ProbeResult = {
    api: o.api,
    baseUrl: o.baseUrl,
    specVersion: String(doc.info?.version ?? ''),
    ...(o.reference ? { referenceVersion: o.reference.program.version } : {}),
    startedAt: new Date(now()).toISOString(),
    ...(perMinute !== undefined ? { maxPerMinute: perMinute } : {}),
    ...(limit ? { rateLimit: limit } : {}),
    exchanges: [],
    findings: [],
    skipped: [],
    differences: [],
    redactor,
  };
  const only = o.only ? new Set(o.only) : undefined;
  const known = new Set(listOperations(doc).map((op) => op.operationId));
  for (const id of only ?? []) if (!known.has(id)) result.skipped.push({ operationId: id, reason: 'no such operation in the bundle' });
  let next = now();
  for (const op of listOperations(doc)) {
    if (only && !only.has(op.operationId)) continue;
    if (!o.allowWrites && !readsOnly(op)) {
      result.skipped.push({ operationId: op.operationId, reason: 'changes state or is not a GET (--allow-writes to include it)' });
      continue;
    }
    const built = build(doc, op, o);
    if ('skip' in built) {
      result.skipped.push({ operationId: op.operationId, reason: built.skip });
      continue;
    }
    const wait = next - now();
    if (wait > 0) await sleep(wait);
    const started = now();
    next = started + interval;
    const exchange: Exchange = {
      operationId: op.operationId,
      method: op.method.toUpperCase(),
      path: op.path,
      sent: built.sent,
      status: 0,
      media: null,
      ms: 0,
      findings: [],
      headers: {},
      body: '',
    };
    const url = new URL(built.sent.replace(/^\//, ''), base.href.endsWith('/') ? base.href : `${base.href}/`);
    try {
      // Never follow a redirect: it could carry the credential to another origin.
      const res = await doFetch(url, { ...built.init, redirect: 'manual', signal: AbortSignal.timeout(o.timeoutMs ?? 30_000) });
      const body = await res.text();
      exchange.status = res.status;
      exchange.media = res.headers.get('content-type');
      res.headers.forEach((v, k) => {
        exchange.headers[k] = v;
      });
      exchange.body = normalised(body);
      redactor.learnHeaders(exchange.headers);
      redactor.learnBody(body);
      for (const p of conformance.problems(exchange.method, built.path, res.status, exchange.media, body)) {
        // The probe calls the spec's own paths: `no-operation` cannot come.
        exchange.findings.push({ kind: p.kind as FindingKind, operationId: op.operationId, message: p.message });
      }
      for (const secret of sentSecrets) {
        const where = [
          ...Object.entries(exchange.headers)
            .filter(([, v]) => Redactor.holds(v, secret))
            .map(([k]) => `header ${k}`),
          ...(Redactor.holds(body, secret) ? ['body'] : []),
        ];
        if (where.length)
          exchange.findings.push({
            kind: 'secret-in-answer',
            operationId: op.operationId,
            message: `${exchange.method} ${op.path} ${op.operationId} ${res.status}: the answer sends back a credential the probe sent (${where.join(', ')})`,
          });
      }
      if (o.reference) {
        result.differences.push(...compareShapes(o.reference, op.operationId, shapeOf(res.status, exchange.media, body)));
      }
      if (res.status === 429) {
        const after = Number(res.headers.get('retry-after'));
        next = Math.max(next, now() + 1000 * Math.min(MAX_RETRY_AFTER_S, Number.isFinite(after) && after > 0 ? after : 60));
      }
    } catch (err) {
      const e = err as Error & { cause?: Error };
      exchange.body = `${e.name}: ${e.message}${e.cause?.message ? ` (${e.cause.message})` : ''}`;
      exchange.findings.push({
        kind: 'no-answer',
        operationId: op.operationId,
        message: `${exchange.method} ${op.path} ${op.operationId}: no answer: ${exchange.body}`,
      });
    }
    exchange.ms = now() - started;
    result.exchanges.push(exchange);
    result.findings.push(...exchange.findings);
  }
  return result;
}

export type { AnswerShape, Difference, ReferenceAnswers };
