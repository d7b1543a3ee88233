import { request as httpRequest } from 'node:http';
import type { Conformance } from '@zone-api/spec/model';
import { type NormaliseContext, normalise, normaliseText, shape } from './normalise.js';
import { PORT_SLOTS, type Step, type StepBody, TARGET_PORT, WWW_PORT } from './steps.js';

// Playing a sequence against one manager (the real one or the sandbox) from its start state: each
// step's answer, then the state read back through the API (the fingerprint), normalised.

// biome-ignore lint/suspicious/noExplicitAny: answers are walked generically
type Json = any;

export interface Target {
  name: string;
  /** The manager API, e.g. http://127.0.0.1:22999. */
  url: string;
  wwwPort: number;
  /** Back to the start state; throws when it cannot get there. */
  reset(): Promise<void>;
}

export interface Answer {
  status: number;
  /** Media type without parameters; null when the answer had no Content-Type. */
  media: string | null;
  kind: 'none' | 'json' | 'text' | 'html page' | 'broken json' | 'no answer';
  /** For json: the normalised body's shape; for text: the normalised text. */
  shape?: Json;
  text?: string;
  /** For json: the normalised body (reported, not compared). */
  value?: Json;
}

/** The state read through the API after a step: named parts, each normalised. */
export type Fingerprint = Record<string, Json>;

/** A real answer that does not validate against the bundle: the operation it answers, and why. */
export interface Violation {
  operation: string;
  problem: string;
}

export interface Played {
  answers: Answer[];
  /** fingerprints[0] is the start state; fingerprints[i + 1] follows step i. */
  fingerprints: Fingerprint[];
  /** With `spec`: the answers that did not validate, as fingerprints (violations[i + 1]: step i's answer and the reads after it). */
  violations: Violation[][];
}

/** Where a player hands each answer it reads, raw, to be held to the spec. */
type Seen = (method: string, url: string, status: number, contentType: string | null, text: string) => void;

/** Log filters read into the fingerprint: no filter, each alone, and together. */
export const LOG_FILTERS = [
  '',
  'limit=2',
  'skip=1',
  'sort=status_code&sort_desc=1',
  'port_from=24000&port_to=24001',
  'status_code=2**',
  'search=status',
  'port_from=24001&port_to=24002&status_code=404&sort=url',
  'port=24000',
  'content_type=xhr',
  'protocol=http&sort=url',
  'search=t&content_type=other&port_from=24000&port_to=24001&port=24001',
];

/** Parts of the fingerprint read through routes the seed does not list; compared when both targets serve them. */
export const EXTRA_ROUTES = {
  bans: (port: number) => `/api/banlist/${port}?full=true`,
  sessions: (port: number) => `/api/sessions/${port}`,
};

/** A body as it goes on the wire: its Content-Type and text, stand-ins resolved (left in without `ctx`). */
export function encodeBody(body: StepBody, ctx?: NormaliseContext): { type: string; text: string } {
  const resolve = (s: string) =>
    ctx ? s.replaceAll(`"${WWW_PORT}"`, String(ctx.wwwPort)).replaceAll(`"${TARGET_PORT}"`, String(ctx.targetPort)) : s;
  switch (body.encoding) {
    case 'bad-json':
      return { type: 'application/json', text: String(body.value) };
    case 'text':
      return { type: 'text/plain', text: resolve(JSON.stringify(body.value)) };
    case 'form':
      return { type: 'application/x-www-form-urlencoded', text: formEncode(JSON.parse(resolve(JSON.stringify(body.value)))) };
    default:
      return { type: 'application/json', text: resolve(JSON.stringify(body.value)) };
  }
}

/** `a[b][0]=c`, as browsers and qs write nested form fields. */
function formEncode(value: Json, prefix = ''): string {
  if (value === null || typeof value !== 'object')
    return prefix ? `${encodeURIComponent(prefix)}=${encodeURIComponent(String(value))}` : encodeURIComponent(String(value));
  return Object.entries(value)
    .map(([k, x]) => formEncode(x, prefix ? `${prefix}[${k}]` : k))
    .filter(Boolean)
    .join('&');
}

/** The URL path and query of a call step. */
export function callPath(step: Extract<Step, { kind: 'call' }>): string {
  const q = new URLSearchParams(step.query).toString();
  return q ? `${step.path}?${q}` : step.path;
}

