import { type ClientRequest, request as httpRequest, type IncomingMessage } from 'node:http';
import type { Conformance } from '@zone-api/spec/model';
import { type NormaliseContext, normalise, normaliseText } from './normalise.js';
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

/** What the loopback target received for one request through a port. */
export interface Received {
  method: string;
  /** The request target as received (a path, or an absolute URL). */
  path: string;
  /** Header names as sent (their case kept); a repeated header's values joined by `, `. */
  headers: Record<string, string>;
  body: string;
}

export interface Answer {
  status: number;
  /** Media type without parameters; null when the answer had no Content-Type. */
  media: string | null;
  kind: 'none' | 'json' | 'text' | 'html page' | 'broken json' | 'no answer';
  /** The answer's headers, names in lower case. */
  headers?: Record<string, string>;
  /** For json: the body as parsed. */
  value?: Json;
  /** For other kinds: the whole text (for `no answer`, why). */
  text?: string;
  /** For traffic through a CONNECT tunnel: the CONNECT's own answer. */
  tunnel?: { status: number; headers?: Record<string, string> };
  /** For traffic: what the target received, in order (each request a rule or a retry sent again included). */
  received?: Received[];
}

/** The state read through the API after a step: named parts, each normalised. */
export type Fingerprint = Record<string, Json>;

/** A real answer that does not validate against the bundle: the operation it answers, and why. */
export interface Violation {
  operation: string;
  problem: string;
}

export interface Played {
  /** The context the sequence was played in (the target's ports), for normalising. */
  ctx: NormaliseContext;
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
    ctx
      ? s
          .replaceAll(`"${WWW_PORT}"`, String(ctx.wwwPort))
          .replaceAll(`"${TARGET_PORT}"`, String(ctx.targetPort))
          // Inside a text (`127.0.0.1:$TARGET_PORT`), the number as text.
          .replaceAll(WWW_PORT, String(ctx.wwwPort))
          .replaceAll(TARGET_PORT, String(ctx.targetPort))
      : s;
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

/** Header names in lower case, a repeated one's values joined by `, ` (as fetch and Node read them). */
function headersOf(h: Headers | Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  if (h instanceof Headers)
    h.forEach((value, name) => {
      out[name] = value;
    });
  else for (const [name, value] of Object.entries(h)) if (value !== undefined) out[name] = Array.isArray(value) ? value.join(', ') : value;
  return out;
}

const mediaOf = (contentType: string | null | undefined) => contentType?.split(';')[0]?.trim().toLowerCase() ?? null;

/** An answer from its status, headers and whole text: its kind, and for JSON the parsed value. */
function answerFrom(status: number, headers: Record<string, string>, text: string): Answer {
  const media = mediaOf(headers['content-type']);
  if (text === '') return { status, media, kind: 'none', headers };
  if (media && /json/.test(media)) {
    try {
      return { status, media, kind: 'json', headers, value: JSON.parse(text) };
    } catch {
      return { status, media, kind: 'broken json', headers, text };
    }
  }
  if (/^\s*<(!doctype|html)/i.test(text)) return { status, media, kind: 'html page', headers, text };
  return { status, media, kind: 'text', headers, text };
}

async function answerOf(res: Response | undefined, seen?: (res: Response, text: string) => void): Promise<Answer> {
  if (!res) return { status: 0, media: null, kind: 'no answer' };
  const text = await res.text();
  seen?.(res, text);
  return answerFrom(res.status, headersOf(res.headers), text);
}

const TIMEOUT_MS = 10_000;

/**
 * A kept-alive connection the server closed as the request went out ("other side closed") carried
 * nothing to it: the request is sent once more, on a new connection.
 */
export async function fetchAgainOnClosed(url: string, init: RequestInit = {}): Promise<Response> {
  try {
    return await fetch(url, init);
  } catch (err) {
    if ((err as { cause?: { code?: string } }).cause?.code !== 'UND_ERR_SOCKET') throw err;
    return fetch(url, init);
  }
}

async function fetchOrNothing(url: string, init: RequestInit = {}): Promise<Response | undefined> {
  try {
    return await fetchAgainOnClosed(url, { ...init, signal: AbortSignal.timeout(TIMEOUT_MS) });
  } catch {
    return undefined;
  }
}

/** A traffic step's request: method, the target's path, headers and body, and how it reaches the port. */
export interface TrafficRequest {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  /** `absolute` (default): an absolute-URI request to the port; `connect`: a CONNECT tunnel, then the request through it. */
  via?: 'absolute' | 'connect';
}

/** Reads an answer off a Node response, whole (capped at 1 MB). */
function readAll(res: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    res.on('data', (c: Buffer) => {
      if (size < 1 << 20) chunks.push(c);
      size += c.length;
    });
    res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    res.on('error', () => resolve(Buffer.concat(chunks).toString('utf8')));
    res.on('aborted', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });
}

