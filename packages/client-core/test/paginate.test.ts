import { describe, expect, it } from 'vitest';
import { DEFAULT_PAGE_SIZE, errorAt, MAX_PAGES, type Pagination, paginate, ZoneApiError } from '../src/index.js';

// paginate() over a recorded call (no server): which pages it asks for, when it stops, how it fails.

type Init = { params?: { query?: Record<string, unknown>; path?: Record<string, unknown> }; headers?: Record<string, string> };
const PAGE: Pagination = { style: 'page', page: 'page', size: 'page_size' };
const OFFSET: Pagination = { style: 'offset', offset: 'skip', limit: 'limit', items: '/log/entries', total: '/log/total' };

/** A call that answers from `pages` (by the position asked) and records every query it was sent. */
function pagedCall(answer: (query: Record<string, unknown>) => { data?: unknown; error?: unknown; status?: number }) {
  const queries: Record<string, unknown>[] = [];
  const inits: Init[] = [];
  const call = async (init: Record<string, unknown>) => {
    const i = init as Init;
    inits.push(i);
    const query = i.params?.query ?? {};
    queries.push(query);
    const a = answer(query);
    return { data: a.data, error: a.error, response: new Response(null, { status: a.status ?? 200 }) };
  };
  return { call, queries, inits };
}

async function all<T>(gen: AsyncGenerator<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of gen) out.push(x);
  return out;
}

const range = (from: number, n: number) => Array.from({ length: n }, (_, k) => from + k);

describe('paginate, page style', () => {
  it('asks page after page from 0 with the default size, keeps the rest of the call, stops on a short page', async () => {
    const c = pagedCall((q) => ({ data: q.page === 2 ? [200, 201] : range(Number(q.page) * 100, DEFAULT_PAGE_SIZE) }));
    const items = await all(
      paginate<number>(c.call, PAGE, { params: { query: { zone: 'z' }, path: { p: 1 } }, headers: { x: 'y' } }, 'GET', '/x'),
    );
    expect(items).toHaveLength(202);
    expect(items.slice(0, 2)).toEqual([0, 1]);
    expect(items.at(-1)).toBe(201);
    expect(c.queries).toEqual([
      { zone: 'z', page: 0, page_size: DEFAULT_PAGE_SIZE },
      { zone: 'z', page: 1, page_size: DEFAULT_PAGE_SIZE },
      { zone: 'z', page: 2, page_size: DEFAULT_PAGE_SIZE },
    ]);
    expect(c.inits.every((i) => i.params?.path?.p === 1 && i.headers?.x === 'y')).toBe(true);
  });

  it("starts at the caller's page with the caller's size, and stops on an empty page", async () => {
    const c = pagedCall((q) => ({ data: Number(q.page) < 5 ? ['a', 'b'] : [] }));
    const items = await all(paginate<string>(c.call, PAGE, { params: { query: { page: 3, page_size: 2 } } }, 'GET', '/x'));
    expect(items).toEqual(['a', 'b', 'a', 'b']);
    expect(c.queries.map((q) => [q.page, q.page_size])).toEqual([
      [3, 2],
      [4, 2],
      [5, 2],
    ]);
  });

  it('a page that answers an error status throws a ZoneApiError naming the status and the page', async () => {
    const c = pagedCall((q) => (q.page === 1 ? { error: { error: 'no' }, status: 503 } : { data: range(0, 2) }));
    const seen: number[] = [];
    const walk = async () => {
      for await (const x of paginate<number>(c.call, PAGE, { params: { query: { page_size: 2 } } }, 'GET', '/api/x')) seen.push(x);
    };
    const err = await walk().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ZoneApiError);
    expect(err).toMatchObject({ kind: 'http', status: 503, method: 'GET', path: '/api/x', message: 'GET /api/x answered 503 on page 1' });
    expect(seen).toEqual([0, 1]);
  });

  it('a 2xx page without a list, or a non-ok status without an error body, throws too', async () => {
    const notList = pagedCall(() => ({ data: { items: [] } }));
    await expect(all(paginate(notList.call, PAGE, undefined, 'GET', '/x'))).rejects.toThrow('GET /x answered a page without a list');
    const notOk = pagedCall(() => ({ data: [], status: 500 }));
    await expect(all(paginate(notOk.call, PAGE, undefined, 'GET', '/x'))).rejects.toMatchObject({ status: 500 });
  });
});

