import { describe, expect, it } from 'vitest';
import { RequestChecker } from '../../src/router/lenient.js';
import type { OpenApiDoc } from '../../src/router/spec.js';
import { FIELDS_PER_PIECE } from '../../src/shared/in-pieces.js';
import { docs, STATIC } from '../helpers.js';

// A large lenient body's fields that no schema of it names are set aside in pieces before the check
// (setAsideInPieces), so that Ajv sees a small body. The check of what is left must answer exactly as the
// check of the whole body: the same verdict, errors, ignored fields in the same order, and the same body
// for the handler, its fields in their order.

const many = FIELDS_PER_PIECE * 2 + 17;

/** `check` of the whole body, and `check` of what setAsideInPieces left of a copy of it. */
async function both(checker: RequestChecker, pointer: string, body: Record<string, unknown>) {
  const whole = structuredClone(body);
  const wholeResult = checker.check(pointer, whole, 'body', false);
  const kept = await checker.setAsideInPieces(pointer, structuredClone(body));
  if (!kept) throw new Error('nothing was set aside');
  const keptResult = checker.check(pointer, kept, 'body', false);
  return { whole, wholeResult, kept, keptResult };
}

const unknownFields = (n: number, from = 0) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`u${from + i}`, i]));

describe('a body with its unknown fields set aside is checked as the whole body', () => {
  const checker = new RequestChecker(docs.account, 'https://zone-api.local/account.openapi.json');
  const pointer = '#/components/schemas/AddZoneWhitelistIpRequest';

  it.each<[string, Record<string, unknown>]>([
    [
      'accepted, unknown fields around the known ones',
      { ...unknownFields(10), zone: STATIC, ...unknownFields(many, 10), ip: '203.0.113.9' },
    ],
    ['refused (an empty list of IPs): the errors of the whole body', { zone: STATIC, ip: [], ...unknownFields(many) }],
    ['refused (ip missing)', { zone: STATIC, ...unknownFields(many) }],
    ['the known fields wrong in type', { zone: 7, ip: ['203.0.113.9', 3], ...unknownFields(many) }],
  ])('%s', async (_, body) => {
    const { whole, wholeResult, kept, keptResult } = await both(checker, pointer, body);
    expect(keptResult).toEqual(wholeResult);
    expect(wholeResult.ok).toBe(typeof body.ip === 'string');
    if (wholeResult.ok) {
      expect(wholeResult.ignored.length).toBe(many + 10);
      expect(JSON.stringify(kept)).toBe(JSON.stringify(whole));
    }
  });

  it('a closed pass: only known fields left, the set-aside fields still listed in order', async () => {
    const body = { zone: STATIC, ...unknownFields(many), ip: '203.0.113.9' };
    const { whole, wholeResult, kept, keptResult } = await both(checker, pointer, body);
    expect(keptResult).toEqual(wholeResult);
    expect(JSON.stringify(kept)).toBe(JSON.stringify(whole));
  });

  it('a small body is not set aside (checked whole)', async () => {
    expect(await checker.setAsideInPieces(pointer, { zone: STATIC, ip: '203.0.113.9', ...unknownFields(10) })).toBeUndefined();
  });
});

describe('nested closures and compositions: the order of the ignored fields is Ajv’s', () => {
  const doc = {
    openapi: '3.1.0',
    info: { title: 't', version: '1' },
    paths: {},
    components: {
      schemas: {
        Inner: { type: 'object', properties: { x: { type: 'integer' } } },
        Body: {
          type: 'object',
          required: ['a'],
          properties: {
            a: { $ref: '#/components/schemas/Inner' },
            b: { type: 'string' },
            list: { type: 'array', items: { $ref: '#/components/schemas/Inner' } },
          },
          allOf: [{ properties: { c: { type: 'integer' } } }],
        },
        Mapped: { type: 'object', properties: { a: { type: 'integer' } }, patternProperties: { '^m_': { type: 'integer' } } },
        Counted: { type: 'object', properties: { a: { type: 'integer' } }, maxProperties: 3 },
      },
    },
  } as unknown as OpenApiDoc;
  const checker = new RequestChecker(doc, 'urn:zone-api:test');

  it('unknown fields of the parts first, then those of the body itself in its order', async () => {
    const body = {
      ...unknownFields(5),
      a: { x: 1, inner_unknown: 2 },
      c: 3,
      ...unknownFields(many, 5),
      list: [{ x: 1, deep: 1 }, { y: 2 }],
      b: 'b',
      last: true,
    };
    const { whole, wholeResult, kept, keptResult } = await both(checker, '#/components/schemas/Body', body);
    expect(wholeResult.ok).toBe(true);
    expect(keptResult).toEqual(wholeResult);
    if (!wholeResult.ok) return;
    expect(wholeResult.ignored.slice(0, 3)).toEqual(['body.a.inner_unknown', 'body.list[0].deep', 'body.list[1].y']);
    expect(wholeResult.ignored.slice(3, 5)).toEqual(['body.u0', 'body.u1']);
    expect(wholeResult.ignored.at(-1)).toBe('body.last');
    expect(JSON.stringify(kept)).toBe(JSON.stringify(whole));
    expect(Object.keys(kept)).toEqual(['a', 'c', 'list', 'b']);
  });

  it('nothing is set aside where the schema reads or counts the fields it does not name', async () => {
    const body = { a: 1, ...unknownFields(many) };
    expect(await checker.setAsideInPieces('#/components/schemas/Mapped', body)).toBeUndefined();
    expect(await checker.setAsideInPieces('#/components/schemas/Counted', body)).toBeUndefined();
  });
});