const noAnswer = (err: unknown): Answer => ({
  status: 0,
  media: null,
  kind: 'no answer',
  text: (err as NodeJS.ErrnoException).code ?? 'error',
});

/** One request through a proxy port to the target; status 0 when the connection fails. */
export function throughPort(port: number, url: string, r: TrafficRequest = {}): Promise<Answer> {
  const target = new URL(url);
  const method = r.method ?? 'GET';
  const headers = { host: target.host, ...(r.headers ?? {}) };
  return new Promise((resolve) => {
    const settle = (a: Answer) => resolve(a);
    const send = (req: ClientRequest, extra: Partial<Answer> = {}) => {
      req.setTimeout(TIMEOUT_MS, () => req.destroy(new Error('timeout')));
      req.on('error', (err) => settle({ ...noAnswer(err), ...extra }));
      req.on('response', async (res) =>
        settle({ ...answerFrom(res.statusCode ?? 0, headersOf(res.headers), await readAll(res)), ...extra }),
      );
      req.end(r.body);
    };
    if (r.via !== 'connect') {
      send(httpRequest({ host: '127.0.0.1', port, method, path: url, headers, agent: false }));
      return;
    }
    const connect = httpRequest({
      host: '127.0.0.1',
      port,
      method: 'CONNECT',
      path: target.host,
      headers: { host: target.host },
      agent: false,
    });
    connect.setTimeout(TIMEOUT_MS, () => connect.destroy(new Error('timeout')));
    connect.on('error', (err) => settle(noAnswer(err)));
    connect.on('connect', (res, socket, head) => {
      const tunnel = { status: res.statusCode ?? 0, headers: headersOf(res.headers) };
      if (tunnel.status !== 200) {
        // A refused tunnel is the answer itself: the manager's own status, headers and body.
        const length = Number(res.headers['content-length'] ?? Number.NaN);
        const chunks: Buffer[] = [head];
        let size = head.length;
        const done = () => {
          socket.destroy();
          settle({ ...answerFrom(tunnel.status, tunnel.headers, Buffer.concat(chunks).toString('utf8')), tunnel });
        };
        if (size >= length || length === 0) return done();
        socket.setTimeout(2000, done);
        socket.on('data', (c: Buffer) => {
          chunks.push(c);
          size += c.length;
          if (size >= length) done();
        });
        socket.on('end', done);
        socket.on('error', done);
        return;
      }
      send(httpRequest({ method, path: `${target.pathname}${target.search}`, headers, agent: false, createConnection: () => socket }), {
        tunnel,
      });
    });
    connect.end();
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

/** What a player needs besides the target: the loopback target, the run's context, what the target received. */
export interface PlayOptions {
  targetUrl: string;
  ctx: NormaliseContext;
  /** What the loopback target received since the last call (each call empties it). */
  received?: () => Received[];
}

/** Plays one step (`seen`: each answer of the manager API, raw). The answer is raw (not normalised). */
export async function playStep(target: Target, step: Step, o: PlayOptions, seen?: Seen): Promise<Answer> {
  if (step.kind === 'traffic') {
    const before = await loggedCount(target);
    o.received?.();
    const a = await throughPort(step.port, `${o.targetUrl}${step.path}`, step);
    // The real manager writes a request into its log and statistics after it has answered it (its port's
    // `usage` event, lib/server.js 410-498 and lib/manager.js 322-331): 20 to 500 ms later on a loaded
    // machine. The state is read once the log has changed, or after SETTLE_MS (a request it does not log).
    for (const until = Date.now() + SETTLE_MS; before !== undefined && Date.now() < until; ) {
      if ((await loggedCount(target)) !== before) break;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    return o.received ? { ...a, received: o.received() } : a;
  }
  const body = step.body ? encodeBody(step.body, o.ctx) : undefined;
  const url = `${target.url}${callPath(step)}`;
  const res = await fetchOrNothing(url, {
    method: step.method,
    headers: { ...(body ? { 'content-type': body.type } : {}), ...(step.headers ?? {}) },
    ...(body && step.method !== 'HEAD' && step.method !== 'GET' ? { body: body.text } : {}),
  });
  return answerOf(res, seen && ((r, text) => seen(step.method, url, r.status, r.headers.get('content-type'), text)));
}

async function readJson(url: string, seen?: Seen): Promise<Json> {
  const res = await fetchOrNothing(url);
  if (!res) return { unanswered: true };
  const text = await res.text();
  seen?.('GET', url, res.status, res.headers.get('content-type'), text);
  if (res.status !== 200) return { status: res.status };
  try {
    return JSON.parse(text);
  } catch {
    return { status: res.status, text: text.slice(0, 2000) };
  }
}

const byPort = (xs: Json) => (Array.isArray(xs) ? [...xs].sort((a, b) => String(a?.port).localeCompare(String(b?.port))) : xs);

/** HAR headers (`[{name, value}]`) as an object by name, the name's case kept: what differs is then named by the header. */
const harHeaders = (hs: Json) =>
  Array.isArray(hs)
    ? hs.reduce((acc: Record<string, string>, h: Json) => {
        const name = String(h?.name);
        acc[name] = name in acc ? `${acc[name]}, ${h?.value}` : h?.value;
        return acc;
      }, {})
    : hs;

/** A HAR entry whole, its header lists read by name. */
export const entryOf = (e: Json) =>
  e && typeof e === 'object'
    ? {
        ...e,
        ...(e.request ? { request: { ...e.request, headers: harHeaders(e.request.headers) } } : {}),
        ...(e.response ? { response: { ...e.response, headers: harHeaders(e.response.headers) } } : {}),
      }
    : e;

/** A log answer (`{log: {entries}}`) with each entry's header lists read by name; any other value as it is. */
export const logByName = (l: Json) =>
  Array.isArray(l?.log?.entries) ? { ...l, log: { ...l.log, entries: l.log.entries.map(entryOf) } } : l;

/** The state of a manager read through its API, as read (not normalised). `extra` names the parts of EXTRA_ROUTES to read. */
export async function rawFingerprint(target: Target, extra: Array<keyof typeof EXTRA_ROUTES>, seen?: Seen): Promise<Fingerprint> {
  const at = (path: string) => readJson(`${target.url}${path}`, seen);
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
  fp.stats = stats;
  LOG_FILTERS.forEach((f, i) => {
    const l = logs[i];
    fp[`logs?${f}`] = logByName(l);
  });
  const known = new Set<number>([...(Array.isArray(running) ? running.map((p: Json) => p?.port) : []), ...PORT_SLOTS]);
  for (const part of extra)
    for (const port of [...known].filter((p) => typeof p === 'number').sort()) fp[`${part}:${port}`] = await at(EXTRA_ROUTES[part](port));
  return fp;
}

/**
 * The 'log order' normalisation of a log answer (`{total, log: {entries}}`, normalised) read with the
 * query `filter`: without `sort` the log is in its entries' random uuids' order, so it is taken as a
 * set (ordered by what each entry is); under `limit` or `skip`, a random subset of it: its count.
 */
export function logInOrder(value: Json, filter: string, ctx: NormaliseContext): Json {
  if (!Array.isArray(value?.log?.entries) || ctx.off?.has('log order') || /(^|&)sort=/.test(filter)) return value;
  const entries: Json[] = value.log.entries;
  const key = (e: Json) => JSON.stringify([e?.request?.url, e?.request?.method, e?.details?.port, e?.response?.status, e]);
  return {
    ...value,
    log: {
      ...value.log,
      entries: /(^|&)(limit|skip)=/.test(filter) ? [`${entries.length} entries`] : [...entries].sort((a, b) => (key(a) < key(b) ? -1 : 1)),
    },
  };
}

/** A fingerprint normalised (normalise.ts), the 'log order' normalisation included. */
export function normaliseFingerprint(fp: Fingerprint, ctx: NormaliseContext): Fingerprint {
  const out: Fingerprint = {};
  for (const [part, raw] of Object.entries(fp))
    out[part] = part.startsWith('logs?') ? logInOrder(normalise(raw, ctx), part.slice('logs?'.length), ctx) : normalise(raw, ctx);
  return out;
}

/** The state of a manager, read through its API and normalised. */
export async function fingerprint(
  target: Target,
  ctx: NormaliseContext,
  extra: Array<keyof typeof EXTRA_ROUTES>,
  seen?: Seen,
): Promise<Fingerprint> {
  return normaliseFingerprint(await rawFingerprint(target, extra, seen), ctx);
}

/**
 * Plays a sequence from the target's start state, reading the state before and after each step, as
 * read (compare.ts normalises). With `spec`, every answer of the manager API (the steps' and the
 * reads') is held to the bundle.
 */
export async function play(
  target: Target,
  steps: Step[],
  o: PlayOptions & { extra: Array<keyof typeof EXTRA_ROUTES>; spec?: Conformance },
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
  const played: Played = { ctx: o.ctx, answers: [], fingerprints: [await rawFingerprint(target, o.extra, seen)], violations: [now] };
  for (const step of steps) {
    now = [];
    played.answers.push(await playStep(target, step, o, seen));
    played.fingerprints.push(await rawFingerprint(target, o.extra, seen));
    played.violations.push(now);
  }
  return played;
}
