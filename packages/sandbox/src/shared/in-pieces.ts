import { setImmediate as immediate } from 'node:timers/promises';
import { parseChunked } from '@discoveryjs/json-ext';

// Work over a large input done in pieces, the event loop let go of between them (issue 20: a request
// may carry tens of thousands of fields, and no request may hold the event loop).

/**
 * Fields copied in one piece. An object of tens of thousands of fields is a dictionary, and one field
 * costs about a microsecond to copy into another: a piece takes a few milliseconds on a quiet machine.
 */
export const FIELDS_PER_PIECE = 8192;

/**
 * Lets the event loop go: what waits (timers, other requests' input) runs before the caller goes on. One
 * setImmediate is not enough from a callback of input (the poll phase): it runs in the same turn's check
 * phase, before any timer or other input. A second one runs after a whole turn of the loop.
 */
export async function yieldToLoop(): Promise<void> {
  await immediate();
  await immediate();
}

/**
 * `{...a, ...b, ...}`, each source's fields copied in pieces of FIELDS_PER_PIECE, the event loop let go of
 * before each piece of a source larger than a piece (a small source is copied at once). The same object
 * the spread makes: its own enumerable fields in order, a field that a later source also has keeping its
 * place with the later value, a field named `__proto__` a field (as a spread defines it), not the
 * prototype; a source that is null or undefined adds nothing, a text its characters, as in a spread.
 */
export async function spreadInPieces(...sources: unknown[]): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for (const source of sources) if (source !== null && source !== undefined) await copyInPieces(out, source as object);
  return out;
}

/**
 * `structuredClone(big)` of a plain object of JSON values (a port's configuration), made field by field
 * in pieces of FIELDS_PER_PIECE fields, the event loop let go of before each piece when it is larger than
 * one: each field's value is cloned on its own (JSON values share nothing between fields).
 */
export async function cloneInPieces(big: object): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  await copyInPieces(out, big, (v) => (v !== null && typeof v === 'object' ? structuredClone(v) : v));
  return out;
}

/** The own enumerable fields of `from` set on `out` (through `map`), in pieces (see spreadInPieces). */
async function copyInPieces(out: Record<string, unknown>, from: object, map?: (v: unknown) => unknown): Promise<void> {
  const keys = Object.keys(from);
  const large = keys.length > FIELDS_PER_PIECE;
  const src = from as Record<string, unknown>;
  for (let at = 0; at < keys.length; at += FIELDS_PER_PIECE) {
    if (large) await yieldToLoop();
    const end = Math.min(at + FIELDS_PER_PIECE, keys.length);
    for (let i = at; i < end; i++) {
      const k = keys[i] as string;
      const v = map ? map(src[k]) : src[k];
      if (k === '__proto__') Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
      else out[k] = v;
    }
  }
}

/**
 * A walk (a generator that pauses by yielding) run in pieces: the event loop let go of at each pause.
 * The walks of this package pause every FIELDS_PER_PIECE fields or items they look at.
 */
export async function walkInPieces<T>(walk: Generator<void, T>): Promise<T> {
  for (;;) {
    const step = walk.next();
    if (step.done) return step.value;
    await yieldToLoop();
  }
}

/** A walk run at once, its pauses ignored. */
export function walkAtOnce<T>(walk: Generator<void, T>): T {
  for (;;) {
    const step = walk.next();
    if (step.done) return step.value;
  }
}

/**
 * Pieces a large JSON text is parsed in (parseInPieces): a fixed number, so that the work stays linear in
 * the text. The chunked parser (@discoveryjs/json-ext) counts the fields of the object it is filling once
 * per piece (Object.keys, to know whether a comma comes first), so pieces of a fixed size would make a body
 * of one large object cost (size / piece) x fields: quadratic.
 */
export const PARSE_PIECES = 16;
/** The smallest piece parseInPieces makes, in characters: a text no longer is parsed in one piece. */
export const PARSE_PIECE_MIN = 64 * 1024;

/**
 * A key `__proto__`, spelt in letters or `\u` escapes: the test fastify's JSON parser makes before it looks
 * for such a field (secure-json-parse 4.1.1, index.js 4).
 */
export const PROTO_KEY =
  /"(?:_|\\u005[Ff])(?:_|\\u005[Ff])(?:p|\\u0070)(?:r|\\u0072)(?:o|\\u006[Ff])(?:t|\\u0074)(?:o|\\u006[Ff])(?:_|\\u005[Ff])(?:_|\\u005[Ff])"\s*:/;

/** A key of digits only, each a digit or its `\u` escape (what JavaScript orders before other keys). */
const DIGITS_KEY = /"(?:[0-9]|\\u003[0-9])+"[ \t\n\r]*:/;

/** A comma, blanks, and a closing bracket or brace. */
const TRAILING_COMMA = /,[ \t\n\r]*[}\]]/;

/** JSON's blanks: tab, line feed, carriage return, space. */
const BLANKS = new Set([0x09, 0x0a, 0x0d, 0x20]);

/**
 * `JSON.parse(text)` (a leading byte order mark skipped, as fastify's parser skips it), parsed in at most
 * PARSE_PIECES pieces of at least PARSE_PIECE_MIN characters by @discoveryjs/json-ext's parseChunked (each
 * piece's values by JSON.parse itself), the event loop let go of before each piece. Rejects as JSON.parse
 * throws on a text that is not JSON (with another message). A text with a key `__proto__` or of digits
 * only, or a comma before a closing bracket, is parsed whole by one JSON.parse (see below): the value is
 * always JSON.parse's.
 */
export async function parseInPieces(text: string): Promise<unknown> {
  const from = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  // Texts parseChunked 1.1.0 reads otherwise than JSON.parse, parsed whole (found by in-pieces.test.ts):
  // - a key `__proto__`: it merges each piece's fields into the object it fills by assignment, which
  //   sets that object's prototype instead of making a field (JSON.parse makes a field);
  // - a key of digits only (in letters or `\u` escapes): it finds the member it goes on filling after a
  //   piece by `for…in`, which lists such keys first, not last, and filled the wrong member, or failed;
  // - a comma before a closing bracket or brace (`[1,]`, no JSON): after a piece, it drops the comma that
  //   starts what it reads next without looking at what follows, and took `{"a":{"b":1},}`.
  // Either may be inside a string too: such a text is parsed whole as well, at no other cost.
  if (PROTO_KEY.test(text) || DIGITS_KEY.test(text) || TRAILING_COMMA.test(text)) return JSON.parse(from ? text.slice(from) : text);
  const size = Math.max(PARSE_PIECE_MIN, Math.ceil((text.length - from) / PARSE_PIECES));
  // The value is taken when the parser finishes it (at the depth it started): a text that ends with a
  // list or object still open right after a bracket or brace (`{"a":[1]`) is no JSON, yet parseChunked
  // 1.1.0 answers what it has built by then; it never finishes a value, and is refused here.
  let value: unknown;
  let values = 0;
  await parseChunked(
    async function* () {
      for (let at = from, end = 0; at < text.length; at = end) {
        // No piece starts with a blank: parseChunked 1.1.0 skips blanks at the start of a piece even inside
        // a number or a literal cut there, and took `f alse` cut before its blank as `false`.
        end = Math.min(at + size, text.length);
        while (end < text.length && BLANKS.has(text.charCodeAt(end))) end++;
        await yieldToLoop();
        yield text.slice(at, end);
      }
    },
    {
      onRootValue: (v) => {
        value = v;
        values++;
      },
    },
  );
  if (values !== 1) throw new SyntaxError('Unexpected end of JSON input');
  return value;
}
