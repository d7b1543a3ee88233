import { yieldToLoop } from '../shared/in-pieces.js';

// A large JSON answer serialised in pieces, the event loop let go of between them (issue 20: one
// JSON.stringify of a 48 MB log answer, and the socket's write of that one string, held the event loop
// close to a second). The bytes are JSON.stringify's, byte for byte: a part of the answer that weighs
// less than a piece is handed to JSON.stringify whole; larger objects and lists are walked, and a string
// longer than a piece is written in slices (never between the two halves of a surrogate pair, which
// JSON.stringify would then write as two escapes).

/**
 * The size of a piece, in characters: an answer that weighs less is sent as one JSON.stringify. At this
 * size JSON.stringify and the Buffer of the text take about 1-3 ms on a loaded 2-core machine.
 */
export const PIECE = 256 * 1024;

/**
 * Whether `value` serialises to more than about `limit` characters, worked out without serialising it
 * and with at most about `limit` characters' worth of walking (a cycle weighs as much as the walk goes). A
 * toJSON is not called: a Date weighs as an object without fields.
 */
export function weighsMore(value: unknown, limit: number): boolean {
  let weight = 0;
  const stack: unknown[] = [value];
  while (stack.length) {
    const v = stack.pop();
    if (typeof v === 'string') weight += v.length + 2;
    else if (v === null || typeof v !== 'object') weight += 8;
    else if (Array.isArray(v)) {
      weight += 2 + v.length;
      if (weight > limit) return true;
      for (const item of v) stack.push(item);
    } else {
      weight += 2;
      // Object.keys rather than for-in: either lists every key before the first (an object of 60,000
      // fields in dictionary mode), for-in more slowly.
      for (const k of Object.keys(v)) {
        weight += k.length + 4;
        stack.push((v as Record<string, unknown>)[k]);
        if (weight > limit) return true;
      }
    }
    if (weight > limit) return true;
  }
  return false;
}

/** Where a string may be cut near `at`: not after the high half of a surrogate pair. */
function cutAt(s: string, at: number): number {
  const c = s.charCodeAt(at - 1);
  return c >= 0xd800 && c <= 0xdbff ? at - 1 : at;
}

/** A plain object or list the walk goes into (a boxed value, a Date and the like are JSON.stringify's). */
const walked = (v: object) => Array.isArray(v) || Object.getPrototypeOf(v) === Object.prototype || Object.getPrototypeOf(v) === null;

/** `v` as JSON.stringify reads it, as the value of `key`: its toJSON's answer, when it has one. */
function resolved(key: string, v: unknown): unknown {
  return v !== null && typeof v === 'object' && typeof (v as { toJSON?: unknown }).toJSON === 'function'
    ? (v as { toJSON: (k: string) => unknown }).toJSON(key)
    : v;
}

/** Whether JSON.stringify writes nothing for a value (undefined, a function, a symbol). */
const nothing = (v: unknown) => v === undefined || typeof v === 'function' || typeof v === 'symbol';

/**
 * Values a piece holds at most: a piece of small values (a port of 60,000 fields of a number each) fills
 * its PIECE characters with some 18,000 of them, each a JSON.stringify and a step of the walk, which took
 * 17-27 ms in one stretch.
 */
export const VALUES_PER_PIECE = 8192;

/**
 * The JSON text of `value` in pieces of about PIECE characters or VALUES_PER_PIECE values, whichever comes
 * first (the last one shorter), exactly as JSON.stringify(value) writes it when joined. Nothing to write
 * (undefined) yields nothing. `heavy`: the caller knows that `value` weighs more than a piece
 * (weighsMore), and it is not weighed again.
 */
