import { startSandbox } from '@zone-api/sandbox';
import type {} from 'vitest';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    accountUrl: string;
    accountTarget: 'prism' | 'sandbox';
  }
}

/** Starts the sandbox (both APIs, free ports, in-memory state) for the account contract tests, and closes it afterwards. */
export default async function setup(project: TestProject) {
  const sandbox = await startSandbox({ accountPort: 0, managerPort: 0 });
  project.provide('accountUrl', sandbox.accountUrl);
  project.provide('accountTarget', 'sandbox');
  return () => sandbox.close();
}
