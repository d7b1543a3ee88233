import { startSandbox } from '@zone-api/sandbox';
import type { TestProject } from 'vitest/node';
import { startPrismProxy } from '../index.js';
import { apiOf, provideTarget } from './context.js';

/**
 * The contract suite through `prism proxy` in front of the sandbox: Prism forwards every call and
 * reports in `sl-violations` where a response breaks the spec, which the suite fails on. The target
 * stays 'sandbox' because the answers are the sandbox's.
 */
export default async function setup(project: TestProject) {
  const api = apiOf(project);
  const sandbox = await startSandbox({ accountPort: 0, managerPort: 0 });
  const prism = await startPrismProxy(api, api === 'account' ? sandbox.accountUrl : sandbox.managerUrl);
  provideTarget(project, api, prism.url, 'sandbox');
  return async () => {
    await prism.stop();
    await sandbox.close();
  };
}
