import { describe, expect, it } from 'vitest';
import { prismViolations, recordResponseViolations } from '../src/index.js';

const header = JSON.stringify([
  { location: ['request', 'body', 'proxy'], severity: 'Error', code: 'required', message: "must have required property 'proxy'" },
  { location: ['response', 'body', 'zones'], severity: 'Error', code: 'type', message: 'must be array' },
]);

describe('Prism violation guard', () => {
  it('splits sl-violations into request and response sides', () => {
    const v = prismViolations(new Response('{}', { headers: { 'sl-violations': header } }));
    expect(v.request.map((x) => x.code)).toEqual(['required']);
    expect(v.response.map((x) => x.message)).toEqual(['must be array']);
    expect(prismViolations(new Response('{}'))).toEqual({ request: [], response: [] });
  });

  it('records only response-side violations, naming the call', () => {
    const sink: string[] = [];
    recordResponseViolations(sink).onResponse({
      request: new Request('http://x.test/api/zones?a=1'),
      response: new Response('{}', { headers: { 'sl-violations': header } }),
    });
    expect(sink).toEqual(['GET /api/zones: response.body.zones must be array']);
  });
});
