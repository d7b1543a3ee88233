import { startSandbox } from '@zone-api/sandbox';
import type { TestProject } from 'vitest/node';
import { apiOf, provideTarget } from './context.js';

/** The sandbox (both APIs, free ports, in-memory state) for the project's contract suite. */
export default async function setup(project: TestProject) {
  const api = apiOf(project);
  const sandbox = await startSandbox({ accountPort: 0, managerPort: 0 });
  provideTarget(project, api, api === 'account' ? sandbox.accountUrl : sandbox.managerUrl, 'sandbox');
  return () => sandbox.close();
}
