import { afterEach, describe, expect, it, vi } from 'vitest';
import { Clock } from '../../src/domain/clock.js';
import { DomainError } from '../../src/domain/errors.js';
import { compileSearch, SEARCH_LIMITS, searchAll } from '../../src/domain/search.js';
import { HttpError, onField } from '../../src/shared/errors.js';

// The sandbox's clock (src/domain/clock.ts) and the HAR log's bounded search (src/domain/search.ts).

describe('Clock', () => {
  afterEach(() => vi.useRealTimers());

  it('is the machine time until moved, and advance() adds to it', () => {
    vi.useFakeTimers({ now: 1_000_000 });
    const c = new Clock();
    expect(c.now()).toBe(1_000_000);
    c.advance(500);
    expect(c.now()).toBe(1_000_500);
    c.advance(0);
    c.advance(250);
    expect(c.now()).toBe(1_000_750);
    vi.setSystemTime(2_000_000);
    expect(c.now()).toBe(2_000_750);
    expect(c.state()).toEqual({ now: new Date(2_000_750).toISOString(), offset_ms: 750 });
  });

  it('advance() refuses a negative or non-finite amount, naming it, and changes nothing', () => {
    vi.useFakeTimers({ now: 1_000_000 });
    const c = new Clock();
    for (const ms of [-1, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => c.advance(ms)).toThrow(RangeError);
      expect(() => c.advance(ms)).toThrow(`advance_ms must be a number of milliseconds >= 0, not ${ms}`);
    }
    expect(c.now()).toBe(1_000_000);
  });

  it('set() takes an ISO date or epoch milliseconds, forward only; the same instant is allowed', () => {
    vi.useFakeTimers({ now: Date.parse('2026-01-01T00:00:00Z') });
    const c = new Clock();
    c.set('2026-01-02T00:00:00Z');
    expect(new Date(c.now()).toISOString()).toBe('2026-01-02T00:00:00.000Z');
    expect(c.state().offset_ms).toBe(86_400_000);
    c.set(c.now());
    expect(new Date(c.now()).toISOString()).toBe('2026-01-02T00:00:00.000Z');
    c.set(Date.parse('2026-01-03T00:00:00Z'));
    expect(c.state().offset_ms).toBe(2 * 86_400_000);
    expect(() => c.set('2026-01-02T12:00:00Z')).toThrow(
      'the clock only moves forward: 2026-01-02T12:00:00.000Z is before 2026-01-03T00:00:00.000Z',
    );
    expect(() => c.set('tomorrow')).toThrow('set must be an ISO 8601 date-time, not "tomorrow"');
    expect(() => c.set(Number.NaN)).toThrow(RangeError);
    expect(c.state().offset_ms).toBe(2 * 86_400_000);
  });

  it('reset() goes back to the machine time', () => {
    vi.useFakeTimers({ now: 5_000 });
    const c = new Clock();
    c.advance(60_000);
    c.reset();
    expect(c.now()).toBe(5_000);
    expect(c.state()).toEqual({ now: new Date(5_000).toISOString(), offset_ms: 0 });
  });
});

/** A refused search: the domain raises a DomainError, which the handler's onField makes the 400 naming query.search. */
async function refusal(run: () => unknown): Promise<{ status: number; field?: string; reason?: string }> {
  try {
    await run();
  } catch (err) {
    expect(err).toBeInstanceOf(DomainError);
    let named: unknown;
    try {
      onField('query.search', () => {
        throw err;
      });
    } catch (e) {
      named = e;
    }
    expect(named).toBeInstanceOf(HttpError);
    const e = named as HttpError;
    return { status: e.status, field: e.details?.[0]?.field, reason: e.details?.[0]?.reason };
  }
  throw new Error('the search was not refused');
}

