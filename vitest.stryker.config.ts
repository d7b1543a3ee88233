import { defineConfig, type TestProjectInlineConfiguration } from 'vitest/config';
import base from './vitest.config.js';

// The root config with one project kept (ZONE_API_MUTATION_PROJECT, set by scripts/mutation.mjs):
// StrykerJS's vitest runner takes a config file, not a project name.
const keep = process.env.ZONE_API_MUTATION_PROJECT;
if (!keep) throw new Error('ZONE_API_MUTATION_PROJECT is not set: run `pnpm mutation`');
const named = (name: string) =>
  (base.test?.projects ?? []).find(
    (p): p is TestProjectInlineConfiguration => typeof p === 'object' && 'test' in p && p.test?.name === name,
  );
const main = named(keep);
if (!main?.test) throw new Error(`no vitest project named ${keep}`);
// The files of a project that share their modules in a worker are in a project of their own, named
// after it (`sandbox:shared`): under Stryker they are the project's again, every file isolated.
const shared = (named(`${keep}:shared`)?.test?.include ?? []) as string[];
// `pnpm mutation … --tests GLOB`: only those test files of the project (ZONE_API_MUTATION_TESTS, a JSON list).
const tests = process.env.ZONE_API_MUTATION_TESTS ? (JSON.parse(process.env.ZONE_API_MUTATION_TESTS) as string[]) : undefined;
const project: TestProjectInlineConfiguration = {
  ...main,
  test: {
    ...main.test,
    isolate: true,
    include: tests ?? [...(main.test.include ?? []), ...shared],
    exclude: (main.test.exclude ?? []).filter((e) => !shared.includes(e)),
  },
};

export default defineConfig({ ...base, test: { ...base.test, projects: [project] } });
