import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

// The root config with one project kept (ZONE_API_MUTATION_PROJECT, set by scripts/mutation.mjs):
// StrykerJS's vitest runner takes a config file, not a project name.
const keep = process.env.ZONE_API_MUTATION_PROJECT;
if (!keep) throw new Error('ZONE_API_MUTATION_PROJECT is not set: run `pnpm mutation`');
const kept = (base.test?.projects ?? []).filter((p) => typeof p === 'object' && 'test' in p && p.test?.name === keep);
if (kept.length !== 1) throw new Error(`no vitest project named ${keep}`);
// `pnpm mutation … --tests GLOB`: only those test files of the project (ZONE_API_MUTATION_TESTS, a JSON list).
const tests = process.env.ZONE_API_MUTATION_TESTS ? (JSON.parse(process.env.ZONE_API_MUTATION_TESTS) as string[]) : undefined;
const projects = tests ? kept.map((p) => (typeof p === 'object' && 'test' in p ? { ...p, test: { ...p.test, include: tests } } : p)) : kept;

export default defineConfig({ ...base, test: { ...base.test, projects } });
