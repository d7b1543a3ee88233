import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Store } from '../../src/domain/state.js';
import type { ProxyPortConfig } from '../../src/domain/types.js';
import { defaultSeed } from '../../src/index.js';
import { multiplied } from '../../src/manager/multiply.js';
import { proxyCheck, proxyCheckInPieces, storeScope } from '../../src/manager/proxy-check.js';
import { tooDeep, tooDeepInPieces } from '../../src/router/depth.js';
import {
  cloneInPieces,
  FIELDS_PER_PIECE,
  PARSE_PIECE_MIN,
  PARSE_PIECES,
  parseInPieces,
  spreadInPieces,
} from '../../src/shared/in-pieces.js';

// Work over a large input in pieces (src/shared/in-pieces.ts): the same result as the work done at once, with the
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

describe('parseInPieces parses as JSON.parse does, in pieces', () => {
  /** `value` inside a text just over PARSE_PIECE_MIN, padded so that the first cut falls `cut` characters into it. */
  const around = (value: unknown, cut: number) => {
    const inner = JSON.stringify(value);
    const at = cut % (inner.length + 1);
    const head = '{"pad":"';
    const padding = PARSE_PIECE_MIN - head.length - '","v":'.length - at;
    return `${head}${'x'.repeat(padding)}","v":${inner},"tail":[${'1,'.repeat(100)}1]}`;
  };

  it('any JSON value, the first cut anywhere in it (strings with escapes, nesting, numbers)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.jsonValue({ maxDepth: 5 }), fc.nat(), async (value, cut) => {
        const text = around(value, cut);
        expect(await parseInPieces(text)).toEqual(JSON.parse(text));
      }),
      { numRuns: 60 },
    );
  }, 60_000);

  /** JSON.parse's value, or 'refused'; the same of parseInPieces. */
  const both = async (text: string) => {
    let whole: unknown = 'refused';
    let pieces: unknown = 'refused';
    try {
      whole = JSON.parse(text);
    } catch {}
    try {
      pieces = await parseInPieces(text);
    } catch {}
    return { whole, pieces };
  };

  it('an object with keys of digits only (listed first by JavaScript), cut inside one of its members: read as JSON.parse reads it', async () => {
    // The chunked parser found the member to go on filling by for…in, and filled `a` with `y`.
    const pad = 'x'.repeat(PARSE_PIECE_MIN);
    for (const text of [
      `{"a":{},"0":{"x":1,"p":"${pad}","y":2}}`,
      `{"a":[],"7":["${pad}",{"y":2}]}`,
      `{"a":{},"\\u0030":{"x":1,"p":"${pad}","y":2}}`,
    ]) {
      expect(await parseInPieces(text)).toEqual(JSON.parse(text));
      expect(await parseInPieces(`\ufeff${text}`)).toEqual(JSON.parse(text));
    }
  });

  it('a byte order mark is skipped; text that is not JSON is refused (cut short after a bracket too, which the chunked parser took)', async () => {
    const text = around({ a: [1, { b: '"\\' }] }, 3);
    expect(await parseInPieces(`\ufeff${text}`)).toEqual(JSON.parse(text));
    const pad = 'x'.repeat(70_000);
    for (const bad of [
      text.slice(0, -1),
      `${text}x`,
      `${text.slice(0, 70_000)}}${text.slice(70_000)}`,
      `{"p":"${pad}","a":[`,
      `{"p":"${pad}","a":[1]`,
      `[{"p":"${pad}"}`,
      `{"p":"${pad}",}`,
      `{"p":"${pad}"}\n{"q":1}`,
      `[${'1,'.repeat(40_000)}1`,
      // A blank inside a literal where a piece ends: once read as `false`.
      `{"p":"${'x'.repeat(PARSE_PIECE_MIN - 13)}","v":f alse}`,
      // A comma before a closing brace after a piece: once taken.
      `{"p":"${'x'.repeat(PARSE_PIECE_MIN - 20)}","a":{"b":{"c":1}},}`,
      `{"p":"${'x'.repeat(PARSE_PIECE_MIN - 20)}","a":{"b":{"c":1} , }}`,
    ])
      await expect(parseInPieces(bad), bad.slice(-20)).rejects.toThrow();
  });

  it('a text made invalid (or not) by one character taken out, put in or changed near the cut: refused or read as JSON.parse does', async () => {
    const chars = [...'{}[],:"\\ 0a-.eE'];
    await fc.assert(
      fc.asyncProperty(
        fc.jsonValue({ maxDepth: 4 }),
        fc.nat(),
        fc.integer({ min: -40, max: 40 }),
        fc.constantFrom('delete', 'insert', 'replace'),
        fc.constantFrom(...chars),
        async (value, cut, offset, edit, c) => {
          const text = around(value, cut);
          const at = Math.max(0, Math.min(text.length - 1, PARSE_PIECE_MIN + offset));
          const edited =
            edit === 'delete'
              ? text.slice(0, at) + text.slice(at + 1)
              : edit === 'insert'
                ? text.slice(0, at) + c + text.slice(at)
                : text.slice(0, at) + c + text.slice(at + 1);
          const { whole, pieces } = await both(edited);
          expect(pieces).toEqual(whole);
        },
      ),
      { numRuns: 200 },
    );
  }, 60_000);

  it('one object of 170,000 fields (a 2 MB body): at most PARSE_PIECES pieces, the loop turning between them', async () => {
    const big = Object.fromEntries(Array.from({ length: 170_000 }, (_, i) => [`f${i}`, i]));
    const text = JSON.stringify({ proxy: big });
    const { turns, result } = await turnsWhile(() => parseInPieces(text));
    expect(result).toEqual({ proxy: big });
    expect(turns).toBeGreaterThanOrEqual(PARSE_PIECES - 1);
    // yieldToLoop is two turns a piece: no more pieces than PARSE_PIECES.
    expect(turns).toBeLessThanOrEqual(2 * PARSE_PIECES + 2);
  });
});

