import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type ApiName, listOperations, loadBundle, type OpenApiDoc, repoRoot } from '@zone-api/testkit';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import * as dc from '../scripts/downconvert.mjs';

// biome-ignore lint/suspicious/noExplicitAny: OpenAPI documents are walked generically
type Json = any;
const apis: ApiName[] = ['account', 'manager'];
const dist = (file: string) => join(repoRoot, 'packages/spec/dist', file);
const load30 = (api: ApiName): OpenApiDoc => JSON.parse(readFileSync(dist(`${api}.openapi-3.0.json`), 'utf8'));

function run(bin: string, args: string[]) {
  const res = spawnSync(join(repoRoot, 'node_modules/.bin', bin), args, {
    cwd: repoRoot,
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1' },
  });
  return { status: res.status, out: `${res.stdout}${res.stderr}` };
}

/** Every value of `key` anywhere in the document, with its JSON path. */
function findKey(node: Json, key: string, path = '#'): Array<{ path: string; value: Json }> {
  if (!node || typeof node !== 'object') return [];
  const hits: Array<{ path: string; value: Json }> = [];
  for (const [k, v] of Object.entries<Json>(node)) {
    if (k === key) hits.push({ path: `${path}/${k}`, value: v });
    hits.push(...findKey(v, key, `${path}/${k}`));
  }
  return hits;
}

describe.each(apis)('%s OpenAPI 3.0.3 variant', (api) => {
  const doc31 = loadBundle(api);
  const doc30 = load30(api);

  it('lints clean as 3.0 with Redocly (recommended rules, any warning fails)', () => {
    const { status, out } = run('redocly', ['lint', dist(`${api}.openapi-3.0.json`)]);
    expect(out).toMatch(/Your API description is valid/);
    expect(out.split('\n').filter((l) => /\b(warning|error)\b/i.test(l) && !/[║╔╚]/.test(l))).toEqual([]);
    expect(status).toBe(0);
  });

  it("lints clean as 3.0 with Spectral's oas rules, down to hints", () => {
    const { status, out } = run('spectral', [
      'lint',
      dist(`${api}.openapi-3.0.json`),
      '-r',
      'packages/spec/spectral-oas3.yaml',
      '--fail-severity',
      'hint',
    ]);
    expect(out).toMatch(/No results with a severity of 'hint' or higher found/);
    expect(status).toBe(0);
  });

  it('is 3.0.3 and keeps every operation, tag and DELETE body', () => {
    expect(doc30.openapi).toBe('3.0.3');
    const ops = (d: OpenApiDoc) => listOperations(d).map((o) => `${o.method} ${o.path} ${o.operationId} ${o.op.summary}`);
    expect(ops(doc30)).toEqual(ops(doc31));
    const deleteBodies = (d: OpenApiDoc) =>
      listOperations(d)
        .filter((o) => o.method === 'delete' && o.op.requestBody)
        .map((o) => o.path);
    expect(deleteBodies(doc30)).toEqual(deleteBodies(doc31));
    expect(doc30.tags).toEqual(doc31.tags);
    expect(doc30.info.version).toBe(doc31.info.version);
  });

  it('has no 3.1-only constructs left', () => {
    expect(findKey(doc30, 'type').filter((h) => Array.isArray(h.value))).toEqual([]);
    for (const key of ['const', 'dependentRequired', 'unevaluatedProperties', 'propertyNames', 'prefixItems', '$defs'])
      expect(findKey(doc30.components?.schemas, key), key).toEqual([]);
    expect(doc30.info.summary).toBeUndefined();
  });

  it('YAML and JSON variants are the same document', () => {
    expect(parse(readFileSync(dist(`${api}.openapi-3.0.yaml`), 'utf8'))).toEqual(doc30);
  });

  it('the dereferenced variant has no $ref left and the same operations', () => {
    const deref = JSON.parse(readFileSync(dist(`${api}.openapi.deref.json`), 'utf8'));
    expect(findKey(deref, '$ref')).toEqual([]);
    expect(listOperations(deref).map((o) => o.operationId)).toEqual(listOperations(doc31).map((o) => o.operationId));
    expect(deref.openapi).toBe(doc31.openapi);
  });
});

