import type { TestProject } from 'vitest/node';
import { startPrism } from '../index.js';
import { apiOf, provideTarget } from './context.js';

/** Prism mocking the project's API bundle on a free port; stopped by pid afterwards. */
export default async function setup(project: TestProject) {
  const api = apiOf(project);
  const prism = await startPrism(api);
  provideTarget(project, api, prism.url, 'prism');
  return () => prism.stop();
}
