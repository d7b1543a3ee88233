import { type CoreClientOptions, createTypedClient, headerAuth, type TypedClient } from '@zone-api/client-core';
import type { Middleware } from 'openapi-fetch';
import type { components, operations as Operations, paths } from './generated/manager.js';
import { operations } from './generated/operations.js';

export type { RetryOptions } from '@zone-api/client-core';
export { ZoneApiError } from '@zone-api/client-core';
export type { components, paths } from './generated/manager.js';
export type { OperationId } from './generated/operations.js';
export { operations } from './generated/operations.js';

/** Named schemas of the spec, e.g. `Schemas['ProxyPort']`. */
export type Schemas = components['schemas'];
/** Per-operation types, e.g. `OperationTypes['createProxy']['responses']`. */
export type OperationTypes = Operations;

export const DEFAULT_MANAGER_URL = 'http://127.0.0.1:22999';

/** Operations that take the manager token (`Authorization: <token>`, no `Bearer`). */
export const TOKEN_PATHS = ['/api/add_wip'] as const;

export interface ManagerClientOptions extends Omit<CoreClientOptions, 'baseUrl'> {
  /** The manager's admin API. Default `http://127.0.0.1:22999`. */
  baseUrl?: string;
  /**
   * The token from `getNewToken` (`GET /api/gen_token`), sent as `Authorization: <token>` with no
   * `Bearer` prefix on the operations that take one (`addWhitelistIp`). Other operations send no credential.
   */
  token?: string;
}

export type ManagerClient = TypedClient<paths, typeof operations>;

/**
 * A typed client of the Local Proxy Manager API: one method per operationId
 * (`client.createProxy(...)`), plus openapi-fetch's path-based `GET`/`POST`/… .
 *
 * Text responses (`OK`, log tails, error texts) come back as strings; 204s as `data: undefined`.
 * Timeouts and network failures throw `ZoneApiError`, never with the token in the message.
 */
export function createManagerClient(options: ManagerClientOptions = {}): ManagerClient {
  const { token, baseUrl = DEFAULT_MANAGER_URL, ...core } = options;
  const middleware: Middleware[] = token ? [headerAuth('Authorization', token, TOKEN_PATHS)] : [];
  return createTypedClient<paths, typeof operations>({ ...core, baseUrl }, operations, middleware, token ? [token] : []);
}
