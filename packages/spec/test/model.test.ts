import { deref, factsOf, loadBundle, operations, resolvePointer, schemaValidator, zoneCredential } from '@zone-api/spec/model';
import { describe, expect, it } from 'vitest';

// The operation model every consumer reads the bundles with: its rules, on a small document built to
// exercise each one, then on the real bundles.

const doc = {
  openapi: '3.1.0',
  info: { title: 'model test', version: '1' },
  security: [{ rootKey: [] }],
  paths: {
    '/things/{id}': {
      parameters: [
        { name: 'id', in: 'path', schema: { type: 'string' } },
        { name: 'limit', in: 'query', description: 'path-level', schema: { type: 'string' } },
      ],
      get: {
        operationId: 'getThing',
        'x-idempotent': true,
        parameters: [
          { $ref: '#/components/parameters/Limit' },
          { name: 'filter', in: 'query', content: { 'application/json': { schema: { type: 'object' } } } },
          { name: 'ratio', in: 'query', schema: { type: ['number', 'null'] } },
        ],
        responses: { '200': { $ref: '#/components/responses/Thing' }, '204': { description: 'nothing' } },
      },
      put: {
        operationId: 'putThing',
        security: [{ token: [] }, { basic: [], token: [] }],
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: { $ref: '#/components/schemas/Thing' },
              examples: { one: { $ref: '#/components/examples/One' } },
            },
          },
        },
        responses: { default: { description: 'any' } },
      },
    },
  },
  components: {
    parameters: {
      Limit: { $ref: '#/components/parameters/RealLimit' },
      RealLimit: { name: 'limit', in: 'query', schema: { type: 'integer' } },
    },
    responses: { Thing: { description: 'a thing', content: { 'application/json': { schema: { $ref: '#/components/schemas/Thing' } } } } },
    schemas: { Thing: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } } },
    examples: { One: { value: { name: 'one' } } },
  },
};

