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
 * `{...head, ...big}`, with the fields of `big` copied in pieces of FIELDS_PER_PIECE, the event loop let
 * go of before each; at once when `big` is no larger than a piece. The same object the spread makes:
 * its own enumerable fields in order, a field of `head` that `big` also has keeping its place with the
 * value of `big`, and a field named `__proto__` a field (as a spread defines it), not the prototype.
 */
export async function spreadInPieces<T extends object>(head: Record<string, unknown>, big: T): Promise<Record<string, unknown>> {
  const keys = Object.keys(big);
  if (keys.length <= FIELDS_PER_PIECE) return { ...head, ...big };
  const out: Record<string, unknown> = { ...head };
  const from = big as Record<string, unknown>;
  for (let at = 0; at < keys.length; at += FIELDS_PER_PIECE) {
    await yieldToLoop();
    const end = Math.min(at + FIELDS_PER_PIECE, keys.length);
    for (let i = at; i < end; i++) {
      const k = keys[i] as string;
      if (k === '__proto__') Object.defineProperty(out, k, { value: from[k], enumerable: true, writable: true, configurable: true });
      else out[k] = from[k];
    }
  }
  return out;
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

/** JSON's blanks: tab, line feed, carriage return, space. */
const BLANKS = new Set([0x09, 0x0a, 0x0d, 0x20]);

/**
 * `JSON.parse(text)` (a leading byte order mark skipped, as fastify's parser skips it), parsed in at most
 * PARSE_PIECES pieces of at least PARSE_PIECE_MIN characters by @discoveryjs/json-ext's parseChunked (each
 * piece's values by JSON.parse itself), the event loop let go of before each piece. Rejects as JSON.parse
 * throws on a text that is not JSON (with another message). The parser merges each piece's fields into
 * the object being filled by assignment: a field named `__proto__` would set that object's prototype
 * instead of being a field, so the caller must keep such texts from it (bodies.ts checks for them first).
 */
export async function parseInPieces(text: string): Promise<unknown> {
  const from = text.charCodeAt(0) === 0xfeff ? 1 : 0;
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