export function* jsonPieces(value: unknown, heavy = false): Generator<string> {
  let out = '';
  let values = 0;
  /** Appends `text`; true when a piece is full (the caller yields it). */
  const full = (text: string) => {
    out += text;
    if (out.length < PIECE && ++values < VALUES_PER_PIECE) return false;
    values = 0;
    return true;
  };
  const ancestors = new Set<object>();

  /** Writes `v`, already resolved and not nothing; `known`: it weighs more than a piece. */
  function* write(v: unknown, known = false): Generator<string> {
    if (typeof v === 'string' && v.length > PIECE) {
      for (let at = 0, end = 0; at < v.length; at = end) {
        end = at + PIECE >= v.length ? v.length : cutAt(v, at + PIECE);
        const slice = JSON.stringify(v.slice(at, end));
        if (full(`${at ? '' : '"'}${slice.slice(1, -1)}${end === v.length ? '"' : ''}`)) {
          yield out;
          out = '';
        }
      }
      return;
    }
    if (v === null || typeof v !== 'object' || !walked(v) || (!known && !weighsMore(v, PIECE))) {
      if (full(JSON.stringify(v))) {
        yield out;
        out = '';
      }
      return;
    }
    if (ancestors.has(v)) throw new TypeError('Converting circular structure to JSON');
    ancestors.add(v);
    if (Array.isArray(v)) {
      out += '[';
      for (let i = 0; i < v.length; i++) {
        if (i) out += ',';
        const item = resolved(String(i), v[i]);
        if (nothing(item)) out += 'null';
        else yield* write(item);
      }
      out += ']';
    } else {
      out += '{';
      let first = true;
      const o = v as Record<string, unknown>;
      for (const k of Object.keys(o)) {
        const item = resolved(k, o[k]);
        if (nothing(item)) continue;
        out += `${first ? '' : ','}${JSON.stringify(k)}:`;
        first = false;
        yield* write(item);
      }
      out += '}';
    }
    ancestors.delete(v);
  }

  const root = resolved('', value);
  if (nothing(root)) return;
  yield* write(root, heavy && root === value);
  if (out) yield out;
}

/**
 * Bytes of pieces the first pass keeps for the answer: an answer of up to this many bytes is serialised
 * once; a larger one is serialised twice, once to count its bytes and once as it is sent.
 */
export const KEEP_BYTES = 4 * 1024 * 1024;

/**
 * The JSON text of `value` as an answer: its length in bytes (its Content-Length) and its bytes, in
 * pieces (jsonPieces), the event loop let go of before each piece. Up to KEEP_BYTES, the pieces are made
 * once and kept; past it none is kept: the first pass only counts the bytes and the pieces are made again
 * as the answer is read, so that a 48 MB log answer holds a piece or two at a time, not 48 MB of Buffers
 * made before its first byte is sent. The value must not change between the passes (an answer is made
 * for the request: its lists are its own, and the state's objects it holds are replaced, not changed in
 * place, state.ts); if the second pass makes other bytes, the answer fails rather than lie about its length.
 */
export async function jsonAnswer(value: unknown): Promise<{ bytes: number; chunks: Iterable<Buffer> | AsyncIterable<Buffer> }> {
  let kept: Buffer[] | undefined = [];
  let bytes = 0;
  // Let go of before each piece, the first too: the caller weighed the value just before (weighsMore,
  // true: it is not weighed again).
  await yieldToLoop();
  for (const piece of jsonPieces(value, true)) {
    if (kept) {
      const b = Buffer.from(piece, 'utf8');
      kept.push(b);
      bytes += b.length;
      if (bytes > KEEP_BYTES) kept = undefined;
    } else bytes += Buffer.byteLength(piece, 'utf8');
    await yieldToLoop();
  }
  return { bytes, chunks: kept ?? madeAgain(value, bytes) };
}

/** The pieces of `value` made again, as they are read; `bytes`: what the first pass counted. */
async function* madeAgain(value: unknown, bytes: number): AsyncGenerator<Buffer> {
  let sent = 0;
  for (const piece of jsonPieces(value, true)) {
    await yieldToLoop();
    const b = Buffer.from(piece, 'utf8');
    sent += b.length;
    if (sent > bytes) break;
    yield b;
  }
  if (sent !== bytes) throw new Error(`the answer changed while it was sent: ${bytes} bytes counted, ${sent} made`);
}
