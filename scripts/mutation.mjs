#!/usr/bin/env node
// `pnpm mutation [client-core|domain] [--mutate FILE]... [--tests GLOB]... [--static]`: StrykerJS mutation testing
// of the client core and the sandbox's domain, with its vitest runner (not in CI: a run takes minutes to
// hours on 2 cores). `--tests` narrows the target's vitest project to those test files (its unit tests,
// e.g. packages/sandbox/test/domain/**): far faster, and a lower bound of the whole project's score
// (more tests only kill more mutants). `--static` also tests the mutants of what a module computes when
// it is loaded (the domain ignores them by default: each reloads the tests); for a file that is all such
// code, as seed-schema.ts, narrowed to its tests.
// Incremental: each target keeps its last results in artifacts/mutation/<target>.incremental.json, so
// a second run tests only the mutants of code or tests that changed. The domain is large: give one
// file at a time with --mutate (packages/sandbox/src/domain/net.ts). Reports (HTML, JSON) go to
// artifacts/mutation/<target>/; the score is printed at the end. Scores so far: the packages' READMEs.
import { mkdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parseArgs } from 'node:util';
import { Stryker } from '@stryker-mutator/core';
import { isMain, root } from '../packages/spec/scripts/lib.mjs';

/** What each target mutates and which vitest project tests it. */
export const targets = {
  'client-core': { project: 'client-core', mutate: ['packages/client-core/src/**/*.ts'], ignoreStatic: false },
  domain: { project: 'sandbox', mutate: ['packages/sandbox/src/domain/**/*.ts'], ignoreStatic: true },
};

export async function mutation(target, files = [], tests = [], withStatic = false) {
  const t = targets[target];
  if (!t) throw new Error(`unknown target ${target}: one of ${Object.keys(targets).join(', ')}`);
  const out = join(root, 'artifacts/mutation');
  mkdirSync(out, { recursive: true });
  process.env.ZONE_API_MUTATION_PROJECT = t.project;
  if (tests.length) process.env.ZONE_API_MUTATION_TESTS = JSON.stringify(tests);
  else delete process.env.ZONE_API_MUTATION_TESTS;
  const stryker = new Stryker({
    testRunner: 'vitest',
    vitest: { configFile: 'vitest.stryker.config.ts' },
    plugins: ['@stryker-mutator/vitest-runner'],
    mutate: files.length ? files.map((f) => relative(root, join(root, f))) : t.mutate,
    coverageAnalysis: 'perTest',
    ignoreStatic: t.ignoreStatic && !withStatic,
    incremental: true,
    // A narrowed run keeps its results apart: its survivors are not the whole project's.
    incrementalFile: join(out, `${target}${tests.length ? '.narrowed' : ''}${withStatic ? '.static' : ''}.incremental.json`),
    reporters: ['clear-text', 'progress-append-only', 'html', 'json'],
    htmlReporter: { fileName: join(out, target, 'index.html') },
    jsonReporter: { fileName: join(out, target, 'mutation.json') },
    concurrency: 2,
    timeoutMS: 20_000,
    tempDirName: join('artifacts', 'mutation', '.stryker-tmp'),
    cleanTempDir: 'always',
    // The workspace's packages are symlinked in node_modules: the sandbox copies must keep them.
    ignorePatterns: ['artifacts', '**/dist', 'packages/spec/test/docs', 'packages/*/test/.*'],
  });
  const results = await stryker.runMutationTest();
  const counts = {};
  for (const r of results) counts[r.status] = (counts[r.status] ?? 0) + 1;
  const detected = (counts.Killed ?? 0) + (counts.Timeout ?? 0);
  const valid = detected + (counts.Survived ?? 0) + (counts.NoCoverage ?? 0);
  const score = valid ? (100 * detected) / valid : 0;
  const by = tests.length ? ` with ${tests.join(', ')}` : '';
  console.log(`mutation score of ${target}${by}: ${score.toFixed(1)} % (${detected} of ${valid} detected; ${JSON.stringify(counts)})`);
  return score;
}

if (isMain(import.meta.url)) {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { mutate: { type: 'string', multiple: true }, tests: { type: 'string', multiple: true }, static: { type: 'boolean' } },
  });
  try {
    await mutation(positionals[0] ?? 'client-core', values.mutate ?? [], values.tests ?? [], values.static ?? false);
  } catch (e) {
    console.error(e.message);
    process.exit(1);
  }
}