describe('search', () => {
  const urls = ['http://a.test/x', 'http://b.test/status/404', 'http://c.test/y', 'http://a.test/status/500'];

  it('without a pattern, every item in order (a copy)', async () => {
    const all = await searchAll(urls, undefined, (u) => u);
    expect(all).toEqual(urls);
    expect(all).not.toBe(urls);
  });

  it('finds the pattern anywhere in the text, in order', async () => {
    expect(await searchAll(urls, 'status/', (u) => u)).toEqual([urls[1], urls[3]]);
    expect(await searchAll(urls, '^http://a', (u) => u)).toEqual([urls[0], urls[3]]);
    expect(await searchAll(urls, 'y$', (u) => u)).toEqual([urls[2]]);
    expect(await searchAll(urls, 'nothing', (u) => u)).toEqual([]);
    expect(await searchAll([{ u: 'AbC' }], 'B', (x) => x.u)).toEqual([]);
  });

  it('reads the items as they are when it starts', async () => {
    const items = [...urls];
    const found = searchAll(items, 'test', (u) => u);
    items.push('http://late.test/');
    expect(await found).toHaveLength(4);
  });

  it('a pattern at the length bound compiles; one character more is refused, naming query.search', async () => {
    expect(compileSearch('a'.repeat(SEARCH_LIMITS.length)).programSize()).toBeGreaterThan(0);
    expect(await refusal(() => compileSearch('a'.repeat(SEARCH_LIMITS.length + 1)))).toEqual({
      status: 400,
      field: 'query.search',
      reason: `is longer than ${SEARCH_LIMITS.length} characters`,
    });
  });

  it('a pattern RE2 cannot match in linear time, or not a pattern at all, is a 400 saying so', async () => {
    for (const p of ['(a)\\1', '(?=a)', '[']) {
      const r = await refusal(() => searchAll(urls, p, (u) => u));
      expect(r.status).toBe(400);
      expect(r.field).toBe('query.search');
      expect(r.reason).toMatch(/^is not a regular expression this sandbox can match in linear time \(RE2 syntax\): ./);
    }
  });

  it("RE2's message is clipped to 200 characters (it quotes the pattern)", async () => {
    const prefix = 'is not a regular expression this sandbox can match in linear time (RE2 syntax): ';
    const r = await refusal(() => compileSearch(`(${'a'.repeat(250)}`));
    expect(r.reason?.startsWith(`${prefix}error parsing regexp: missing closing )`)).toBe(true);
    expect(r.reason).toHaveLength(prefix.length + 200);
  });

  it('a short pattern that compiles large is refused with its size', async () => {
    // a{n} compiles to n + 2 instructions: 2,000 is the bound, 2,001 one over.
    expect(compileSearch('a{998}').programSize()).toBe(1_000);
    expect(compileSearch('a{999}b{999}').programSize()).toBe(SEARCH_LIMITS.program);
    const r = await refusal(() => compileSearch('a{999}b{1000}'));
    expect(r.field).toBe('query.search');
    expect(r.reason).toBe(
      `compiles to ${SEARCH_LIMITS.program + 1} instructions, more than the ${SEARCH_LIMITS.program} a search may take`,
    );
  });

  it('a search over more steps than allowed is refused before it runs, with the count', async () => {
    const size = compileSearch('x').programSize();
    const chars = Math.floor(SEARCH_LIMITS.steps / size / 2);
    const half = 'a'.repeat(chars);
    const r = await refusal(() => searchAll([half, half, 'ab'], 'x', (t) => t));
    expect(r.field).toBe('query.search');
    expect(r.reason).toBe(
      `would take ${size * (2 * chars + 2 + 3)} steps over this log (pattern size x characters), more than the ${SEARCH_LIMITS.steps} allowed`,
    );
  });

  /** Counts the search's yields to the event loop (setImmediate, run as a timer) until `restore()`. */
  function countYields(): { readonly count: number; restore(): void } {
    let count = 0;
    const spy = vi.spyOn(globalThis, 'setImmediate').mockImplementation(((fn: () => void) => {
      count++;
      return setTimeout(fn, 0);
    }) as unknown as typeof setImmediate);
    return {
      get count() {
        return count;
      },
      restore: () => spy.mockRestore(),
    };
  }

  /** Runs `test` with SEARCH_LIMITS changed (a bound of 200,000,000 steps is met exactly only by a 40M-character log). */
  async function withLimits(limits: Partial<Record<'steps' | 'slice', number>>, test: () => Promise<void>): Promise<void> {
    const bounds = SEARCH_LIMITS as { -readonly [K in keyof typeof SEARCH_LIMITS]: number };
    const saved = { ...bounds };
    Object.assign(bounds, limits);
    try {
      await test();
    } finally {
      Object.assign(bounds, saved);
    }
  }

  it('a search of exactly the steps allowed runs; one step more is refused', async () => {
    const size = compileSearch('x').programSize();
    await withLimits({ steps: size * 10 }, async () => {
      expect(await searchAll(['abcx', 'yyyx'], 'x', (t) => t)).toEqual(['abcx', 'yyyx']); // (4 + 1) x 2 characters
      const r = await refusal(() => searchAll(['abcx', 'yyyyx'], 'x', (t) => t));
      expect(r.reason).toBe(`would take ${size * 11} steps over this log (pattern size x characters), more than the ${size * 10} allowed`);
    });
  });

  it('a slice of exactly the slice bound does not yield; past it, it does', async () => {
    const size = compileSearch('x').programSize();
    const yields = countYields();
    try {
      await withLimits({ slice: size * 5 }, async () => {
        expect(await searchAll(['abcx'], 'x', (t) => t)).toEqual(['abcx']);
        expect(yields.count).toBe(0);
        expect(await searchAll(['abcx', 'x'], 'x', (t) => t)).toEqual(['abcx', 'x']);
        expect(yields.count).toBe(1);
      });
    } finally {
      yields.restore();
    }
  });

  it('yields to the event loop between slices, and still finds every match', async () => {
    const size = compileSearch('hit').programSize();
    const long = 'x'.repeat(Math.ceil(SEARCH_LIMITS.slice / size));
    const items = Array.from({ length: 6 }, (_, i) => (i % 2 ? `${long}hit` : long));
    const yields = countYields();
    try {
      const found = await searchAll(items, 'hit', (t) => t);
      expect(found).toHaveLength(3);
      expect(yields.count).toBe(6);
    } finally {
      yields.restore();
    }
  });

  it('a log under one slice never yields', async () => {
    const yields = countYields();
    try {
      expect(await searchAll(urls, 'b\\.test', (u) => u)).toEqual([urls[1]]);
      expect(yields.count).toBe(0);
    } finally {
      yields.restore();
    }
  });
});
