import fc from 'fast-check';
import { parse as qsParse } from 'qs';
import { describe, expect, it } from 'vitest';
import { type FormLimits, formWalk, PARAMETERS_PER_PIECE, parseForm, parseFormInPieces } from '../../src/router/form.js';
import { FORM_PARAMETER_LIMIT, formLimits } from '../../src/router/form-body.js';

// The sandbox reads a form body in linear time (router/form.ts); the real manager reads it with qs 6.13.0
// (the version its body-parser 1.20.3 installs, a devDependency here at exactly that version), set up as
// body-parser sets it up. Each generated form is read by both: the same fields, lists and values, or both
// refuse it (a name nested too deep).

/** qs set up as body-parser 1.20.3 sets it up for `limits` (types/urlencoded.js 170-176), prototype names dropped as the sandbox drops them. */
const qsOptions = (limits: FormLimits) => ({ ...limits, strictDepth: true, allowPrototypes: false });

type Read = { fields: unknown } | { refused: string };
function attempt(read: () => unknown): Read {
  try {
    return { fields: read() };
  } catch (err) {
    return { refused: err instanceof RangeError ? 'RangeError' : String(err) };
  }
}
const both = (text: string, limits: FormLimits) => ({
  sandbox: attempt(() => parseForm(text, limits)),
  qs: attempt(() => qsParse(text, qsOptions(limits))),
});

// Small alphabets, so that names meet (repeated, a list and fields at one name, a value where a list is).
const parent = fc.constantFrom(
  'a',
  'b',
  '0',
  '1',
  'x y',
  'a.b',
  '',
  '[',
  ']',
  'a]',
  'constructor',
  '__proto__',
  'toString',
  '%5B',
  '%5bb%5D',
  '%61',
  '+',
  '%zz',
  '%',
);
const step = fc.constantFrom(
  '[]',
  '[a]',
  '[b]',
  '[0]',
  '[1]',
  '[2]',
  '[3]',
  '[00]',
  '[-1]',
  '[-0]',
  '[NaN]',
  '[1e2]',
  '[ 1]',
  '[100]',
  '[101]',
  '[__proto__]',
  '[constructor]',
  '[hasOwnProperty]',
  '[x]y',
  '[[a]]',
  '[a',
  ']',
  '%5B0%5D',
  '%5B%5D',
  '[%61]',
  '[+]',
);
const value = fc.constantFrom('', '1', 'x', 'a+b', '%20', '%zz', '%E2%9C%93', 'a=b', ']=', '[b]', '%5B', 'constructor', 'toString', '0');
const deep = fc.integer({ min: 1, max: 36 }).map((n) => `d${'[a]'.repeat(n)}`);
const name = fc.oneof(
  { weight: 8, arbitrary: fc.tuple(parent, fc.array(step, { maxLength: 4 })).map(([p, s]) => p + s.join('')) },
  { weight: 1, arbitrary: deep },
);
const part = fc.oneof(
  { weight: 6, arbitrary: fc.tuple(name, value).map(([n, v]) => `${n}=${v}`) },
  { weight: 1, arbitrary: name },
  { weight: 1, arbitrary: fc.tuple(name, value, value).map(([n, v, w]) => `${n}=${v}=${w}`) },
);
const form = fc.array(part, { minLength: 1, maxLength: 12 }).map((parts) => parts.join('&'));
const limits = fc.record({
  depth: fc.constantFrom(1, 2, 3, 32),
  arrayLimit: fc.constantFrom(0, 1, 2, 100),
  parameterLimit: fc.constantFrom(3, FORM_PARAMETER_LIMIT),
});

describe('a form body is read as qs 6.13.0 reads it, with body-parser 1.20.3 options', () => {
  it('generated forms: the same fields, lists and values, or both refuse it', () => {
    let refused = 0;
    let lists = 0;
    fc.assert(
      fc.property(form, limits, (text, l) => {
        const { sandbox, qs } = both(text, l);
        expect(sandbox, text).toStrictEqual(qs);
        if ('refused' in qs) refused++;
        else if (JSON.stringify(qs.fields).includes('[')) lists++;
      }),
      { numRuns: 4000 },
    );
    // The draw reached both kinds of answer that matter: refusals and lists.
    expect(refused).toBeGreaterThan(10);
    expect(lists).toBeGreaterThan(100);
  });

  it('forms as body-parser sets the limits for them (formLimits): 32 levels, lists up to the parameters', () => {
    const cases = [
      'proxy[port]=24000&proxy[zone]=z&proxy[l][150]=x&proxy[m][3]=y',
      `proxy[d]${'[a]'.repeat(32)}=x`,
      `proxy[d]${'[a]'.repeat(33)}=x`,
      `${Array.from({ length: 150 }, (_, i) => `l[${149 - i}]=${i}`).join('&')}&l[150]=x`,
      'a[b]=1&a=2&a[]=3&a[0]=4&a[0][c]=5',
      'a=1&a[2]=x&a[2][b]=y&a[2]=z',
    ];
    for (const text of cases) {
      const l = formLimits(text.split('&').length - 1);
      const { sandbox, qs } = both(text, l);
      expect(sandbox, text).toStrictEqual(qs);
    }
  });

  it.each([
    ['list items by index, a[i]=1', (i: number) => `a[${i}]=1`],
    ['list items by index, in reverse', (i: number) => `a[${9_998 - i}]=1`],
    ['fields in list items, a[i][b]=1', (i: number) => `a[${i}][b]=1`],
    ['appended items, a[]=1', () => 'a[]=1'],
    ['one name repeated, a=1', () => 'a=1'],
    ['distinct names, k{i}=1', (i: number) => `k${i}=1`],
  ])(
    '9,999 parameters, %s: as qs reads them',
    (_, param) => {
      const text = Array.from({ length: 9_999 }, (_, i) => param(i)).join('&');
      const l = formLimits(9_998);
      const { sandbox, qs } = both(text, l);
      expect('fields' in qs).toBe(true);
      expect(sandbox).toStrictEqual(qs);
    },
    120_000,
  );

  it('a large form is read in pieces of PARAMETERS_PER_PIECE parameters: the same fields, the event loop let go of between them', async () => {
    const text = Array.from({ length: 4_999 }, (_, i) => `a[${i}][b]=${i}&k${i}=1`).join('&');
    const l = formLimits(2 * 4_999 - 1);
    let pauses = 0;
    const walk = formWalk(text, l, PARAMETERS_PER_PIECE);
    for (let step = walk.next(); !step.done; step = walk.next()) pauses++;
    // 9,998 parameters decoded, then as many names merged: a pause after each thousand of either.
    expect(pauses).toBe(2 * Math.floor(9_998 / PARAMETERS_PER_PIECE));
    expect(await parseFormInPieces(text, l)).toStrictEqual(parseForm(text, l));
    await expect(parseFormInPieces(`d${'[a]'.repeat(33)}=x&${text}`, l)).rejects.toBeInstanceOf(RangeError);
  });
});
