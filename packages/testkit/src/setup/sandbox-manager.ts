import { startSandbox } from '@zone-api/sandbox';
import type {} from 'vitest';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    managerUrl: string;
    managerTarget: 'prism' | 'sandbox';
  }
}

/** Starts the sandbox (both APIs, free ports, in-memory state) for the manager contract tests, and closes it afterwards. */
export default async function setup(project: TestProject) {
  const sandbox = await startSandbox({ accountPort: 0, managerPort: 0 });
  project.provide('managerUrl', sandbox.managerUrl);
  project.provide('managerTarget', 'sandbox');
  return () => sandbox.close();
}
