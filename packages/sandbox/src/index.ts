// Where the bundles are and how they load: the operation model's, for a user checking the sandbox's spec.
export { bundlePath, loadBundle } from '@zone-api/spec/model';
export type { AccountAuth } from './account/auth.js';
export type { Call, CallFilter } from './control/calls.js';
export type { FaultControl } from './control/control.js';
export type { Override, OverrideAnswer, Overrides } from './control/overrides.js';
export { type DefaultZone, type PortFixture, SeedBuilder, seed, type ZoneFixture } from './control/seed-builder.js';
export { defaultSeed, SEED } from './domain/seed.js';
export { validateSeed } from './domain/seed-check.js';
export type { ProxyPortConfig, StateData, StoredPlan, ZoneState } from './domain/types.js';
export type { SandboxCredentials } from './host/boot.js';
export { DEFAULT_ACCOUNT_PORT, DEFAULT_HOST, DEFAULT_MANAGER_PORT, startSandbox } from './host/sandbox.js';
export type {
  AccountSeed,
  CreateAccountOptions,
  Sandbox,
  SandboxAccount,
  SandboxAccountManager,
  SandboxOptions,
  SandboxPorts,
} from './host/sandbox-types.js';
export { MANAGER_SUNSET } from './manager/profile.js';
export type { Answer, Ctx, Handler } from './router/api-options.js';
export type { Fault, FaultAction, FaultMatch, FaultSpec, FaultStep } from './router/faults.js';
export type { AccountOperationId, ManagerOperationId } from './router/spec.js';
export { PROVIDER_API_HOST, REAL_MANAGER_BRAND } from './shared/brand.js';
export { type ErrorDetail, HttpError } from './shared/errors.js';
