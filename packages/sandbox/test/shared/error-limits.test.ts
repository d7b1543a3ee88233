import { buildUrl, type FuzzTarget, fuzzTargets, paramValue, rng, sample } from '@zone-api/testkit/fuzz';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { clip, ERROR_LIMITS, HttpError, joinProblems } from '../../src/shared/errors.js';
import { bearer, Conformance, docs, useSandbox } from '../helpers.js';

// Every answer within the spec's bounds whatever the request holds: an error quotes a client's value or
// names a field it sent (a key of 100,000 characters, a list of thousands of bad items), and the spec
// bounds its texts (`Error.error` and the manager's text answers 1,024 characters, `ErrorDetail.field`
// 256). Long inputs in every place of every operation of both APIs, held to the spec's answers.

const t = useSandbox();
/** Runs of each kind of long input on each operation. */
const RUNS = 1;
const strictT = useSandbox({ strict: true });

// biome-ignore lint/suspicious/noExplicitAny: bodies are built from the spec generically
type Json = any;

/**
 * A text of at least `n` characters (≥ 1,025, past every bound) repeating a short piece, emoji and quotes
 * among them: drawn as the piece and the length, so that a failure prints short.
 */
const longText = (max: number) =>
  fc.record({ piece: fc.constantFrom('x', 'é', '\u{1F600}', '"', ' ', '%', '1.2.3.', '<b>'), n: fc.integer({ min: 1025, max }) });
type LongText = { piece: string; n: number };
const text = ({ piece, n }: LongText) => piece.repeat(Math.ceil(n / piece.length));
/** Node reads at most 16 kB of request line and headers: a text in the URL stays under 12 kB encoded. */
const inUrl = (t: LongText) =>
  text({ piece: t.piece, n: Math.min(t.n, Math.floor(12_000 / encodeURIComponent(t.piece).length) * t.piece.length) });

/** Where a long value goes: a body field, a body key, a long list, many keys, a query or path parameter. */
const KINDS = {
  field: fc.record({ kind: fc.constant('field' as const), pick: fc.nat(), text: longText(50_000) }),
  key: fc.record({ kind: fc.constant('key' as const), text: longText(20_000) }),
  // Items of the operation's own kind by default (IPs no Zone holds, say): each may be a problem of its own.
  list: fc.record({
    kind: fc.constant('list' as const),
    pick: fc.nat(),
    count: fc.integer({ min: 60, max: 2000 }),
    item: fc.oneof(fc.constant(undefined), fc.constant(undefined), fc.string({ maxLength: 3 }), longText(3000).map(text)),
  }),
  keys: fc.record({
    kind: fc.constant('keys' as const),
    count: fc.integer({ min: 60, max: 1500 }),
    width: fc.integer({ min: 10, max: 300 }),
  }),
  query: fc.record({ kind: fc.constant('query' as const), pick: fc.nat(), text: longText(12_000) }),
  path: fc.record({ kind: fc.constant('path' as const), text: longText(12_000) }),
};
const longInput = fc.oneof(...Object.values(KINDS));
type LongInput = typeof longInput extends fc.Arbitrary<infer T> ? T : never;

/** The operation's valid request (its example) with the long input put in. */
function request(doc: Json, op: FuzzTarget, input: LongInput, seed: number) {
  const r = rng(seed);
  const pathValues: Record<string, Json> = {};
  const query: Record<string, Json> = {};
  for (const p of op.params) {
    if (p.in === 'path') pathValues[p.name] = paramValue(doc, p, r, { pathValues: { port: [24000] } });
    else if (p.in === 'query' && p.required) query[p.name] = paramValue(doc, p, r, {});
  }
  let body: Json = op.body ? (op.body.examples.length ? structuredClone(op.body.examples[0]) : sample(doc, op.body.schema, r)) : undefined;
  const object = body !== null && typeof body === 'object' && !Array.isArray(body);
  const keys = object ? Object.keys(body) : [];
  const queryNames = op.params.filter((p) => p.in === 'query').map((p) => p.name as string);
  const pathNames = op.params.filter((p) => p.in === 'path').map((p) => p.name as string);
  switch (input.kind) {
    case 'field':
      if (object) body[keys.length ? (keys[input.pick % keys.length] as string) : 'note'] = text(input.text);
      else if (op.body) body = text(input.text);
      else query[queryNames[input.pick % queryNames.length] ?? 'note'] = inUrl(input.text);
      break;
    case 'key':
      if (object) body[text(input.text)] = 'x';
      else query[inUrl(input.text)] = 'x';
      break;
    case 'list': {
      const one = input.item ?? (keys.length ? body[keys[input.pick % keys.length] as string] : 'x');
      const list = Array.from({ length: input.count }, () => (Array.isArray(one) ? one[0] : one));
      const arrays = keys.filter((k) => Array.isArray(body[k]));
      if (object) body[arrays.length ? (arrays[input.pick % arrays.length] as string) : (keys[input.pick % keys.length] ?? 'list')] = list;
      else if (op.body) body = list;
      else query[queryNames[input.pick % queryNames.length] ?? 'list'] = list.slice(0, 100).join(',').slice(0, 3000);
      break;
    }
    case 'keys':
      if (object) for (let i = 0; i < input.count; i++) body[`${'k'.repeat(input.width)}${i}`] = i;
      else for (let i = 0; i < 40; i++) query[`${'k'.repeat(Math.min(input.width, 200))}${i}`] = i;
      break;
    case 'query':
      query[queryNames[input.pick % queryNames.length] ?? 'note'] = inUrl(input.text);
      break;
    case 'path':
      for (const name of pathNames) pathValues[name] = inUrl({ piece: input.text.piece, n: input.text.n / Math.max(1, pathNames.length) });
      if (!pathNames.length) query.note = inUrl(input.text);
      break;
  }
  return {
    method: op.method,
    url: buildUrl(op.path, pathValues, query),
    body: body === undefined ? undefined : JSON.stringify(body),
  };
}

