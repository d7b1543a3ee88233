import { startSandbox } from '@zone-api/sandbox';
import type {} from 'vitest';
import type { TestProject } from 'vitest/node';
import { startPrismProxy } from '../index.js';

declare module 'vitest' {
  export interface ProvidedContext {
    accountUrl: string;
    accountTarget: 'prism' | 'sandbox';
  }
}

/**
 * The account contract suite through `prism proxy` in front of the sandbox: Prism forwards every call
 * and reports in `sl-violations` where a response breaks the spec, which the suite fails on.
 * The target stays 'sandbox' because the answers are the sandbox's.
 */
export default async function setup(project: TestProject) {
  const sandbox = await startSandbox({ accountPort: 0, managerPort: 0 });
  const prism = await startPrismProxy('account', sandbox.accountUrl);
  project.provide('accountUrl', prism.url);
  project.provide('accountTarget', 'sandbox');
  return async () => {
    await prism.stop();
    await sandbox.close();
  };
}
