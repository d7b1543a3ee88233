import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from '@zone-api/testkit';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';

// Each custom rule of .spectral.yaml is proven to fire on a small bad spec, and to stay quiet on a good one.
const dir = mkdtempSync(join(tmpdir(), 'spectral-rules-'));

type Finding = { code: string; message: string; path: string[]; source: string };

// Spectral's CLI, as `pnpm lint` runs it. Its start (loading and bundling the ruleset) is seconds of CPU
// and most of a run's cost, so the specs the tests ask for within one moment go to one run, and each test
// gets the findings of its own file. The tests run concurrently to ask together.
let batch: Array<{ file: string; resolve: (found: Finding[]) => void; reject: (e: Error) => void }> = [];

function runBatch() {
  const files = batch;
  batch = [];
  execFile(
    join(repoRoot, 'node_modules/.bin/spectral'),
    ['lint', ...files.map((f) => f.file), '-r', join(repoRoot, '.spectral.yaml'), '-f', 'json', '-q'],
    { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
    (err, stdout, stderr) => {
      // Exit 1 means findings; anything else, or no JSON, is Spectral failing to run.
      let found: Finding[] | undefined;
      try {
        found = stdout.trim() ? JSON.parse(stdout) : [];
      } catch {}
      const code = err && typeof err.code === 'number' ? err.code : err ? -1 : 0;
      if (!Array.isArray(found) || code > 1 || code < 0) {
        const e = new Error(`spectral lint failed (${code}): ${stderr}${stdout.slice(0, 2000)}`);
        for (const f of files) f.reject(e);
        return;
      }
      for (const f of files) f.resolve((found as Finding[]).filter((r) => r.source === f.file));
    },
  );
}

function lint(doc: object): Promise<Finding[]> {
  const file = join(dir, `spec-${Math.random().toString(36).slice(2)}.yaml`);
  writeFileSync(file, stringify(doc));
  return new Promise((resolve, reject) => {
    batch.push({ file, resolve, reject });
    if (batch.length === 1) setTimeout(runBatch, 100);
  });
}

const ok200 = {
  '200': {
    description: 'ok',
    content: { 'application/json': { schema: { $ref: '#/components/schemas/Thing' }, examples: { one: { value: { id: 'a' } } } } },
  },
};

function spec(paths: object, components: object = {}) {
  return {
    openapi: '3.1.0',
    info: { title: 't', version: '1.0.0', description: 'd' },
    paths,
    components: { schemas: { Thing: { type: 'object', properties: { id: { type: 'string', maxLength: 3 } } } }, ...components },
  };
}

const goodOp = (operationId: string) => ({
  operationId,
  summary: 's',
  description: 'd',
  tags: ['T'],
  'x-idempotent': operationId.startsWith('get'),
  'x-changes-state': !operationId.startsWith('get'),
  responses: ok200,
});

const codes = async (doc: object) => (await lint(doc)).map((r) => r.code);

describe.concurrent('custom spectral rules', () => {
  it('stay quiet on a spec that follows them', async () => {
    const found = (await codes(spec({ '/api/thing': { get: goodOp('getThing'), post: goodOp('createThing') } }))).filter((c) =>
      c.startsWith('zone-'),
    );
    expect(found).toEqual([]);
  });

  it('zone-operationid-verb-noun: verb must fit the method', async () => {
    const results = await lint(
      spec({ '/api/thing': { get: goodOp('createThing'), put: goodOp('update_thing'), delete: goodOp('removeThing') } }),
    );
    const hits = results.filter((r) => r.code === 'zone-operationid-verb-noun');
    expect(hits.map((h) => h.path[2])).toEqual(['get', 'put']);
    expect(hits[0]?.message).toContain('one of: get, list');
  });

  it('zone-operation-summary, -description, -tags', async () => {
    const op = { operationId: 'getThing', responses: ok200 };
    const found = await codes(spec({ '/api/thing': { get: op } }));
    expect(found).toEqual(expect.arrayContaining(['zone-operation-summary', 'zone-operation-description', 'zone-operation-tags']));
  });

  it('zone-paths-under-api', async () => {
    expect(await codes(spec({ '/thing': { get: goodOp('getThing') } }))).toContain('zone-paths-under-api');
  });

  it('zone-named-examples: a body without named examples', async () => {
    const op = {
      ...goodOp('getThing'),
      responses: {
        '200': {
          description: 'ok',
          content: { 'application/json': { schema: { $ref: '#/components/schemas/Thing' }, example: { id: 'a' } } },
        },
      },
    };
    expect(await codes(spec({ '/api/thing': { get: op } }))).toContain('zone-named-examples');
  });

  it('zone-no-inline-body-object: an inline object body', async () => {
    const op = {
      ...goodOp('createThing'),
      requestBody: {
        content: {
          'application/json': {
            schema: { type: 'object', properties: { a: { type: 'string', maxLength: 2 } } },
            examples: { one: { value: { a: 'x' } } },
          },
        },
      },
    };
    const arrayOfInline = {
      ...goodOp('getThing'),
      responses: {
        '200': {
          description: 'ok',
          content: {
            'application/json': {
              schema: { type: 'array', maxItems: 2, items: { type: 'object', properties: {} } },
              examples: { one: { value: [] } },
            },
          },
        },
      },
    };
    const hits = (await lint(spec({ '/api/thing': { post: op, get: arrayOfInline } }))).filter(
      (r) => r.code === 'zone-no-inline-body-object',
    );
    expect(hits.map((h) => h.path[2]).sort()).toEqual(['get', 'post']);
  });

  it('zone-no-raw-placeholder: <CUSTOMER> outside backticks', async () => {
    const op = { ...goodOp('getThing'), description: 'The account id (<CUSTOMER>), or `<ZONE>` in code, which is fine.' };
    const hits = (await lint(spec({ '/api/thing': { get: op } }))).filter((r) => r.code === 'zone-no-raw-placeholder');
    expect(hits).toHaveLength(1);
    expect(hits[0]?.message).toContain('<CUSTOMER>');
    expect(hits[0]?.message).not.toContain('<ZONE>');
  });

  it("zone-no-source-lines-in-description: a program's file and line in a description, not in x-observed-source", async () => {
    const cited = {
      ...goodOp('getThing'),
      description: 'Stores the port as given (observed; `@luminati-io/luminati-proxy` 1.570.247 lib/mixins/web_api.js 348-385).',
    };
    const line = { ...goodOp('createThing'), description: 'Answers OK (web_api.js line 82).' };
    const colon = { ...goodOp('deleteThing'), description: 'Drops it (lib/manager.js:605-611).' };
    // The same facts with their sources beside the description; a file named without a line is no citation.
    const moved = {
      ...goodOp('updateThing'),
      description: 'Stores the port as given (observed), as lib/smtp.js does; version 1.570.247.',
      'x-observed-source': ['@luminati-io/luminati-proxy 1.570.247 lib/mixins/web_api.js 348-385'],
    };
    const hits = (await lint(spec({ '/api/thing': { get: cited, post: line, delete: colon, put: moved } }))).filter(
      (r) => r.code === 'zone-no-source-lines-in-description',
    );
    expect(hits.map((h) => h.path.slice(2).join(' ')).sort()).toEqual(['delete description', 'get description', 'post description']);
    expect(hits[0]?.message).toContain('x-observed-source');
  });

  it('zone-operation-behaviour: x-idempotent and x-changes-state on every operation, as booleans', async () => {
    const { 'x-idempotent': _i, ...noIdempotent } = goodOp('getThing');
    const stringy = { ...goodOp('createThing'), 'x-changes-state': 'yes' };
    const hits = (await lint(spec({ '/api/thing': { get: noIdempotent, post: stringy } }))).filter(
      (r) => r.code === 'zone-operation-behaviour',
    );
    // A missing field is reported on the operation, a wrong type on the field.
    expect(hits.map((h) => h.path.slice(2).join(' ')).sort()).toEqual(['get', 'post x-changes-state']);
    expect(hits.find((h) => h.path.length === 3)?.message).toContain('x-idempotent');
  });

  it('zone-unique-component-names: a parameter and a schema both named Zone', async () => {
    const zoneParam = { name: 'zone', in: 'query', description: 'd', schema: { type: 'string', maxLength: 2 } };
    const op = { ...goodOp('getThing'), parameters: [{ $ref: '#/components/parameters/Thing' }] };
    const doc = spec(
      { '/api/thing': { get: op } },
      {
        schemas: { Thing: { type: 'object', properties: { id: { type: 'string', maxLength: 3 } } } },
        parameters: { Thing: zoneParam },
        // An example named after its schema is the convention, not a collision.
        examples: { Thing: { value: { id: 'a' } } },
      },
    );
    const hits = (await lint(doc)).filter((r) => r.code === 'zone-unique-component-names');
    expect(hits).toHaveLength(1);
    expect(hits[0]?.path).toEqual(['components', 'parameters', 'Thing']);
    expect(hits[0]?.message).toContain('schemas and parameters');
  });

  it('zone-parameter-description', async () => {
    const op = { ...goodOp('getThing'), parameters: [{ name: 'q', in: 'query', schema: { type: 'string', maxLength: 2 } }] };
    expect(await codes(spec({ '/api/thing': { get: op } }))).toContain('zone-parameter-description');
  });
});
