// Every normalisation of the differential suite, in this one place: what differs between two runs of
// the real manager itself (times, generated ids, the run's ports, the machine's own values), so that
// neither side is wrong for it. Nothing else is normalised. Each entry is proven by the self-check of
// the real-manager suite (selfcheck.ts): two real managers playing the same sequences agree with every
// normalisation on and disagree with each one turned off. A new entry needs its reason and its proof.

// biome-ignore lint/suspicious/noExplicitAny: answers are walked generically
type Json = any;

/** What a normalisation needs to know of the target it reads. */
export interface NormaliseContext {
  /** The manager's own API port (the two listen on different ones, side by side). */
  wwwPort: number;
  /** The loopback target's port. */
  targetPort: number;
  /** Normalisations turned off by name (the self-check proves each one this way). */
  off?: ReadonlySet<string>;
}

export interface Normalisation {
  name: NormalisationName;
  why: string;
}

export type NormalisationName =
  | 'uuid'
  | 'time'
  | 'token'
  | 'manager port'
  | 'target port'
  | 'log order'
  | 'OpenSSL thread'
  | 'body digest'
  | 'rate window'
  | 'run directory';

/** The list, for reports, the README and the self-check. */
export const NORMALISATIONS: Normalisation[] = [
  { name: 'uuid', why: 'HAR entry ids and other UUIDs are drawn at random' },
  {
    name: 'time',
    why: "timestamps, durations, timelines' and timings' values and ban expiries (ISO and HTTP dates, the values under startedDateTime, timestamp, time, to, timeline, timings, date) depend on when and how fast the step ran; their presence and structure are kept",
  },
  { name: 'token', why: 'API tokens are drawn at random' },
  { name: 'manager port', why: 'two managers listen on different API ports, side by side' },
  { name: 'target port', why: 'the loopback target listens on a free port chosen per run' },
  {
    name: 'log order',
    why: "without `sort` the log is ordered by its entries' uuids, which are random: such a log is compared as a set of entries, and under `limit` or `skip` (a random subset) by its count",
  },
  {
    name: 'OpenSSL thread',
    why: "OpenSSL's error text (a port's `x-lpm-error` when its upstream speaks no TLS) names the address of the thread that met it (`write EPROTO 806CC652007F0000:error:…`), which differs from one process to another",
  },
  {
    name: 'body digest',
    why: "an answer's `etag` and `content-length` are computed from its body, which holds times and ids (the body itself is compared value by value, normalised)",
  },
  {
    name: 'rate window',
    why: "the API's `ratelimit` header counts the requests of the current minute (the suite's own reads included) and the seconds to its end: `remaining` and `reset` depend on when the step ran; `limit` is kept",
  },
  {
    name: 'run directory',
    why: 'each run of the real manager keeps its files (configuration, log database, sessions) in a temporary directory of its own, which its answers name (`config`, `loki`, `session_path`, `argv`)',
  },
];

const UUID = /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi;
const ISO_TIME = /\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?/g;
const HTTP_DATE = /\b(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT\b/g;
const TIME_KEYS = new Set(['startedDateTime', 'timestamp', 'time', 'to', 'timeline', 'timings', 'date', 'last-modified']);
const TOKEN_KEYS = new Set(['token', 'token_auth']);
const DIGEST_KEYS = new Set(['etag', 'content-length']);
const RATE_WINDOW = /\b(remaining|reset)=\d+/g;
/** The temporary directory a run of the real manager works in (testkit's startRealManager names it so). */
const RUN_DIRECTORY = /[^\s"']*\/zone-api-real-manager-[A-Za-z0-9]{6}/g;
const OPENSSL_THREAD = /\b(E[A-Z]+) [0-9A-F]{8,16}:error:/g;

/** OpenSSL's error text without the address of the thread that met it (the 'OpenSSL thread' normalisation). */
export const withoutOpenSslThread = (text: string): string => text.replace(OPENSSL_THREAD, '$1 <thread>:error:');

const on = (ctx: NormaliseContext, name: NormalisationName) => !ctx.off?.has(name);

/** A text with what differs between runs replaced by its name. */
export function normaliseText(text: string, ctx: NormaliseContext): string {
  let out = text;
  if (on(ctx, 'OpenSSL thread')) out = withoutOpenSslThread(out);
  if (on(ctx, 'uuid')) out = out.replace(UUID, '<uuid>');
  if (on(ctx, 'time')) out = out.replace(ISO_TIME, '<time>').replace(HTTP_DATE, '<time>');
  if (on(ctx, 'manager port')) out = out.replace(new RegExp(`\\b${ctx.wwwPort}\\b`, 'g'), '<manager port>');
  if (on(ctx, 'target port')) out = out.replace(new RegExp(`\\b${ctx.targetPort}\\b`, 'g'), '<target port>');
  if (on(ctx, 'run directory')) out = out.replace(RUN_DIRECTORY, '<run directory>');
  return out;
}

/** Every scalar under a value, replaced by `name` (objects' keys and arrays' lengths kept). */
const scalars = (value: Json, name: string): Json =>
  Array.isArray(value)
    ? value.map((x) => scalars(x, name))
    : value !== null && typeof value === 'object'
      ? Object.fromEntries(Object.keys(value).map((k) => [k, scalars(value[k], name)]))
      : value === null || value === undefined || value === ''
        ? value
        : name;

/** A JSON value normalised the same way, key by key (keys sorted). */
export function normalise(value: Json, ctx: NormaliseContext, key?: string): Json {
  if (key !== undefined && value !== null && value !== undefined) {
    if (TIME_KEYS.has(key) && on(ctx, 'time')) return scalars(value, '<time>');
    if (TOKEN_KEYS.has(key) && typeof value === 'string' && value && on(ctx, 'token')) return '<token>';
    if (DIGEST_KEYS.has(key) && on(ctx, 'body digest')) return '<digest>';
    if (key === 'ratelimit' && typeof value === 'string' && on(ctx, 'rate window')) return value.replace(RATE_WINDOW, '$1=<n>');
  }
  if (typeof value === 'number') {
    if (value === ctx.wwwPort && on(ctx, 'manager port')) return '<manager port>';
    if (value === ctx.targetPort && on(ctx, 'target port')) return '<target port>';
    return value;
  }
  if (typeof value === 'string') return normaliseText(value, ctx);
  if (Array.isArray(value)) return value.map((x) => normalise(x, ctx));
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(
      Object.keys(value)
        .map((k) => [normaliseText(k, ctx), normalise(value[k], ctx, k)] as const)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
    );
  return value;
}
