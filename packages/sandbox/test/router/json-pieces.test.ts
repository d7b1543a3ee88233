import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonAnswer, jsonPieces, KEEP_BYTES, PIECE, VALUES_PER_PIECE, weighsMore } from '../../src/router/json-pieces.js';

// A large answer is serialised in pieces (router/json-pieces.ts); its bytes must be JSON.stringify's.

const joined = (v: unknown) => [...jsonPieces(v)].join('');
const same = (v: unknown) => expect(joined(v)).toBe(JSON.stringify(v) ?? '');
/** `v` inside an answer heavy enough to be walked, beside a string long enough to be sliced. */
const heavy = (v: unknown, pad = 0) => ({ pad: 'z'.repeat(PIECE + pad), v, list: [v, 'y'.repeat(PIECE), v] });

describe('jsonPieces writes what JSON.stringify writes', () => {
  it('a string longer than a piece is written in slices, never between the halves of a surrogate pair', () => {
    // An emoji across the first cut, lone surrogates (escaped by JSON.stringify), escapes and two-byte characters.
    const s = `${'a'.repeat(PIECE - 1)}\u{1F600}${'"\n\\'.repeat(50_000)}\ud800x\udc00${'é'.repeat(PIECE)}`;
    const pieces = [...jsonPieces({ s })];
    expect(pieces.length).toBeGreaterThan(2);
    expect(pieces.join('')).toBe(JSON.stringify({ s }));
    // Each piece is text of its own: its UTF-8 bytes are those of the whole when joined (no half pair).
    expect(Buffer.concat(pieces.map((p) => Buffer.from(p))).toString()).toBe(JSON.stringify({ s }));
  });

  it('what JSON.stringify leaves out or writes as null, toJSON with its key, inside walked objects and lists', () => {
    const v = {
      u: undefined,
      f: () => 1,
      sym: Symbol('x'),
      d: new Date(0),
      n: Number.NaN,
      inf: Number.POSITIVE_INFINITY,
      z: -0,
      list: [undefined, () => 1, Symbol('y'), Number.NaN],
      gone: { toJSON: () => undefined },
      named: { toJSON: (k: string) => `key ${k}` },
      boxed: [Object('s'), Object(1), Object(false)],
      many: Array.from({ length: 8000 }, (_, i) => ({
        t: { toJSON: (k: string) => `${k}${'x'.repeat(200)}` },
        u: { toJSON: () => undefined },
        i,
      })),
    };
    expect(weighsMore(v, PIECE)).toBe(true);
    same(v);
    same(heavy(v));
  });

  it('an object of 60,000 fields (a port of the lenient body), a null-prototype object, 2**31 keys order', () => {
    const o: Record<string, unknown> = Object.create(null);
    for (let i = 0; i < 60_000; i++) o[`f${i}`] = i % 3 ? i : { a: [i, 'x'.repeat(i % 50)], u: undefined };
    o['7'] = 'an integer key, written first';
    same({ data: o });
    expect([...jsonPieces({ data: o })].length).toBeGreaterThan(1);
  });

  it('any JSON value and any value JSON.stringify takes, inside a heavy answer', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.nat(3), (v, pad) => {
        same(v);
        same(heavy(v, pad));
      }),
      { numRuns: 100, seed: 20 },
    );
    fc.assert(
      fc.property(fc.anything({ withBoxedValues: true, withDate: true, withNullPrototype: true, withSparseArray: true }), (v) => {
        let expected: string | undefined;
        try {
          expected = JSON.stringify(heavy(v));
        } catch {
          return;
        }
        expect(joined(heavy(v))).toBe(expected);
      }),
      { numRuns: 100, seed: 20 },
    );
  });

  it('a cycle throws as JSON.stringify does, not loop', () => {
    const cyc: Record<string, unknown> = { big: 'x'.repeat(PIECE * 2) };
    cyc.self = [cyc];
    expect(() => joined(cyc)).toThrow(/circular/);
  });

  it('nothing to write yields nothing; a small answer is one piece', () => {
    expect([...jsonPieces(undefined)]).toEqual([]);
    expect([...jsonPieces({ toJSON: () => undefined })]).toEqual([]);
    expect([...jsonPieces({ a: [1, 'b'] })]).toEqual(['{"a":[1,"b"]}']);
  });

  it('a piece holds VALUES_PER_PIECE values at most: an object of 60,000 small fields is written in 8 pieces or more', () => {
    const o = Object.fromEntries(Array.from({ length: 60_000 }, (_, i) => [`f${i}`, i]));
    // 60,000 fields of about 14 characters: 3 or 4 pieces by characters alone.
    const pieces = [...jsonPieces({ data: o })];
    expect(pieces.length).toBeGreaterThanOrEqual(Math.floor(60_000 / VALUES_PER_PIECE));
    expect(pieces.join('')).toBe(JSON.stringify({ data: o }));
  });

  it('pieces stay near PIECE characters, and jsonAnswer counts their bytes', async () => {
    const log = { entries: Array.from({ length: 3 }, (_, i) => ({ i, text: 'é'.repeat(3 * PIECE + i) })), total: 3 };
    const pieces = [...jsonPieces(log)];
    expect(pieces.length).toBeGreaterThanOrEqual(9);
    expect(Math.max(...pieces.map((p) => p.length))).toBeLessThanOrEqual(2 * PIECE + 64);
    const { chunks, bytes } = await jsonAnswer(log);
    const whole = Buffer.from(JSON.stringify(log));
    expect(bytes).toBe(whole.length);
    const read: Buffer[] = [];
    for await (const b of chunks) read.push(b);
    expect(Buffer.concat(read).equals(whole)).toBe(true);
    // Under KEEP_BYTES: the pieces made once, kept.
    const small = { text: 'é'.repeat(3 * PIECE) };
    const kept = await jsonAnswer(small);
    expect(Array.isArray(kept.chunks)).toBe(true);
    expect(Buffer.concat([...(kept.chunks as Buffer[])]).equals(Buffer.from(JSON.stringify(small)))).toBe(true);
  });

  it('past KEEP_BYTES the first pass keeps nothing: the pieces are made again as they are read, the same bytes', async () => {
    const log = { entries: Array.from({ length: 3 }, (_, i) => ({ i, text: `${'a'.repeat(KEEP_BYTES / 2)}"é\u{1F600}${i}` })) };
    const { chunks, bytes } = await jsonAnswer(log);
    expect(Array.isArray(chunks)).toBe(false);
    const read: Buffer[] = [];
    for await (const b of chunks) read.push(b);
    const whole = Buffer.from(JSON.stringify(log));
    expect(bytes).toBe(whole.length);
    expect(Buffer.concat(read).equals(whole)).toBe(true);
  });

  it('an answer changed between the passes fails rather than send other bytes than its length', async () => {
    const log = { entries: [{ text: 'a'.repeat(KEEP_BYTES + 1) }] as Array<{ text: string }> };
    const { chunks } = await jsonAnswer(log);
    log.entries.push({ text: 'more' });
    await expect(
      (async () => {
        for await (const _ of chunks);
      })(),
    ).rejects.toThrow(/changed while it was sent/);
  });
});

describe('weighsMore', () => {
  it('weighs without serialising, and stops at the limit (a cycle included)', () => {
    expect(weighsMore({ a: 'x'.repeat(100) }, 1000)).toBe(false);
    expect(weighsMore({ a: 'x'.repeat(1000) }, 1000)).toBe(true);
    expect(
      weighsMore(
        Array.from({ length: 2000 }, () => 0),
        1000,
      ),
    ).toBe(true);
    const cyc: Record<string, unknown> = {};
    cyc.self = cyc;
    expect(weighsMore(cyc, 1000)).toBe(true);
  });
});
