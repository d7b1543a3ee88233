import { describe, expect, it } from 'vitest';
import { useSandbox } from '../helpers.js';
import { workOf } from '../work-meter.js';

// Finding 6 of the hardening round three: a manager form body of 9,999 parameters `a[i]=1` (99 kB) held the
// event loop 1.08 s, five at once 5.6 s. qs (what the real manager reads forms with) walks a whole list at
// every merge and searches every object seen at its end, so its work grows with the square of the
// parameters. The sandbox reads forms in linear time (router/form.ts). Counted, not timed (work-meter.ts):
// the same request with N and with 4N parameters; linear work grows 4 times at most, qs's about 16 times.
const t = useSandbox();

const N = 1_000;
/** At most this many times the work of N parameters for 4N (linear: 4 at most; quadratic: about 16). */
const MAX_GROWTH = 6;

async function putForm(text: string) {
  const { work, result } = await workOf(async () => {
    const res = await t.sandbox.handle(
      'manager',
      new Request(`${t.sandbox.managerUrl}/api/settings`, {
        method: 'PUT',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: text,
      }),
    );
    return { status: res.status, text: await res.text() };
  });
  return { work, ...result };
}

describe('a manager form body is read in linear time, whatever its lists and nesting (counted, not timed)', () => {
  it.each([
    ['list items by index, l[i]=1', (i: number) => `l[${i}]=1`],
    ['list items by index, from the last, l[n-i]=1', (i: number, n: number) => `l[${n - 1 - i}]=1`],
    ['fields in list items, l[i][b]=1', (i: number) => `l[${i}][b]=1`],
    ['lists nested in fields, m[k{i}][i]=1', (i: number) => `m[k${i}][${i}]=1`],
  ])('%s', async (_, param) => {
    const form = (n: number) => ['har_limit=2048', ...Array.from({ length: n }, (_, i) => param(i, n))].join('&');
    const warm = await putForm(form(5));
    expect(warm.status, warm.text.slice(0, 300)).toBe(200);
    const small = await putForm(form(N));
    const large = await putForm(form(4 * N));
    for (const r of [small, large]) expect(r.status, r.text.slice(0, 300)).toBe(200);
    // The form was read (its setting applied), and the measure sees its parameters.
    expect(t.sandbox.state().manager.settings.har_limit).toBe(2048);
    expect(large.work - small.work).toBeGreaterThan(3 * N);
    expect(large.work, `work for ${N} parameters: ${small.work}; for ${4 * N}: ${large.work}`).toBeLessThan(MAX_GROWTH * small.work);
  });
});