describe('the operation model', () => {
  const [get, put] = operations(doc);

  it('merges parameters, the operation overriding a path-level one of the same name and place', () => {
    expect(get?.parameters.map((p) => [p.in, p.name, p.required])).toEqual([
      ['path', 'id', true],
      ['query', 'limit', false],
      ['query', 'filter', false],
      ['query', 'ratio', false],
    ]);
    const limit = get?.parameters.find((p) => p.name === 'limit');
    expect(limit?.pointer).toBe('#/components/parameters/RealLimit');
    expect(limit?.schema).toEqual({ type: 'integer' });
    expect(limit?.numeric).toBe('integer');
    expect(get?.parameters.find((p) => p.name === 'ratio')?.numeric).toBe('number');
    const filter = get?.parameters.find((p) => p.name === 'filter');
    expect(filter?.content).toBe('application/json');
    expect(filter?.schemaPointer).toBe('#/paths/~1things~1{id}/get/parameters/1/content/application~1json/schema');
    expect(resolvePointer(doc, filter?.schemaPointer ?? '')).toEqual({ type: 'object' });
  });

  it('follows response and body references to pointers that resolve, with examples', () => {
    const ok = get?.responses.find((r) => r.status === '200');
    expect(ok?.pointer).toBe('#/components/responses/Thing');
    expect(ok?.media).toEqual(['application/json']);
    expect(ok?.content['application/json']?.schemaPointer).toBe('#/components/responses/Thing/content/application~1json/schema');
    expect(get?.responses.find((r) => r.status === '204')?.media).toEqual([]);
    expect(put?.requestBody?.required).toBe(true);
    expect(put?.requestBody?.content['application/json']?.schema).toEqual(doc.components.schemas.Thing);
    expect(put?.requestBody?.content['application/json']?.examples).toEqual([{ name: 'one' }]);
  });

  it('gives the effective security and the credentials it names, and the x- facts', () => {
    expect(get?.security).toEqual([{ rootKey: [] }]);
    expect(get?.credentials).toEqual(['rootKey']);
    expect(put?.credentials).toEqual(['token', 'basic']);
    expect(get?.extensions).toEqual({ 'x-idempotent': true });
    expect(put?.extensions).toEqual({});
    expect([get?.method, put?.method]).toEqual(['get', 'put']);
  });

  it('reads the behaviour facts once, as typed facts, and refuses a fact of the wrong type', () => {
    expect(get?.facts).toEqual({ idempotent: true, changesState: false, permissions: [] });
    const facts = factsOf({
      operationId: 'x',
      'x-idempotent': false,
      'x-changes-state': true,
      'x-permissions': ['peers'],
      'x-client-ip-check': false,
      'x-brand-prefix': 'pm',
      'x-pagination': { style: 'page', page: 'page', size: 'size' },
      'x-deprecated-reason': 'use y',
    });
    expect(facts).toEqual({
      idempotent: false,
      changesState: true,
      permissions: ['peers'],
      clientIpCheck: false,
      brandPrefix: 'pm',
      pagination: { style: 'page', page: 'page', size: 'size' },
      deprecatedReason: 'use y',
    });
    expect(() => factsOf({ operationId: 'x', 'x-changes-state': 'yes' })).toThrow(/x: x-changes-state must be a boolean/);
  });

  it('refuses a reference that names nothing, is not local, or loops, naming it', () => {
    expect(() => deref(doc, { $ref: '#/components/schemas/Nope' })).toThrow(/Unresolvable \$ref #\/components\/schemas\/Nope/);
    expect(() => deref(doc, { $ref: 'other.yaml#/x' })).toThrow(/other\.yaml#\/x .*not local/);
    const loop = { a: { $ref: '#/b' }, b: { $ref: '#/a' } };
    expect(() => deref(loop, { $ref: '#/a' })).toThrow(/chain longer than/);
    expect(() => operations({ paths: { '/x': { get: { operationId: 'x', parameters: [{ $ref: '#/nowhere' }] } } } })).toThrow(/#\/nowhere/);
  });

  it('compiles validators against the document by pointer', () => {
    const v = schemaValidator(doc);
    expect(v.validate('#/components/schemas/Thing', { name: 'x' })).toBeNull();
    expect(v.validate('#/components/schemas/Thing', {})).toMatch(/must have required property 'name'/);
  });

  it('lists every operation of the real bundles once, each with an operationId', () => {
    for (const api of ['account', 'manager'] as const) {
      const ops = operations(loadBundle(api));
      expect(ops.length).toBeGreaterThan(30);
      expect(new Set(ops.map((o) => o.operationId)).size).toBe(ops.length);
      for (const o of ops) expect(typeof o.extensions['x-changes-state'], `${api} ${o.operationId}`).toBe('boolean');
    }
  });
});

describe('the Zone credential (zoneCredential)', () => {
  const scheme = (extra: Record<string, unknown>) => ({
    components: {
      securitySchemes: { zoneCredential: { type: 'apiKey', in: 'header', name: 'X-Service-Auth', ...extra } },
    },
  });
  const documented = '^service-customer-[^-]+-zone-[^-]+-key-[^-]+(-country-[a-z]{2})?$';
  const observed = '^(?<brand>[a-z]+)-customer-(?<customer>[^-]+)-zone-(?<zone>[^-]+)-key-(?<key>[^-]+)(?:-country-(?<country>[a-z]{2}))?$';

  it('reads the name and the patterns from the security scheme, the header names without regard to case', () => {
    const c = zoneCredential(
      scheme({
        'x-value-pattern': documented,
        'x-observed-name-pattern': '^X-(?<brand>[A-Za-z]+)-Auth$',
        'x-observed-value-pattern': observed,
      }),
    );
    expect(c.name).toBe('X-Service-Auth');
    expect(c.documented.source).toBe(documented);
    expect(c.names.exec('x-lum-auth')?.groups?.brand).toBe('lum');
    expect(c.names.test('x-api-key')).toBe(false);
    expect(c.values.exec('lum-customer-c1-zone-z1-key-pw-country-de')?.groups).toEqual({
      brand: 'lum',
      customer: 'c1',
      zone: 'z1',
      key: 'pw',
      country: 'de',
    });
  });

  it('without the observed patterns, takes the documented name only', () => {
    const c = zoneCredential(scheme({ 'x-value-pattern': observed }));
    expect(c.names.test('x-service-auth')).toBe(true);
    expect(c.names.test('x-lum-auth')).toBe(false);
    expect(c.values).toBe(c.documented);
  });

  it('refuses a scheme that is no header key, a missing or broken pattern, and a layout without the groups', () => {
    expect(() => zoneCredential({})).toThrow(/securitySchemes.zoneCredential must be an apiKey scheme in a header/);
    expect(() => zoneCredential(scheme({}))).toThrow(/x-value-pattern must be a regular expression/);
    expect(() => zoneCredential(scheme({ 'x-value-pattern': '(' }))).toThrow(/zoneCredential.x-value-pattern: .*/);
    expect(() => zoneCredential(scheme({ 'x-value-pattern': documented }))).toThrow(/names no group customer, zone, key, country/);
  });

  it('in the account bundle: the observed layout takes every documented value, and the brand words seen in use', () => {
    const c = zoneCredential(loadBundle('account'));
    const documentedValues = [
      'service-customer-hl_1-zone-static-key-p4ss',
      'service-customer-c-zone-z-key-k-country-us',
      'service-customer-a.b-zone-my_zone-key-x_y-country-de',
    ];
    for (const v of documentedValues) {
      expect(c.documented.test(v), v).toBe(true);
      expect(c.values.test(v), v).toBe(true);
    }
    for (const brand of ['lum', 'brd', 'hola']) {
      expect(c.names.exec(`x-${brand}-auth`)?.groups?.brand).toBe(brand);
      expect(c.values.exec(`${brand}-customer-c-zone-z-key-k`)?.groups?.brand).toBe(brand);
    }
    // Lower case only, as every source writes it (the spec's description).
    for (const v of [
      'service-customer-c-zone-z-key-k-country-US',
      'Lum-customer-c-zone-z-key-k',
      'service-customer-c-zone-z-key-k-extra',
    ]) {
      expect(c.values.test(v), v).toBe(false);
    }
  });
});