describe('errors within the spec’s bounds whatever the input', () => {
  it.each([
    ['account', false],
    ['manager', true],
    ['manager', false],
  ] as const)(
    '%s API (strict %s): long inputs in every operation, every answer as the spec declares it',
    { timeout: 120_000 },
    async (api, strict) => {
      const sbx = api === 'account' ? t.sandbox : strict ? strictT.sandbox : t.sandbox;
      const base = api === 'account' ? sbx.accountUrl : sbx.managerUrl;
      const doc = docs[api];
      const conformance = new Conformance(doc);
      const statuses: number[] = [];
      const ops = fuzzTargets(doc);
      for (const op of ops) {
        for (const kind of Object.values(KINDS)) {
          await fc.assert(
            fc.asyncProperty(kind as typeof longInput, fc.nat(), async (input, seed) => {
              const req = request(doc, op, input, seed);
              const res = await fetch(`${base}${req.url}`, {
                method: req.method,
                headers: {
                  ...(api === 'account' ? bearer : {}),
                  ...(req.body === undefined ? {} : { 'content-type': 'application/json' }),
                },
                body: req.body,
              });
              const answer = await res.text();
              statuses.push(res.status);
              // The manager without `strict` takes unchecked bodies as the real manager does (and answers some
              // with its 500s): its errors are held to the spec here, what it stores is manager-coercion.test.ts's.
              const checked = api === 'account' || strict || res.status >= 400;
              const problems = checked ? conformance.check(req.method, req.url, res.status, res.headers.get('content-type'), answer) : [];
              if (api === 'account' || strict) expect(res.status, `${op.operationId}: ${answer.slice(0, 300)}`).toBeLessThan(500);
              expect(
                problems.map((p) => p.replace(req.url.split('?')[0] as string, '…').slice(0, 600)),
                `${op.operationId} ${input.kind}`,
              ).toEqual([]);
              if (res.status < 300 && req.method !== 'GET') await sbx.reset();
            }),
            { numRuns: RUNS, seed: 37, endOnFailure: true },
          );
        }
      }
      // Long inputs were refused (a 4xx answer was checked), not only accepted.
      expect(statuses.length).toBe(ops.length * Object.keys(KINDS).length * RUNS);
      expect(statuses.filter((s) => s >= 400 && s < 500).length).toBeGreaterThan(ops.length / 2);
    },
  );
});

describe('the one place that bounds error texts', () => {
  it('cuts a message, a field and a reason to the spec’s bounds, saying how long they were, never halving a surrogate pair', () => {
    const e = new HttpError(400, 'm'.repeat(5000), { details: [{ field: `body.${'k'.repeat(5000)}`, reason: '\u{1F600}'.repeat(3000) }] });
    expect(e.message.length).toBeLessThanOrEqual(ERROR_LIMITS.message);
    expect(e.message).toMatch(/… \(5000 characters\)$/);
    expect(e.details?.[0]?.field.length).toBeLessThanOrEqual(ERROR_LIMITS.field);
    const reason = e.details?.[0]?.reason as string;
    expect(reason.length).toBeLessThanOrEqual(ERROR_LIMITS.reason);
    expect(Buffer.from(reason).toString()).toBe(reason);
    expect(clip('short', 10)).toBe('short');
  });

  it('joins problems within the bound, counting those left out, for any problems', () => {
    expect(joinProblems('Invalid request', ['body.a is required', 'body.b must be string'])).toBe(
      'Invalid request: body.a is required; body.b must be string',
    );
    const many = Array.from({ length: 50 }, (_, i) => `body.ips[${i}] must match format "ipv4"`);
    const joined = joinProblems('Invalid request', many);
    expect(joined.length).toBeLessThanOrEqual(1024);
    expect(joined).toMatch(/^Invalid request: body\.ips\[0\] must match format "ipv4"; .*; and \d+ more$/);
    const named = joined.split('; ').length - 1;
    expect(Number(joined.match(/and (\d+) more$/)?.[1]) + named).toBe(50);
    fc.assert(
      fc.property(
        fc.string({ maxLength: 2000 }),
        fc.array(fc.string({ maxLength: 2000 }), { maxLength: 60 }),
        fc.integer({ min: 40, max: 2000 }),
        (head, ps, max) => {
          expect(joinProblems(head, ps, max).length).toBeLessThanOrEqual(max);
        },
      ),
    );
  });
});
