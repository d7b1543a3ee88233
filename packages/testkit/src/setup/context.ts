import type {} from 'vitest';
import type { TestProject } from 'vitest/node';
import type { ApiName } from '../index.js';

declare module 'vitest' {
  export interface ProvidedContext {
    accountUrl: string;
    accountTarget: 'prism' | 'sandbox';
    managerUrl: string;
    managerTarget: 'prism' | 'sandbox';
  }
}

/** The API a contract project tests, from its name (`account-contract:…`, `manager-contract:…`). */
export function apiOf(project: TestProject): ApiName {
  const api = project.name.split('-')[0];
  if (api !== 'account' && api !== 'manager') throw new Error(`project "${project.name}" names no API (account-… or manager-…)`);
  return api;
}

/** Hands the suite its base URL and what answers it (Prism's examples, or the sandbox's state). */
export function provideTarget(project: TestProject, api: ApiName, url: string, target: 'prism' | 'sandbox') {
  if (api === 'account') {
    project.provide('accountUrl', url);
    project.provide('accountTarget', target);
  } else {
    project.provide('managerUrl', url);
    project.provide('managerTarget', target);
  }
}
