import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from '@zone-api/testkit';
import { generate } from 'openapi-typescript-codegen';
import { afterAll, describe, expect, it } from 'vitest';

// openapi-typescript-codegen, a popular TypeScript generator that reads OpenAPI 3.0 only, on the
// published 3.0.3 variants, as a user runs it; its output must compile with --strict. It writes every
// component of every kind into one namespace of models, so two kinds sharing a name (a parameter and
// a schema both called `Zone`) gave a `Duplicate identifier` (rule zone-unique-component-names).

const out = mkdtempSync(join(tmpdir(), 'zone-api-ts-codegen-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));

describe.each(['account', 'manager'] as const)('openapi-typescript-codegen on the %s 3.0.3 variant', (api) => {
  it('generates a client whose output compiles with --strict', async () => {
    const dir = join(out, api);
    await generate({ input: join(repoRoot, `packages/spec/dist/${api}.openapi-3.0.json`), output: dir, httpClient: 'fetch' });
    const models = readdirSync(join(dir, 'models'));
    expect(models.length).toBeGreaterThan(20);
    expect(readdirSync(join(dir, 'services')).length).toBeGreaterThan(0);
    const tsc = spawnSync(
      process.execPath,
      [
        join(repoRoot, 'node_modules/typescript/bin/tsc'),
        '--strict',
        '--noEmit',
        '--skipLibCheck',
        '--target',
        'es2022',
        '--module',
        'esnext',
        '--moduleResolution',
        'bundler',
        '--lib',
        'es2022,dom',
        join(dir, 'index.ts'),
      ],
      { encoding: 'utf8' },
    );
    expect(`${tsc.stdout}${tsc.stderr}`).toBe('');
    expect(tsc.status).toBe(0);
  });
});