describe('tooDeepInPieces finds what tooDeep finds, in pieces', () => {
  it('the same place or none, for values deep and wide', async () => {
    let deep: unknown = 1;
    for (let i = 0; i < 70; i++) deep = i % 2 ? [deep] : { a: deep };
    const wide = Object.fromEntries(Array.from({ length: 3 * FIELDS_PER_PIECE }, (_, i) => [`f${i}`, i % 3 ? i : { x: [i] }]));
    for (const value of [deep, wide, { ...wide, deep }, [wide, deep], 'text', null]) {
      expect(await tooDeepInPieces(value)).toBe(tooDeep(value));
    }
    expect(tooDeep({ ...wide, deep })).toMatch(/^body\.deep/);
  });

  it('the loop turns between pieces of a wide value', async () => {
    const wide = Object.fromEntries(Array.from({ length: 4 * FIELDS_PER_PIECE }, (_, i) => [`f${i}`, i]));
    const { turns, result } = await turnsWhile(() => tooDeepInPieces(wide));
    expect(result).toBeUndefined();
    expect(turns).toBeGreaterThanOrEqual(4);
  });
});

describe('the copies and checks of a large port configuration, in pieces (an update, its running copies)', () => {
  const big = (n: number) => ({
    port: 26_000,
    zone: 'static_zone',
    ...Object.fromEntries(Array.from({ length: n }, (_, i) => [`f${i}`, i % 5 ? i : { rule: [i, `x${'y'.repeat(i % 7)}`] }])),
    long: 'z'.repeat(400),
  });

  it('spreadInPieces of several sources is their spread: null and undefined add nothing, a text its characters', async () => {
    const a = big(2 * FIELDS_PER_PIECE);
    const b = { zone: 'other', added: 1 };
    same(await spreadInPieces(a, null, b, undefined, 'hi'), { ...a, ...b, 0: 'h', 1: 'i' });
    const { turns } = await turnsWhile(() => spreadInPieces(a, b));
    expect(turns).toBeGreaterThanOrEqual(2);
  });

  it('cloneInPieces is structuredClone of it, sharing nothing, the loop turning between pieces', async () => {
    const a = big(3 * FIELDS_PER_PIECE);
    const { turns, result } = await turnsWhile(() => cloneInPieces(a));
    same(result, structuredClone(a));
    const field = (o: object) => (o as Record<string, unknown>).f0;
    expect(field(result)).toEqual(field(a));
    expect(field(result)).not.toBe(field(a));
    expect(turns).toBeGreaterThanOrEqual(3);
  });

  it('proxyCheckInPieces finds what proxyCheck finds, the loop turning between pieces', async () => {
    const scope = storeScope(new Store(defaultSeed()), [22999]);
    const a = { ...big(3 * FIELDS_PER_PIECE), port: 24000, long2: 'w'.repeat(301) };
    const { turns, result } = await turnsWhile(() => proxyCheckInPieces(scope, a));
    expect(result).toEqual(proxyCheck(scope, a));
    expect(result.map((p) => p.field)).toEqual(['port', 'long', 'long2']);
    expect(turns).toBeGreaterThanOrEqual(3);
  });

  it('multiplied: the running copies of a large configuration, made in pieces, each its own', async () => {
    const master = { ...big(2 * FIELDS_PER_PIECE), multiply: 3, users: ['a'], whitelist_ips: ['1.1.1.1'] } as unknown as ProxyPortConfig;
    const { turns, result } = await turnsWhile(() => multiplied(master));
    expect(result.map((c) => c.port)).toEqual([26_000, 26_001, 26_002]);
    const { users: _u, whitelist_ips: _w, ...rest } = master as unknown as Record<string, unknown>;
    same(result[1] as object, { ...structuredClone(rest), port: 26_001, proxy_type: 'duplicate', master_port: 26_000 });
    expect((result[1] as unknown as Record<string, unknown>).f0).not.toBe((result[2] as unknown as Record<string, unknown>).f0);
    same(result[0] as object, master);
    expect(result[0]).not.toBe(master);
    // Three copies of 2 pieces each, and a turn between copies.
    expect(turns).toBeGreaterThanOrEqual(6);
  });
});
