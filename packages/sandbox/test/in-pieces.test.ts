import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FIELDS_PER_PIECE, spreadInPieces } from '../src/in-pieces.js';

// Work over a large input in pieces (src/in-pieces.ts): the same result as the work done at once, with the
// event loop let go of between pieces.

/** Turns of the event loop while `run` runs: an immediate re-armed at each turn counts them (one a turn). */
async function turnsWhile<T>(run: () => Promise<T>): Promise<{ turns: number; result: T }> {
  let turns = 0;
  let immediate: NodeJS.Immediate | undefined;
  const tick = () => {
    turns++;
    immediate = setImmediate(tick);
  };
  immediate = setImmediate(tick);
  try {
    const result = await run();
    return { turns, result };
  } finally {
    clearImmediate(immediate);
  }
}

const same = (a: object, b: object) => {
  expect(Object.keys(a)).toEqual(Object.keys(b));
  expect(JSON.stringify(a)).toBe(JSON.stringify(b));
  expect(Object.getPrototypeOf(a)).toBe(Object.getPrototypeOf(b));
};

describe('spreadInPieces makes the object a spread makes', () => {
  it('a large object: its fields in order, integer keys first, a field of the head overwritten in its place, __proto__ as a field', async () => {
    const big = JSON.parse(
      JSON.stringify(Object.fromEntries(Array.from({ length: 3 * FIELDS_PER_PIECE + 5 }, (_, i) => [`f${i}`, i]))).replace(
        '{',
        '{"__proto__":{"polluted":1},"12":"twelve","zone":"mine",',
      ),
    ) as Record<string, unknown>;
    expect(Object.hasOwn(big, '__proto__')).toBe(true);
    const head = { a: 1, zone: 'head', 3: 'three' };
    const out = await spreadInPieces(head, big);
    same(out, { ...head, ...big });
    expect(Object.keys(out).slice(0, 4)).toEqual(['3', '12', 'a', 'zone']);
    expect(out.zone).toBe('mine');
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(out, '__proto__')?.value).toEqual({ polluted: 1 });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    // The head is not changed.
    expect(head).toEqual({ a: 1, zone: 'head', 3: 'three' });
  });

  it('any head and any object, small or over a piece', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.dictionary(fc.string(), fc.jsonValue(), { maxKeys: 20 }),
        fc.dictionary(fc.string(), fc.jsonValue(), { maxKeys: 40 }),
        fc.boolean(),
        async (head, given, large) => {
          const big: Record<string, unknown> = { ...given };
          if (large) for (let i = 0; i < FIELDS_PER_PIECE; i++) big[`x${i}`] = i;
          same(await spreadInPieces(head, big), { ...head, ...big });
        },
      ),
      { numRuns: 20 },
    );
  }, 60_000);
});

describe('the event loop is let go of', () => {
  it('before each piece of a large object: the loop turns between them', async () => {
    const big = Object.fromEntries(Array.from({ length: 4 * FIELDS_PER_PIECE }, (_, i) => [`f${i}`, i]));
    const { turns, result } = await turnsWhile(() => spreadInPieces({}, big));
    expect(Object.keys(result)).toHaveLength(4 * FIELDS_PER_PIECE);
    expect(turns).toBeGreaterThanOrEqual(4);
  });

  it('not at all for an object no larger than a piece', async () => {
    const small = Object.fromEntries(Array.from({ length: FIELDS_PER_PIECE }, (_, i) => [`f${i}`, i]));
    const { turns } = await turnsWhile(() => spreadInPieces({}, small));
    expect(turns).toBe(0);
  });
});
