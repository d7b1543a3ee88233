export type { AccountAuth } from './account/auth.js';
export { type ErrorDetail, HttpError } from './errors.js';
export type { FaultSpec } from './faults.js';
export type { Answer, Ctx, Handler } from './http.js';
export {
  DEFAULT_ACCOUNT_PORT,
  DEFAULT_HOST,
  DEFAULT_MANAGER_PORT,
  MANAGER_SUNSET,
  type Sandbox,
  type SandboxCredentials,
  type SandboxOptions,
  startSandbox,
} from './sandbox.js';
export { defaultSeed, SEED } from './seed.js';
export { bundlePath, loadBundle } from './spec.js';
export { validateSeed } from './state.js';
export type { StateData } from './types.js';
