import { type CoreClientOptions, createTypedClient, type OperationMethods, type TypedClient } from '@zone-api/client-core';
import { type DocumentedMethods, operations, type paths } from '@zone-api/spec/sandbox-control';

// A typed client of the sandbox's control API (specs/sandbox-control), the same client the account and
// manager APIs have: openapi-fetch over the generated paths, one documented method per operationId
// (`control.addFault({ body })`), answers checked against the bundle's media types.

export type { components, OperationId, paths } from '@zone-api/spec/sandbox-control';
export { operations } from '@zone-api/spec/sandbox-control';

/** The header the control token goes in (needed only when the sandbox listens beyond loopback). */
export const CONTROL_TOKEN_HEADER = 'X-Sandbox-Control-Token';

export interface ControlClientOptions extends CoreClientOptions {
  /** Either port of the sandbox (`sandbox.accountUrl` or `managerUrl`): faults and their operationIds are that port's API's. */
  baseUrl: string;
  /** The control token (`sandbox.controlToken`, printed in the banner), when the sandbox listens beyond loopback. */
  token?: string;
}

/** The control client: one documented method per operation of the control API, and openapi-fetch's own methods. */
export type ControlClient = TypedClient<paths, typeof operations, DocumentedMethods<OperationMethods<paths, typeof operations>>>;

/**
 * A typed client of the sandbox's control API (`/__sandbox/*`): `getState`, `resetSandbox`,
 * `createAccount`, `addFault`, `listCalls`, … Results are `{ data, error, response }`, as with the API
 * clients; the token, when given, never appears in an error.
 */
export function createControlClient(options: ControlClientOptions): ControlClient {
  const { token, ...core } = options;
  const headers = token ? { [CONTROL_TOKEN_HEADER]: token } : undefined;
  return createTypedClient<paths, typeof operations>(core, operations, {
    ...(headers ? { auth: () => headers } : {}),
    secrets: token ? [token] : [],
  }) as ControlClient;
}