async function answerOf(res: Response | undefined, ctx: NormaliseContext, seen?: (res: Response, text: string) => void): Promise<Answer> {
  if (!res) return { status: 0, media: null, kind: 'no answer' };
  const media = res.headers.get('content-type')?.split(';')[0]?.trim().toLowerCase() ?? null;
  const text = await res.text();
  seen?.(res, text);
  if (text === '') return { status: res.status, media, kind: 'none' };
  if (media && /json/.test(media)) {
    try {
      const value = normalise(JSON.parse(text), ctx);
      return { status: res.status, media, kind: 'json', shape: shape(value), value };
    } catch {
      return { status: res.status, media, kind: 'broken json', text: normaliseText(text.slice(0, 300), ctx) };
    }
  }
  if (/^\s*<(!doctype|html)/i.test(text)) return { status: res.status, media, kind: 'html page' };
  return { status: res.status, media, kind: 'text', text: normaliseText(text.slice(0, 300), ctx) };
}

const TIMEOUT_MS = 10_000;

async function fetchOrNothing(url: string, init: RequestInit = {}): Promise<Response | undefined> {
  try {
    return await fetch(url, { ...init, signal: AbortSignal.timeout(TIMEOUT_MS) });
  } catch {
    return undefined;
  }
}

/** One request through a proxy port to the target (absolute-URI form); status 0 when the connection fails. */
export function throughPort(port: number, url: string): Promise<Answer> {
  return new Promise((resolve) => {
    const req = httpRequest(
      { host: '127.0.0.1', port, method: 'GET', path: url, headers: { host: new URL(url).host }, agent: false },
      (res) => {
        let text = '';
        res.on('data', (c) => {
          text += c;
        });
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            media: res.headers['content-type']?.split(';')[0]?.trim().toLowerCase() ?? null,
            kind: 'text',
            text: text.slice(0, 300),
          }),
        );
      },
    );
    req.setTimeout(TIMEOUT_MS, () => req.destroy(new Error('timeout')));
    req.on('error', (err) => resolve({ status: 0, media: null, kind: 'no answer', text: (err as NodeJS.ErrnoException).code ?? 'error' }));
    req.end();
  });
}

/** How many requests the target's log holds (undefined when it does not answer with a log). */
async function loggedCount(target: Target): Promise<number | undefined> {
  const res = await fetchOrNothing(`${target.url}/api/logs?limit=1`);
  if (res?.status !== 200) return undefined;
  try {
    return (JSON.parse(await res.text()) as { total?: number }).total;
  } catch {
    return undefined;
  }
}

/** How long a traffic step waits for its request to show in the log (a request the log never takes costs this). */
export const SETTLE_MS = 1000;

