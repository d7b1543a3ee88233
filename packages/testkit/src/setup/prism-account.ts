import type {} from 'vitest';
import type { TestProject } from 'vitest/node';
import { startPrism } from '../index.js';

declare module 'vitest' {
  export interface ProvidedContext {
    accountUrl: string;
    accountTarget: 'prism' | 'sandbox';
  }
}

/** Starts Prism on the account bundle for the contract tests, and stops it (by pid) afterwards. */
export default async function setup(project: TestProject) {
  const prism = await startPrism('account');
  project.provide('accountUrl', prism.url);
  project.provide('accountTarget', 'prism');
  return () => prism.stop();
}
