import type {} from 'vitest';
import type { TestProject } from 'vitest/node';
import { startPrism } from '../index.js';

declare module 'vitest' {
  export interface ProvidedContext {
    managerUrl: string;
    managerTarget: 'prism' | 'sandbox';
  }
}

/** Starts Prism on the manager bundle for the contract tests, and stops it (by pid) afterwards. */
export default async function setup(project: TestProject) {
  const prism = await startPrism('manager');
  project.provide('managerUrl', prism.url);
  project.provide('managerTarget', 'prism');
  return () => prism.stop();
}
