import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type ApiName, listOperations, type OpenApiDoc, repoRoot } from '@zone-api/testkit';
import { describe, expect, it } from 'vitest';
import { generatorInput } from '../scripts/gen-clients.mjs';

// The document openapi-generator reads (gen-clients.mjs generatorInput): the 3.0.3 variant shaped
// where 4.3.1 writes broken code. Each rule on a small document, then the contract of both bundles:
// the shaped document has the same operations, parameters, bodies, statuses and media types.

// biome-ignore lint/suspicious/noExplicitAny: OpenAPI documents are walked generically
type Json = any;
const load30 = (api: ApiName): OpenApiDoc =>
  JSON.parse(readFileSync(join(repoRoot, 'packages/spec/dist', `${api}.openapi-3.0.json`), 'utf8'));

const doc = (schemas: Json, parameters: Json[] = []): Json => ({
  openapi: '3.0.3',
  info: { title: 't', version: '1' },
  paths: {
    '/x': {
      get: {
        operationId: 'getX',
        parameters,
        responses: { '200': { description: 'ok', content: { 'application/json': { schema: { $ref: '#/components/schemas/X' } } } } },
      },
    },
  },
  components: { schemas },
});

describe('generator input', () => {
  it('makes a oneOf of value types untyped, keeping its description', () => {
    const out = generatorInput(
      doc({
        X: {
          type: 'object',
          properties: { ips: { description: 'd', oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }] } },
        },
      }),
      'go',
    );
    expect(out.components.schemas.X.properties.ips).toEqual({ description: 'd' });
  });

  it('makes an anyOf of models one model: a property typed where the branches agree, untyped where one takes anything', () => {
    const out = generatorInput(
      doc({
        Documented: {
          type: 'object',
          required: ['port', 'ssl'],
          properties: { port: { type: 'integer', description: 'the port' }, ssl: { type: 'boolean' }, name: { type: 'string' } },
        },
        AsGiven: { type: 'object', required: ['port'], properties: { port: { type: 'integer' } }, additionalProperties: true },
        Closed: { type: 'object', properties: { port: { type: 'integer' }, only: { type: 'string' } }, additionalProperties: false },
        X: { description: 'd', anyOf: [{ $ref: '#/components/schemas/Documented' }, { $ref: '#/components/schemas/AsGiven' }] },
        Y: { oneOf: [{ $ref: '#/components/schemas/Documented' }, { $ref: '#/components/schemas/Closed' }] },
      }),
      'python',
    );
    expect(out.components.schemas.X).toEqual({
      description: 'd',
      type: 'object',
      required: ['port'],
      properties: { port: { type: 'integer', description: 'the port' }, ssl: {}, name: {} },
    });
    // A closed branch cannot hold what it does not declare: the other branch's type stands.
    expect(out.components.schemas.Y.properties).toEqual({
      port: { type: 'integer', description: 'the port' },
      ssl: { type: 'boolean' },
      name: { type: 'string' },
      only: { type: 'string' },
    });
  });

  it("every list of objects in a 2xx answer has items the generators make models of (the manager's listProxies too)", () => {
    for (const api of ['account', 'manager'] as const) {
      const shaped = generatorInput(load30(api), 'python');
      const untyped: string[] = [];
      for (const [path, item] of Object.entries<Json>(shaped.paths))
        for (const [method, op] of Object.entries<Json>(item)) {
          for (const [status, res] of Object.entries<Json>(op.responses ?? {})) {
            if (!status.startsWith('2')) continue;
            let schema = res.content?.['application/json']?.schema;
            if (schema?.$ref) schema = shaped.components.schemas[schema.$ref.split('/').pop()];
            const items = schema?.type === 'array' ? schema.items : undefined;
            if (!items) continue;
            const target = items.$ref ? shaped.components.schemas[items.$ref.split('/').pop()] : items;
            const original = load30(api);
            const before = original.paths[path][method].responses[status].content['application/json'].schema;
            const wasObject = JSON.stringify(before).includes('$ref') || items.type === 'object';
            if (wasObject && !(items.$ref && (target?.properties || target?.allOf)) && items.type !== 'string' && items.type !== 'integer')
              untyped.push(`${api} ${op.operationId}: ${JSON.stringify(items).slice(0, 80)}`);
          }
        }
      expect(untyped).toEqual([]);
    }
    const manager = generatorInput(load30('manager'), 'python');
    const stored = manager.components.schemas.StoredProxyPort;
    expect(stored.properties.port).toMatchObject({ type: 'integer' });
    expect(stored.type).toBe('object');
  });

  it('drops a oneOf/anyOf of required lists alone, keeping the properties', () => {
    const X = { type: 'object', properties: { ip: { type: 'string' }, ips: { type: 'array', items: { type: 'string' } } } };
    const out = generatorInput(doc({ X: { ...X, anyOf: [{ required: ['ip'] }, { required: ['ips'] }] } }), 'go');
    expect(out.components.schemas.X).toEqual(X);
  });

  it('replaces a $ref to a map or a list by a copy, and keeps a $ref to a model', () => {
    const out = generatorInput(
      doc({
        Ips: { type: 'array', items: { type: 'string' } },
        Model: { type: 'object', properties: { a: { type: 'string' } } },
        X: {
          type: 'object',
          properties: {
            m: { type: 'object', additionalProperties: { $ref: '#/components/schemas/Ips' } },
            n: { $ref: '#/components/schemas/Model' },
          },
        },
      }),
      'go',
    );
    expect(out.components.schemas.X.properties.m.additionalProperties).toEqual({ type: 'array', items: { type: 'string' } });
    expect(out.components.schemas.X.properties.n).toEqual({ $ref: '#/components/schemas/Model' });
  });

  it('makes a free-form object untyped', () => {
    const out = generatorInput(
      doc({
        X: {
          type: 'object',
          properties: { sums: { type: 'object', additionalProperties: { type: 'object', additionalProperties: true } } },
        },
      }),
      'go',
    );
    expect(out.components.schemas.X.properties.sums.additionalProperties).toEqual({});
  });

  it('makes a JSON-in-query parameter a string, with its example as JSON text', () => {
    const plan = { name: 'plan', in: 'query', content: { 'application/json': { schema: { type: 'object' }, example: { a: 1 } } } };
    const out = generatorInput(doc({ X: { type: 'string' } }, [plan]), 'go');
    expect(out.paths['/x'].get.parameters[0]).toEqual({
      name: 'plan',
      in: 'query',
      schema: { type: 'string', description: 'JSON text.' },
      example: '{"a":1}',
    });
  });

  it('makes a boolean query parameter the string true or false for Python only', () => {
    const force = { name: 'force', in: 'query', schema: { type: 'boolean', description: 'd' }, example: true };
    expect(generatorInput(doc({ X: { type: 'string' } }, [force]), 'python').paths['/x'].get.parameters[0]).toEqual({
      ...force,
      schema: { type: 'string', enum: ['true', 'false'], description: 'd' },
      example: 'true',
    });
    expect(generatorInput(doc({ X: { type: 'string' } }, [force]), 'go').paths['/x'].get.parameters[0]).toEqual(force);
  });

  it('leaves the document it is given unchanged', () => {
    const input = doc({ X: { oneOf: [{ type: 'string' }, { type: 'integer' }] } });
    const before = structuredClone(input);
    generatorInput(input, 'python');
    expect(input).toEqual(before);
  });

  /** What a client sends and receives: operations, parameters (name, place, required), bodies, statuses, media types. */
  const contract = (d: OpenApiDoc) =>
    listOperations(d).map((o) => ({
      id: o.operationId,
      at: `${o.method} ${o.path}`,
      params: o.parameters.map((p) => `${p.in}:${p.name}:${p.required}`).sort(),
      body: o.requestBody ? [o.requestBody.required, o.requestBody.media] : null,
      responses: o.responses.map((r) => `${r.status}:${r.media.join(',')}`),
      credentials: o.credentials,
    }));

  it.each(['account', 'manager'] as const)('%s: the shaped document has the contract of the 3.0.3 variant', (api) => {
    const doc30 = load30(api);
    for (const lang of ['python', 'go']) {
      const shaped = generatorInput(doc30, lang);
      expect(contract(shaped)).toEqual(contract(doc30));
      expect(JSON.stringify(shaped)).not.toMatch(/"(oneOf|anyOf)"/);
    }
  });
});
