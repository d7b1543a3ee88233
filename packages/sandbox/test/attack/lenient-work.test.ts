import { describe, expect, it } from 'vitest';
import { IGNORED_FIELDS_HEADER } from '../../src/router/lenient-headers.js';
import { bearer, STATIC, useSandbox } from '../helpers.js';
import { workOf } from '../work-meter.js';

// Finding 4 of the hardening issue: lenient mode was quadratic in unknown fields (a 711 kB body held every
// request for 31 s). A test that only times it out lets a quadratic step through on a fast machine and
// fails a linear one on a loaded machine; this one counts the work instead (work-meter.ts: what the
// built-ins that walk lists, sets and texts walked), the same request with N and with 4N unknown fields.
// Linear work grows 4 times (less: each request also does a fixed amount); a search of the names already
// seen per field (`ignored.includes(name)`, `[...ignored].includes(name)`) grows 16 times.
const t = useSandbox();

const N = 2_000;
/** At most this many times the work of N fields for 4N (linear: 4 at most; quadratic: about 16). */
const MAX_GROWTH = 6;

const fields = (n: number, from = 0) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`f${from + i}`, i]));

async function send(api: 'account' | 'manager', method: string, path: string, body: unknown) {
  const text = JSON.stringify(body);
  const headers = { 'content-type': 'application/json', ...(api === 'account' ? bearer : {}) };
  const base = api === 'account' ? t.sandbox.accountUrl : t.sandbox.managerUrl;
  const { work, result } = await workOf(async () => {
    const res = await t.sandbox.handle(api, new Request(`${base}${path}`, { method, headers, body: text }));
    return { status: res.status, header: res.headers.get(IGNORED_FIELDS_HEADER) ?? '', text: await res.text() };
  });
  return { work, ...result };
}

type Route = [label: string, api: 'account' | 'manager', method: string, path: string, body: (n: number, i: number) => unknown];
const routes: Route[] = [
  // Checked against the spec's schema: the ignored fields are found by the request checker (router/lenient.ts).
  [
    'an account API body (the request checker: ignored fields found, removed, listed)',
    'account',
    'POST',
    '/api/zone/switch_100uptime',
    (n) => ({ zone: STATIC, active: 1, ...fields(n) }),
  ],
  // Read as the real manager reads them (x-observed-unchecked): the handler lists what it ignores, or stores them.
  ['the manager settings (the handler lists what it ignores)', 'manager', 'PUT', '/api/settings', (n) => ({ logs: 1000, ...fields(n) })],
  [
    "a port's configuration (stored with its unknown fields, as the real manager stores them)",
    'manager',
    'POST',
    '/api/proxies',
    (n, i) => ({ proxy: { port: 26000 + i, zone: STATIC, ...fields(n) } }),
  ],
];

// Each route is measured at N and 4N fields on each side of LARGE_BODY (64 KiB, router/bodies.ts): a smaller
// body is parsed whole, a larger one in pieces (in-pieces.ts), which reads its text a few more times (the
// checks before it, each piece's parse). A pair across that bound would compare two ways of reading a body,
// not the growth of one: 2,000 fields are 24 kB, 8,000 are 100 kB.
const SIZES = [
  ['parsed whole', 500],
  ['parsed in pieces', 6_000],
] as const;

describe.each(SIZES)(
  'lenient mode: the work of a request grows linearly with its unknown fields (counted, not timed), bodies %s',
  (_, N) => {
    it.each(routes)(
      '%s',
      async (_, api, method, path, body) => {
        // Once small first: what a route does once (compiling its schemas) is not counted against N.
        const warm = await send(api, method, path, body(5, 3 * N));
        expect(warm.status, warm.text.slice(0, 300)).toBeLessThan(300);
        const small = await send(api, method, path, body(N, 3 * N + 1));
        const large = await send(api, method, path, body(4 * N, 3 * N + 2));
        for (const r of [small, large]) expect(r.status, r.text.slice(0, 300)).toBeLessThan(300);
        if (api === 'account' || path === '/api/settings') {
          // The fields were ignored and listed: the lenient path ran.
          expect(small.header).toMatch(new RegExp(`\\(${N - 20} more\\)$`));
          expect(large.header).toMatch(new RegExp(`\\(${4 * N - 20} more\\)$`));
        }
        // The measure sees the fields (their text is read at least once): the ratio below means something.
        expect(large.work - small.work).toBeGreaterThan(3 * N);
        expect(large.work, `work for ${N} fields: ${small.work}; for ${4 * N}: ${large.work}`).toBeLessThan(MAX_GROWTH * small.work);
      },
      60_000,
    );
  },
);

describe('the measure itself', () => {
  // The two forms a quadratic lenient step took (the original one, and one found by mutation later).
  const quadratic = (n: number, spread: boolean) => {
    const names = Object.keys(fields(n));
    const seen = new Set<string>();
    const list: string[] = [];
    for (const name of names) {
      if (spread ? [...seen].includes(name) : list.includes(name)) continue;
      seen.add(name);
      list.push(name);
    }
    return list.length;
  };
  const linear = (n: number) => {
    const seen = new Set<string>();
    for (const name of Object.keys(fields(n))) if (!seen.has(name)) seen.add(name);
    return seen.size;
  };

  it.each([
    ['list.includes', false],
    ['[...set].includes', true],
  ] as const)('counts a search per field (%s) as quadratic: 4N fields cost about 16 times N', async (_, spread) => {
    // Fewer fields where the set is spread (a spread of a Set walked by its counted iterator is slow).
    const n = spread ? N / 4 : N;
    const small = await workOf(() => quadratic(n, spread));
    const large = await workOf(() => quadratic(4 * n, spread));
    expect([small.result, large.result]).toEqual([n, 4 * n]);
    expect(large.work).toBeGreaterThan(12 * small.work);
  });

  it('counts a pass per input as linear: 4N fields cost about 4 times N', async () => {
    const small = await workOf(() => linear(N));
    const large = await workOf(() => linear(4 * N));
    expect([small.result, large.result]).toEqual([N, 4 * N]);
    expect(large.work).toBeGreaterThan(3 * small.work);
    expect(large.work).toBeLessThan(MAX_GROWTH * small.work);
  });
});
