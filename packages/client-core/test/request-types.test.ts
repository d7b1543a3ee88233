// Every body-taking operation of both bundles, through the typed clients: its first body example
// compiles, and the same call with one field the spec does not name — at the body's top level and in
// its first nested object — fails to compile with an excess-property error that names the field.
// The calls are generated from the bundles and compiled with the TypeScript compiler against the
// clients' sources, so a new operation is covered without a line here.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ApiName, listOperations, loadBundle, repoRoot } from '@zone-api/testkit';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sampleRequest } from '../../spec/scripts/samples.mjs';

/** Excess property: `'x' does not exist in type …` (2353), and the same with `Did you mean 'y'?` (2561). */
const EXCESS = new Set([2353, 2561]);
const UNKNOWN = 'not_in_the_spec';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);

interface Case {
  api: ApiName;
  operationId: string;
  /** Where the unknown field goes: `body` or `body.<key>`. */
  where: string;
  /** 1-based line of the call in the generated file. */
  line: number;
  expectError: boolean;
}

/** The init of a call with a body, as the code samples build it (path and query examples, first body example). */
function initOf(api: ApiName, op: ReturnType<typeof listOperations>[number]): { params?: Json; body: Json } {
  const req = sampleRequest(loadBundle(api), op);
  const params: Json = {};
  if (Object.keys(req.path).length) params.path = req.path;
  if (Object.keys(req.query).length) params.query = req.query;
  return { ...(Object.keys(params).length ? { params } : {}), body: req.body };
}

function generate(): { source: string; cases: Case[] } {
  const lines = [
    "import { createAccountClient } from '@zone-api/account-client';",
    "import { createManagerClient } from '@zone-api/manager-client';",
    "const account = createAccountClient({ baseUrl: 'http://account.test', auth: { token: 't' }, customer: 'hl_1' });",
    'const manager = createManagerClient();',
    'export async function calls(): Promise<void> {',
  ];
  const cases: Case[] = [];
  const call = (api: ApiName, operationId: string, init: unknown, where: string, expectError: boolean) => {
    lines.push(`  await ${api}.${operationId}(${JSON.stringify(init)});`);
    cases.push({ api, operationId, where, line: lines.length, expectError });
  };
  for (const api of ['account', 'manager'] as const) {
    for (const op of listOperations(loadBundle(api))) {
      if (!op.requestBody) continue;
      const init = initOf(api, op);
      expect(isObject(init.body), `${op.operationId}: its first body example is a JSON object`).toBe(true);
      call(api, op.operationId, init, 'valid', false);
      call(api, op.operationId, { ...init, body: { ...init.body, [UNKNOWN]: 1 } }, 'body', true);
      const nested = Object.entries(init.body).find(([, v]) => isObject(v));
      if (nested) {
        const [key, value] = nested;
        call(api, op.operationId, { ...init, body: { ...init.body, [key]: { ...(value as Json), [UNKNOWN]: 1 } } }, `body.${key}`, true);
      }
    }
  }
  lines.push('}', '');
  return { source: lines.join('\n'), cases };
}

describe('request types of every body-taking operation', () => {
  let dir: string;
  let cases: Case[];
  let diagnostics: readonly ts.Diagnostic[];
  let file: string;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'zone-api-request-types-'));
    const generated = generate();
    cases = generated.cases;
    file = join(dir, 'calls.ts');
    writeFileSync(file, generated.source);
    const config = ts.readConfigFile(join(repoRoot, 'tsconfig.typecheck.json'), ts.sys.readFile);
    const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, repoRoot);
    const program = ts.createProgram([file], { ...parsed.options, noEmit: true });
    diagnostics = ts.getPreEmitDiagnostics(program);
  }, 120_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('covers every operation with a request body in both bundles', () => {
    const withBody = (['account', 'manager'] as const).flatMap((api) => listOperations(loadBundle(api)).filter((op) => op.requestBody));
    expect(withBody.length).toBeGreaterThanOrEqual(20);
    expect(new Set(cases.filter((c) => c.where === 'valid').map((c) => c.operationId)).size).toBe(withBody.length);
    // Nested objects exist in some bodies (createProxy's `proxy`, createZone's `plan`): they are checked too.
    expect(cases.filter((c) => c.where.startsWith('body.')).length).toBeGreaterThanOrEqual(3);
  });

  it('compiles each first body example, and refuses each unknown field with an excess-property error', () => {
    const at = (line: number) =>
      diagnostics.filter(
        (d) => d.file?.fileName === file && d.start !== undefined && d.file.getLineAndCharacterOfPosition(d.start).line + 1 === line,
      );
    const elsewhere = diagnostics.filter((d) => d.file?.fileName !== file);
    expect(elsewhere.map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'))).toEqual([]);
    const wrong: string[] = [];
    for (const c of cases) {
      const found = at(c.line);
      const name = `${c.api}.${c.operationId} (${c.where})`;
      if (!c.expectError) {
        if (found.length)
          wrong.push(`${name} should compile: ${found.map((d) => ts.flattenDiagnosticMessageText(d.messageText, ' ')).join('; ')}`);
      } else if (found.length !== 1 || !EXCESS.has(found[0]?.code ?? 0) || !String(found[0]?.messageText).includes(UNKNOWN)) {
        wrong.push(
          `${name} should fail with one excess-property error naming ${UNKNOWN}, got: ${
            found.map((d) => `TS${d.code} ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`).join('; ') || 'none'
          }`,
        );
      }
    }
    expect(wrong).toEqual([]);
  });
});
