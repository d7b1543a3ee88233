import { describe, expect, it } from 'vitest';
import { useSandbox } from '../helpers.js';

// The clients' `paginate` walks against the sandbox's seeded records (60 request logs, 40 HAR
// entries), across page boundaries: every record once, in order, and no request after the last page.

const t = useSandbox();
type Middleware = Parameters<typeof t.account.use>[0];

/** Counts the requests a client sends, per path. */
function counter() {
  const seen: string[] = [];
  const mw: Middleware = {
    onRequest({ request }) {
      seen.push(new URL(request.url).search);
    },
  };
  return { seen, mw };
}

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

describe('paginate', () => {
  it('listRequestLogs: pages of 7 give the same 60 records as one big page, then stop on the short page', async () => {
    const all = (await t.account.listRequestLogs({ params: { query: { page_size: 1000 } } })).data ?? [];
    expect(all.length).toBe(60);
    const { seen, mw } = counter();
    t.account.use(mw);
    try {
      const walked = await collect(t.account.paginate('listRequestLogs', { params: { query: { page_size: 7 } } }));
      expect(walked).toEqual(all);
      // 8 full pages (56) and a short one (4): 9 requests, pages 0..8, each with the page size.
      expect(seen).toHaveLength(9);
      expect(seen.map((q) => new URLSearchParams(q).get('page'))).toEqual(['0', '1', '2', '3', '4', '5', '6', '7', '8']);
      expect(seen.every((q) => new URLSearchParams(q).get('page_size') === '7')).toBe(true);
    } finally {
      t.account.eject(mw);
    }
  });

  it('listRequestLogs: filters stay on every page; a walk may start at a later page', async () => {
    const zone = 'static_zone';
    const filtered = (await t.account.listRequestLogs({ params: { query: { zone, page_size: 1000 } } })).data ?? [];
    expect(filtered.length).toBeGreaterThan(3);
    expect(filtered.length).toBeLessThan(60);
    const walked = await collect(t.account.paginate('listRequestLogs', { params: { query: { zone, page_size: 3 } } }));
    expect(walked).toEqual(filtered);
    const fromSecond = await collect(t.account.paginate('listRequestLogs', { params: { query: { zone, page: 1, page_size: 3 } } }));
    expect(fromSecond).toEqual(filtered.slice(3));
  });

  it('getLogs: skip/limit pages give the 40 HAR entries once each, and the total ends the walk without an extra request', async () => {
    const all = (await t.manager.getLogs({ params: { query: { limit: 1000 } } })).data?.log.entries ?? [];
    expect(all.length).toBe(40);
    const { seen, mw } = counter();
    t.manager.use(mw);
    try {
      const walked = await collect(t.manager.paginate('getLogs', { params: { query: { limit: 8 } } }));
      expect(walked.map((e) => e.uuid)).toEqual(all.map((e) => e.uuid));
      // 5 full pages of 8 reach the total of 40: no sixth request.
      expect(seen.map((q) => new URLSearchParams(q).get('skip'))).toEqual(['0', '8', '16', '24', '32']);
      seen.length = 0;
      const short = await collect(t.manager.paginate('getLogs', { params: { query: { limit: 7, port_from: 24000, port_to: 24000 } } }));
      const port24000 = all.filter((e) => e.details?.port === 24000);
      expect(short.map((e) => e.uuid)).toEqual(port24000.map((e) => e.uuid));
      expect(seen.every((q) => new URLSearchParams(q).get('port_from') === '24000')).toBe(true);
    } finally {
      t.manager.eject(mw);
    }
  });

  it('a page that answers an error status throws, naming the status, after yielding the pages before it', async () => {
    const got: unknown[] = [];
    let thrown: unknown;
    try {
      for await (const r of t.account.paginate('listRequestLogs', { params: { query: { page_size: 20 } } })) {
        got.push(r);
        if (got.length === 20) {
          // The next page gets a 429 (the walk does not retry: this test's client has retries off).
          await fetch(`${t.sandbox.accountUrl}/__sandbox/faults`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ operationId: 'listRequestLogs', status: 429, count: 1 }),
          });
        }
      }
    } catch (err) {
      thrown = err;
    }
    expect(got).toHaveLength(20);
    expect(thrown).toMatchObject({ name: 'ZoneApiError', kind: 'http', status: 429 });
    expect(String((thrown as Error).message)).toMatch(/429 on page 1/);
  });

  it('refuses an operation that is not paged', () => {
    // @ts-expect-error getZone has no x-pagination
    expect(() => t.account.paginate('getZone')).toThrow(/not a paged operation/);
  });
});
