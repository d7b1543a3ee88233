// Every normalisation of the differential suite, in this one place: what is random or belongs to the
// run's environment and so may differ between the real manager and the sandbox without either being
// wrong. Nothing else is normalised; a new entry here needs its reason.

// biome-ignore lint/suspicious/noExplicitAny: answers are walked generically
type Json = any;

/** What a normalisation needs to know of the target it reads. */
export interface NormaliseContext {
  /** The manager's own API port (the two listen on different ones, side by side). */
  wwwPort: number;
  /** The loopback target's port (the same for both; named so that reports read alike). */
  targetPort: number;
}

export interface Normalisation {
  name: string;
  why: string;
}

/** The list, for reports and the README. */
export const NORMALISATIONS: Normalisation[] = [
  { name: 'uuid', why: 'HAR entry ids and other UUIDs are random' },
  {
    name: 'time',
    why: 'timestamps, durations and ban expiries (startedDateTime, timestamp, time, to, ISO dates) depend on when the step ran',
  },
  { name: 'token', why: 'API tokens are random' },
  { name: 'session counter', why: 'session ids `<port>_<n>` count from a per-process counter' },
  { name: 'manager port', why: 'the real manager and the sandbox listen on different API ports, side by side' },
  { name: 'target port', why: 'the loopback target listens on a free port chosen per run' },
  {
    name: 'log order',
    why: "without `sort` both order their log by the entries' uuids, which are random: such a log is compared as a set of entries, and under `limit` or `skip` (a random subset) by its count",
  },
  {
    name: 'OpenSSL thread',
    why: "OpenSSL's error text (a port's `x-lpm-error` when its upstream speaks no TLS) names the address of the thread that met it (`write EPROTO 806CC652007F0000:error:…`), which differs from one process to another",
  },
  {
    name: 'byte counts',
    why: 'HAR and stats byte counts include header sizes (Date, Server, the proxy header order) that are not behaviour',
  },
];

const UUID = /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi;
const ISO_TIME = /\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?/g;
const TIME_KEYS = new Set(['startedDateTime', 'timestamp', 'time', 'to', 'timeline', 'timings', 'date']);
const TOKEN_KEYS = new Set(['token']);
const BYTE_KEYS = new Set(['headersSize', 'bodySize', 'size', 'in_bw', 'out_bw', 'bw', 'sum_in', 'sum_out']);
const SESSION = /\b(\d{4,5})_\d+\b/g;

const OPENSSL_THREAD = /\b(E[A-Z]+) [0-9A-F]{8,16}:error:/g;

/** OpenSSL's error text without the address of the thread that met it (the 'OpenSSL thread' normalisation). */
export const withoutOpenSslThread = (text: string): string => text.replace(OPENSSL_THREAD, '$1 <thread>:error:');

/** A text with what is random or environmental replaced by its name. */
export function normaliseText(text: string, ctx: NormaliseContext): string {
  return withoutOpenSslThread(text)
    .replace(UUID, '<uuid>')
    .replace(ISO_TIME, '<time>')
    .replace(SESSION, '$1_<n>')
    .replace(new RegExp(`\\b${ctx.wwwPort}\\b`, 'g'), '<manager port>')
    .replace(new RegExp(`\\b${ctx.targetPort}\\b`, 'g'), '<target port>');
}

/** A JSON value normalised the same way, key by key. */
export function normalise(value: Json, ctx: NormaliseContext, key?: string): Json {
  if (key && TIME_KEYS.has(key) && value !== null && value !== undefined) return '<time>';
  if (key && TOKEN_KEYS.has(key) && typeof value === 'string') return '<token>';
  if (key && BYTE_KEYS.has(key) && typeof value === 'number') return '<bytes>';
  if (typeof value === 'number') return value === ctx.wwwPort ? '<manager port>' : value === ctx.targetPort ? '<target port>' : value;
  if (typeof value === 'string') return normaliseText(value, ctx);
  if (Array.isArray(value)) return value.map((x) => normalise(x, ctx));
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, normalise(value[k], ctx, k)]),
    );
  return value;
}

/** The shape of a JSON value: objects key by key, arrays by the distinct shapes of their items, the rest by type. */
export function shape(value: Json): Json {
  if (Array.isArray(value)) {
    const seen = new Map<string, Json>();
    for (const item of value) {
      const s = shape(item);
      seen.set(JSON.stringify(s), s);
    }
    return [...seen.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([, s]) => s);
  }
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, shape(value[k])]),
    );
  return value === null ? 'null' : typeof value;
}