describe('paginate, offset style', () => {
  it('advances by the items received, reads them at the pointer, and stops when the offset reaches the total', async () => {
    const total = 7;
    const c = pagedCall((q) => {
      const from = Number(q.skip);
      return { data: { log: { entries: range(from, Math.min(3, total - from)), total } } };
    });
    const items = await all(paginate<number>(c.call, OFFSET, { params: { query: { limit: 3 } } }, 'GET', '/x'));
    expect(items).toEqual(range(0, 7));
    expect(c.queries.map((q) => q.skip)).toEqual([0, 3, 6]);
  });

  it('without a total it walks until a short page; a total reached on a full page stops without another call', async () => {
    const noTotal: Pagination = { style: 'offset', offset: 'skip', limit: 'limit', items: '/entries' };
    const c = pagedCall((q) => ({ data: { entries: Number(q.skip) < 4 ? range(Number(q.skip), 2) : [9] } }));
    expect(await all(paginate<number>(c.call, noTotal, { params: { query: { limit: 2 } } }, 'GET', '/x'))).toEqual([0, 1, 2, 3, 9]);
    expect(c.queries.map((q) => q.skip)).toEqual([0, 2, 4]);
    const exact = pagedCall((q) => ({ data: { log: { entries: range(Number(q.skip), 2), total: 4 } } }));
    expect(await all(paginate<number>(exact.call, OFFSET, { params: { query: { limit: 2 } } }, 'GET', '/x'))).toEqual([0, 1, 2, 3]);
    expect(exact.queries).toHaveLength(2);
  });

  it('reads items at a pointer with escaped segments (~1 is /, ~0 is ~)', async () => {
    const escaped: Pagination = { style: 'offset', offset: 'o', limit: 'l', items: '/a~1b/c~0d' };
    const c = pagedCall(() => ({ data: { 'a/b': { 'c~d': ['x'] } } }));
    expect(await all(paginate<string>(c.call, escaped, undefined, 'GET', '/x'))).toEqual(['x']);
  });
});

describe('errorAt', () => {
  const result = (status: number, error?: unknown) => ({ error, response: new Response(null, { status }) });
  it('gives the error of the status asked for, and nothing for another status or no error', () => {
    const body = { errors: [{ msg: 'bad' }] };
    expect(errorAt(result(400, body) as never, 400 as never)).toBe(body);
    expect(errorAt(result(401, body) as never, 400 as never)).toBeUndefined();
    expect(errorAt(result(400) as never, 400 as never)).toBeUndefined();
  });
});

describe('paginate, where a walk ends', () => {
  it('a 2xx page that is an error (an undeclared media type) throws naming the status and page', async () => {
    const c = pagedCall(() => ({ error: { kind: 'media-type' }, status: 200 }));
    await expect(all(paginate(c.call, PAGE, undefined, 'GET', '/x'))).rejects.toMatchObject({
      kind: 'http',
      status: 200,
      message: 'GET /x answered 200 on page 0',
    });
  });

  it('a page without a list is kind http; a pointer through null or a missing member finds no list', async () => {
    for (const data of [{ items: [] }, {}, { log: null }, { log: 'text' }]) {
      const c = pagedCall(() => ({ data }));
      const style = 'items' in data ? PAGE : OFFSET;
      await expect(all(paginate(c.call, style, undefined, 'GET', '/x')), JSON.stringify(data)).rejects.toMatchObject({
        kind: 'http',
        status: 200,
        message: 'GET /x answered a page without a list',
      });
    }
  });

  it('an empty page ends the walk even with a page size of 0', async () => {
    const c = pagedCall(() => ({ data: [] }));
    expect(await all(paginate(c.call, PAGE, { params: { query: { page_size: 0 } } }, 'GET', '/x'))).toEqual([]);
    expect(c.queries).toHaveLength(1);
  });

  it('a total that is not a number is not trusted: the walk goes on to the short page', async () => {
    const c = pagedCall((q) => ({ data: { log: { entries: Number(q.skip) < 4 ? range(Number(q.skip), 2) : [4], total: '3' } } }));
    expect(await all(paginate<number>(c.call, OFFSET, { params: { query: { limit: 2 } } }, 'GET', '/x'))).toEqual([0, 1, 2, 3, 4]);
    expect(c.queries.map((q) => q.skip)).toEqual([0, 2, 4]);
  });

  it(`a server that never stops answering full pages is asked ${MAX_PAGES} pages, no more`, async () => {
    let calls = 0;
    const call = async () => {
      calls++;
      return { data: [calls], response: new Response(null, { status: 200 }) };
    };
    let items = 0;
    for await (const _ of paginate(call, PAGE, { params: { query: { page_size: 1 } } }, 'GET', '/x')) items++;
    expect(calls).toBe(MAX_PAGES);
    expect(items).toBe(MAX_PAGES);
  });
});