describe('what the 3.0 variant loses, as the package README lists it', () => {
  it('account: the `dependentRequired` of the plan filter is described, not enforced', () => {
    const before = loadBundle('account').components.schemas.AvailableIpPlanFilter;
    const after = load30('account').components.schemas.AvailableIpPlanFilter;
    expect(before.dependentRequired).toEqual({ country_city: ['city'] });
    expect(after.dependentRequired).toBeUndefined();
    expect(after.description).toContain('`country_city` requires `city`');
  });

  it('manager: `type: [boolean, integer]` becomes oneOf with the integer limits on the integer branch', () => {
    const after = load30('manager').components.schemas.HarEntryDetails.properties.success;
    expect(after.type).toBeUndefined();
    expect(after.oneOf).toEqual([{ type: 'boolean' }, { type: 'integer', format: 'int32', minimum: 0, maximum: 1 }]);
  });

  it('manager: the closed `proxy` object (unevaluatedProperties: false) is open in 3.0', () => {
    const after = load30('manager').components.schemas.ProxyPortRequest.properties.proxy;
    expect(after.unevaluatedProperties).toBeUndefined();
    expect(after.additionalProperties).toBeUndefined();
    expect(after.allOf[0]).toEqual({ $ref: '#/components/schemas/ProxyPort' });
  });

  it('account: DELETE operations say in 3.0 that they carry a body', () => {
    const op = load30('account').paths['/api/zone/ips'].delete;
    expect(op.description).toMatch(/This DELETE request carries a JSON body/);
    expect(op.requestBody.required).toBe(true);
  });

  it('info.summary moves into the description and the license gets an SPDX URL', () => {
    const info = load30('account').info;
    expect(info.description.startsWith(`${loadBundle('account').info.summary}\n\n`)).toBe(true);
    expect(info.license).toEqual({ name: 'MIT', url: 'https://spdx.org/licenses/MIT.html' });
  });
});

describe('fixups on small documents', () => {
  const minimal = (extra: Json = {}): Json => ({
    openapi: '3.1.0',
    info: { title: 't', version: '1.0.0', summary: 'S', license: { name: 'MIT', identifier: 'MIT' } },
    paths: {},
    ...extra,
  });

  it('falsy const values become one-value enums (the converter skips them)', () => {
    const out = dc.downConvert(
      minimal({
        components: {
          schemas: { A: { type: 'object', properties: { z: { const: 0 }, f: { const: false }, e: { const: '' }, t: { const: 'x' } } } },
        },
      }),
    );
    const p = out.components.schemas.A.properties;
    expect([p.z, p.f, p.e, p.t]).toEqual([{ enum: [0] }, { enum: [false] }, { enum: [''] }, { enum: ['x'] }]);
  });

  it('type arrays: a null member gives nullable, several types give oneOf with their own keywords', () => {
    const s = { type: ['string', 'integer', 'null'], minLength: 1, maximum: 9, description: 'd' };
    dc.multiTypeArray(s);
    expect(s).toEqual({
      description: 'd',
      nullable: true,
      oneOf: [
        { type: 'string', minLength: 1 },
        { type: 'integer', maximum: 9 },
      ],
    });
    const t: Json = { type: ['number', 'string'], format: 'date-time' };
    dc.multiTypeArray(t);
    expect(t).toEqual({ oneOf: [{ type: 'number' }, { type: 'string', format: 'date-time' }] });
  });

  it('$ref siblings in schemas are dropped, a lone $ref is untouched', () => {
    const s = { $ref: '#/components/schemas/X', description: 'd', 'x-observed': true };
    dc.refSiblings(s);
    expect(s).toEqual({ $ref: '#/components/schemas/X' });
  });

  it('role names on non-OAuth security requirements are emptied and reported', () => {
    const doc: Json = {
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' }, oauth: { type: 'oauth2', flows: {} } } },
      security: [{ bearer: ['admin'] }],
      paths: { '/a': { get: { security: [{ oauth: ['read'] }, { bearer: ['peers'] }] } } },
    };
    expect(dc.securityRoles(doc)).toEqual(['root: bearer [admin]', 'GET /a: bearer [peers]']);
    expect(doc.security).toEqual([{ bearer: [] }]);
    expect(doc.paths['/a'].get.security).toEqual([{ oauth: ['read'] }, { bearer: [] }]);
  });

  it('the input document is not modified', () => {
    const input = minimal({ components: { schemas: { A: { type: ['string', 'null'], examples: ['a'] } } } });
    const copy = structuredClone(input);
    dc.downConvert(input);
    expect(input).toEqual(copy);
  });
});
