import { setImmediate as immediate } from 'node:timers/promises';

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
