import { beforeAll, describe, expect, it, vi } from 'vitest';
import { call, type Reply, usePair } from './pair.js';

// How the real local proxy manager 1.570.247 reads the query of its logs (lib/manager.js 715-757,
// lib/loki.js 123-131; web_api.js 1438-1443 for the general log): the text as sent, converted as
// JavaScript converts it, never refused. Played against it and the sandbox side by side (pair.ts) on the
// same four requests through a port of each, and compared value by value; the real answer is asserted too.

const pair = usePair();

type Entry = { request: { url: string } };
type Logs = { log: { entries: Entry[] }; total: number; skip: unknown };

const PATHS = ['/lq-a?st=200', '/lq-b?st=404', '/lq-c?st=500', '/lq-d?st=200'];
/** The logged paths, in the answer's order, with the page's total and echoed skip. */
const page = (r: Reply) => {
  const b = r.body as Logs;
  return { entries: b.log.entries.map((e) => new URL(e.request.url).pathname), total: b.total, skip: b.skip };
};

beforeAll(async () => {
  await pair.createBoth(25900);
  for (const path of PATHS) {
    const [real, sbx] = await pair.through(25900, path);
    expect(sbx.status).toBe(real.status);
  }
  // The real manager logs a request a moment after answering it (a hook has no expect.poll: vi.waitFor,
  // with the bound the real-manager project gives expect.poll).
  await vi.waitFor(
    async () =>
      expect(((await call(pair.manager.url, 'GET', '/api/logs')).body as Logs).total, 'the real manager logged the four requests').toBe(4),
    { timeout: 10_000, interval: 100 },
  );
  await pair.sandbox.settled();
}, 60_000);

/** getLogs with `query` (sorted by URL unless it says otherwise) on both: 200, the same page. */
async function same(query: string) {
  const [real, sbx] = await pair.both(() => ['GET', `/api/logs?${query}`]);
  expect(real.status, `real manager: ${query}`).toBe(200);
  expect(sbx.status, `sandbox: ${query} ${JSON.stringify(sbx.body)}`).toBe(200);
  expect(page(sbx), query).toEqual(page(real));
  return page(real);
}

