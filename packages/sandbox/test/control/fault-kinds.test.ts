import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from '@zone-api/testkit';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';
import { afterAll, describe, expect, it } from 'vitest';

// The fault vocabulary has one home, the control API's spec (FaultActionFields): the router's fault
// code is typed from the generated types, and what each kind does is a table keyed by them. So a kind
// added to the spec alone must fail the compile of router/faults.ts until it has a behaviour. This
// test plants such a kind in a copy of the bundle, generates its types as `pnpm types` does, and
// compiles router/faults.ts against them (and, as the control, against the types of the bundle as it is).

const bundle = join(repoRoot, 'packages/spec/dist/sandbox-control.openapi.json');
const generatedModule = join(repoRoot, 'packages/spec/generated/sandbox-control.d.ts');
const faults = join(repoRoot, 'packages/sandbox/src/router/faults.ts');
const dirs: string[] = [];

afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** The TypeScript errors of router/faults.ts compiled against the types generated from `doc`. */
async function errorsWith(doc: Record<string, unknown>): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), 'zone-api-fault-kinds-'));
  dirs.push(dir);
  writeFileSync(join(dir, 'sandbox-control.schema.d.ts'), astToString(await openapiTS(doc as never)));
  copyFileSync(generatedModule, join(dir, 'sandbox-control.d.ts'));
  const config = ts.getParsedCommandLineOfConfigFile(
    join(repoRoot, 'packages/sandbox/tsconfig.json'),
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => {
        throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
      },
    },
  );
  if (!config) throw new Error('packages/sandbox/tsconfig.json could not be read');
  const program = ts.createProgram([faults], {
    ...config.options,
    noEmit: true,
    composite: false,
    incremental: false,
    declaration: false,
    paths: { '@zone-api/spec/sandbox-control': [join(dir, 'sandbox-control.d.ts')] },
  });
  return ts
    .getPreEmitDiagnostics(program)
    .filter((d) => d.file?.fileName === faults)
    .map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
}

describe('a fault kind is defined once, in the control API spec', () => {
  it('router/faults.ts compiles against the types of the bundle as it is', async () => {
    expect(await errorsWith(JSON.parse(readFileSync(bundle, 'utf8')))).toEqual([]);
  }, 120_000);

  it('a kind added to FaultActionFields alone fails the compile of router/faults.ts, naming the kind', async () => {
    const doc = JSON.parse(readFileSync(bundle, 'utf8'));
    const fields = doc.components.schemas.FaultActionFields;
    expect(Object.keys(fields.properties)).toEqual(['status', 'body', 'latency_ms', 'drop', 'pass']);
    fields.properties.reset_connection = { type: 'boolean', description: 'Send a TCP reset (a planted kind with no behaviour).' };
    const errors = await errorsWith(doc);
    expect(errors.length).toBeGreaterThan(0);
    expect(errors.join('\n')).toMatch(/reset_connection/);
  }, 120_000);
});