/** Plays one step (`seen`: each answer of the manager API, raw). */
export async function playStep(target: Target, step: Step, targetUrl: string, ctx: NormaliseContext, seen?: Seen): Promise<Answer> {
  if (step.kind === 'traffic') {
    const before = await loggedCount(target);
    const a = await throughPort(step.port, `${targetUrl}${step.path}`);
    // The real manager writes a request into its log and statistics after it has answered it (its port's
    // `usage` event, lib/server.js 410-498 and lib/manager.js 322-331): 20 to 500 ms later on a loaded
    // machine. The state is read once the log has changed, or after SETTLE_MS (a request it does not log).
    for (const until = Date.now() + SETTLE_MS; before !== undefined && Date.now() < until; ) {
      if ((await loggedCount(target)) !== before) break;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    return { ...a, ...(a.text !== undefined ? { text: normaliseText(a.text, ctx) } : {}) };
  }
  const body = step.body ? encodeBody(step.body, ctx) : undefined;
  const url = `${target.url}${callPath(step)}`;
  const res = await fetchOrNothing(url, {
    method: step.method,
    ...(body ? { body: body.text, headers: { 'content-type': body.type } } : {}),
  });
  return answerOf(res, ctx, seen && ((r, text) => seen(step.method, url, r.status, r.headers.get('content-type'), text)));
}

async function readJson(url: string, ctx: NormaliseContext, seen?: Seen): Promise<Json> {
  const res = await fetchOrNothing(url);
  if (!res) return { unanswered: true };
  const text = await res.text();
  seen?.('GET', url, res.status, res.headers.get('content-type'), text);
  if (res.status !== 200) return { status: res.status };
  try {
    return normalise(JSON.parse(text), ctx);
  } catch {
    return { status: res.status, text: normaliseText(text.slice(0, 200), ctx) };
  }
}

const byPort = (xs: Json) => (Array.isArray(xs) ? [...xs].sort((a, b) => String(a?.port).localeCompare(String(b?.port))) : xs);

/** What a HAR entry is, for comparing logs: the request, its answer and the port, not its timing or sizes. */
const entryOf = (e: Json) => ({
  method: e?.request?.method,
  url: e?.request?.url,
  status: e?.response?.status,
  port: e?.details?.port,
  protocol: e?.details?.protocol,
  content_type: e?.details?.content_type,
});

/** The state of a manager, read through its API. `extra` names the parts of EXTRA_ROUTES to read. */
export async function fingerprint(
  target: Target,
  ctx: NormaliseContext,
  extra: Array<keyof typeof EXTRA_ROUTES>,
  seen?: Seen,
): Promise<Fingerprint> {
  const at = (path: string) => readJson(`${target.url}${path}`, ctx, seen);
  const [ports, running, settings, stats, ...logs] = await Promise.all([
    at('/api/proxies'),
    at('/api/proxies_running'),
    at('/api/settings'),
    at('/api/recent_stats'),
    ...LOG_FILTERS.map((f) => at(`/api/logs${f ? `?${f}` : ''}`)),
  ]);
  // Flat parts, so that one listed difference (a key the sandbox lacks) hides no other.
  const fp: Fingerprint = {};
  const configs = (name: string, list: Json) => {
    if (!Array.isArray(list)) {
      fp[name] = list;
      return;
    }
    fp[name] = list.map((p: Json) => p?.port);
    for (const p of list) for (const [k, x] of Object.entries(p ?? {})) fp[`${name}:${p?.port}.${k}`] = x;
  };
  configs('ports', byPort(ports));
  configs('running', byPort(running));
  if (settings && typeof settings === 'object' && !('status' in settings && Object.keys(settings).length <= 2))
    for (const [k, x] of Object.entries(settings)) fp[`settings.${k}`] = x;
  else fp.settings = settings;
  fp.stats = stats?.ports
    ? {
        total: stats.total,
        success: stats.success,
        ports: Object.fromEntries(
          Object.entries(stats.ports as Record<string, Json>).map(([p, s]) => [p, { reqs: s.reqs, success: s.success }]),
        ),
        status_code: (stats.status_code ?? []).map((s: Json) => ({ key: s.key, reqs: s.reqs })),
      }
    : stats;
  LOG_FILTERS.forEach((f, i) => {
    const l = logs[i];
    if (!l?.log) {
      fp[`logs?${f}`] = l;
      return;
    }
    let entries: Json[] = (l.log.entries ?? []).map(entryOf);
    // The "log order" normalisation: without `sort` the log is ordered by its entries' random uuids.
    if (!/(^|&)sort=/.test(f)) {
      const canonical = entries.map((e) => JSON.stringify(e)).sort();
      entries = /(^|&)(limit|skip)=/.test(f) ? [`${entries.length} entries`] : canonical.map((e) => JSON.parse(e));
    }
    fp[`logs?${f}`] = { total: l.total, entries };
  });
  const known = new Set<number>([...(Array.isArray(running) ? running.map((p: Json) => p?.port) : []), ...PORT_SLOTS]);
  for (const part of extra)
    for (const port of [...known].filter((p) => typeof p === 'number').sort()) fp[`${part}:${port}`] = await at(EXTRA_ROUTES[part](port));
  return fp;
}

/**
 * Plays a sequence from the target's start state, reading the state before and after each step. With
 * `spec`, every answer of the manager API (the steps' and the reads') is held to the bundle.
 */
export async function play(
  target: Target,
  steps: Step[],
  o: { targetUrl: string; ctx: NormaliseContext; extra: Array<keyof typeof EXTRA_ROUTES>; spec?: Conformance },
): Promise<Played> {
  await target.reset();
  let now: Violation[] = [];
  const spec = o.spec;
  const seen: Seen | undefined =
    spec &&
    ((method, url, status, contentType, text) => {
      for (const raw of spec.check(method, url, status, contentType, text)) {
        const problem = normaliseText(raw, o.ctx);
        const operation = spec.operationOf(method, url) ?? `${method} ${new URL(url).pathname}`;
        if (!now.some((v) => v.problem === problem)) now.push({ operation, problem });
      }
    });
  const played: Played = { answers: [], fingerprints: [await fingerprint(target, o.ctx, o.extra, seen)], violations: [now] };
  for (const step of steps) {
    now = [];
    played.answers.push(await playStep(target, step, o.targetUrl, o.ctx, seen));
    played.fingerprints.push(await fingerprint(target, o.ctx, o.extra, seen));
    played.violations.push(now);
  }
  return played;
}