describe('getLogs: the query as the real manager reads it', () => {
  it('a negative skip counts from the end and is echoed; a fraction is cut; a text that is no number is 0', async () => {
    expect(await same('sort=url&skip=-2')).toEqual({ entries: ['/lq-c', '/lq-d'], total: 4, skip: -2 });
    expect(await same('sort=url&skip=-3&limit=2')).toEqual({ entries: ['/lq-b', '/lq-c'], total: 4, skip: -3 });
    expect(await same('sort=url&skip=1.5&limit=2.7')).toEqual({ entries: ['/lq-b', '/lq-c'], total: 4, skip: 1.5 });
    expect(await same('sort=url&skip=abc')).toMatchObject({ entries: ['/lq-a', '/lq-b', '/lq-c', '/lq-d'], skip: 0 });
  });

  it('limit 0 or no number is every entry; a negative limit leaves out as many from the end', async () => {
    for (const limit of ['0', 'abc', ''])
      expect(await same(`sort=url&limit=${limit}`)).toMatchObject({ entries: ['/lq-a', '/lq-b', '/lq-c', '/lq-d'] });
    expect(await same('sort=url&limit=-1')).toMatchObject({ entries: ['/lq-a', '/lq-b', '/lq-c'] });
  });

  it('sort_desc: any text but an empty one is descending', async () => {
    for (const desc of ['1', '0', 'x', 'false'])
      expect(await same(`sort=url&sort_desc=${desc}`)).toMatchObject({ entries: ['/lq-d', '/lq-c', '/lq-b', '/lq-a'] });
    expect(await same('sort=url&sort_desc=')).toMatchObject({ entries: ['/lq-a', '/lq-b', '/lq-c', '/lq-d'] });
  });

  it('port bounds compared as numbers; a from that is no number matches none, an empty bound is no filter; a status that is no number matches none', async () => {
    expect(await same('sort=url&port_from=0&port_to=99999')).toMatchObject({ total: 4 });
    expect(await same('sort=url&port_from=abc&port_to=99999')).toMatchObject({ entries: [], total: 0 });
    expect(await same('sort=url&port_from=1&port_to=abc')).toMatchObject({ total: 4 });
    expect(await same('sort=url&port_from=&port_to=1')).toMatchObject({ total: 4 });
    expect(await same('sort=url&status_code=abc')).toMatchObject({ entries: [], total: 0 });
    expect(await same('sort=url&status_code=2**')).toMatchObject({ entries: ['/lq-a', '/lq-d'] });
  });

  it('a search alone that matches every entry lists them all with total 0; one that matches some, or with another filter, counts them', async () => {
    // The real log store leaves a result that one branch of the search matched whole unfiltered, and
    // counts it as empty (lum_lokijs findOr 3256-3287, Collection.count 5515-5521).
    expect(await same('sort=url&search=lq-')).toEqual({ entries: ['/lq-a', '/lq-b', '/lq-c', '/lq-d'], total: 0, skip: 0 });
    expect(await same('sort=url&search=lq-[ab]')).toEqual({ entries: ['/lq-a', '/lq-b'], total: 2, skip: 0 });
    expect(await same('sort=url&search=lq-&status_code=2**')).toMatchObject({ entries: ['/lq-a', '/lq-d'], total: 2 });
    expect(await same('sort=url&search=lq-&port_from=0&port_to=99999')).toMatchObject({ total: 4 });
    expect(await same('sort=url&search=lq-&limit=1')).toMatchObject({ entries: ['/lq-a'], total: 0 });
  });

  it('port, content_type and protocol filter exactly (the real manager reads them, lib/manager.js 741-749); each answer named by its kind as the real one names it', async () => {
    // Last in this block: its requests (through a second port) add to the log the tests above read.
    await pair.createBoth(25901);
    const TYPES = [
      'application/json',
      'text/html; charset=utf-8',
      'application/javascript',
      'text/css',
      'image/svg+xml',
      'video/mp4',
      'font/woff2',
      'application/octet-stream',
      'application/vnd.api+json; profile=html',
    ];
    for (const [i, type] of TYPES.entries()) {
      const [real, sbx] = await pair.through(25901, `/lq-t${i}?ct=${encodeURIComponent(type)}`);
      expect(real.status, type).toBe(200);
      expect(sbx.status, type).toBe(200);
    }
    await expect
      .poll(async () => ((await call(pair.manager.url, 'GET', '/api/logs')).body as Logs).total, {
        message: `the real manager logged the ${TYPES.length} more requests`,
      })
      .toBe(4 + TYPES.length);
    await pair.sandbox.settled();
    type Detailed = { request: { url: string }; details: { content_type: string } };
    /** `[path, kind]` of each entry the query lists, and the total, on both (the port named for each side). */
    const kinds = async (query: (at: (p: number) => number) => string) => {
      const [real, sbx] = await pair.both((at) => ['GET', `/api/logs?sort=url&${query(at)}`]);
      const read = (r: Reply) => {
        const b = r.body as { log: { entries: Detailed[] }; total: number };
        return { total: b.total, entries: b.log.entries.map((e) => [new URL(e.request.url).pathname, e.details.content_type]) };
      };
      expect(
        read(sbx),
        query((p) => p),
      ).toEqual(read(real));
      return read(real);
    };
    const second = await kinds((at) => `port=${at(25901)}`);
    expect(second.entries).toEqual([
      ['/lq-t0', 'xhr'],
      ['/lq-t1', 'html'],
      ['/lq-t2', 'js'],
      ['/lq-t3', 'css'],
      ['/lq-t4', 'img'],
      ['/lq-t5', 'media'],
      ['/lq-t6', 'font'],
      ['/lq-t7', 'other'],
      ['/lq-t8', 'xhr'],
    ]);
    expect(second.total).toBe(TYPES.length);
    expect((await kinds(() => 'content_type=xhr')).entries).toEqual([
      ['/lq-t0', 'xhr'],
      ['/lq-t8', 'xhr'],
    ]);
    expect((await kinds(() => 'content_type=json')).total).toBe(0);
    expect((await kinds(() => 'protocol=http')).total).toBe(4 + TYPES.length);
    expect((await kinds(() => 'protocol=https')).total).toBe(0);
    expect((await kinds(() => 'port=abc')).total).toBe(0);
    // `port` in place of a range; a search with another filter after it is counted.
    expect((await kinds((at) => `port_from=${at(25900)}&port_to=${at(25900)}&port=${at(25901)}`)).total).toBe(TYPES.length);
    expect((await kinds((at) => `search=lq-t&port=${at(25901)}`)).total).toBe(TYPES.length);
  });
});

describe('getGeneralLogs: limit as the real manager reads it', () => {
  it('0, a negative number and a text that is no number: 200 text, as the real manager', async () => {
    for (const limit of ['0', '-1', 'abc', '2']) {
      const [real, sbx] = await pair.both(() => ['GET', `/api/general_logs?limit=${limit}`]);
      expect(real.status, `real manager: limit=${limit}`).toBe(200);
      expect({ status: sbx.status, media: sbx.media }, `limit=${limit}`).toEqual({ status: real.status, media: real.media });
    }
    // The lines themselves are each program's own; the sandbox's log: 0 and `abc` the whole, -1 all but the first, 2 the last two.
    const lines = async (limit: string) => String((await pair.both(() => ['GET', `/api/general_logs?limit=${limit}`]))[1].body).split('\n');
    const all = await lines('0');
    expect(all.length).toBeGreaterThan(2);
    expect(await lines('abc')).toEqual(all);
    expect(await lines('-1')).toEqual(all.slice(1));
    expect(await lines('2')).toEqual(all.slice(-2));
  });
});

describe('getNodeVersion', () => {
  it('current is the version string, with the real manager’s recommended range', async () => {
    const [real, sbx] = await pair.both(() => ['GET', '/api/node_version']);
    expect(real.body).toMatchObject({ current: process.versions.node, recommended: '>=20.12.1' });
    expect(sbx.body).toEqual(real.body);
  });
});
