import { type CoreClientOptions, createTypedClient, type OperationMethods, type TypedClient } from '@zone-api/client-core';
import { type components, type DocumentedMethods, type OperationTypes as Operations, operations, type paths } from '@zone-api/spec/manager';

export type { ErrorAtStatus, ErrorMessage, ErrorStatus, ResponseError, RetryOptions } from '@zone-api/client-core';
export { errorAt, ZoneApiError } from '@zone-api/client-core';
// The schema types and the operation table are generated into @zone-api/spec; the client re-exports them.
export type { components, OperationId, paths } from '@zone-api/spec/manager';
export { operations } from '@zone-api/spec/manager';

/** Named schemas of the spec, e.g. `Schemas['ProxyPort']`. */
export type Schemas = components['schemas'];
/** Per-operation types, e.g. `OperationTypes['createProxy']['responses']`. */
export type OperationTypes = Operations;

export const DEFAULT_MANAGER_URL = 'http://127.0.0.1:22999';

/** The paths of the operations whose `security` names the manager token (`managerToken` in the spec). */
export const TOKEN_PATHS: readonly string[] = Object.values(operations)
  .filter((op) => 'credentials' in op && (op.credentials as readonly string[]).includes('managerToken'))
  .map((op) => op.path);

export interface ManagerClientOptions extends Omit<CoreClientOptions, 'baseUrl'> {
  /** The manager's admin API. Default `http://127.0.0.1:22999`. */
  baseUrl?: string;
  /**
   * The token from `getNewToken` (`GET /api/gen_token`), sent as `Authorization: <token>` with no
   * `Bearer` prefix on the operations whose security names the manager token (`addWhitelistIp`).
   * Other operations send no credential.
   */
  token?: string;
  /**
   * The brand prefix of the user paths: `/api/<brand>_users` and `/api/<brand>_user` (`listUsers`,
   * `addUser`). Default `'lpm'`, what the real local proxy manager serves (and the sandbox too); `'pm'`
   * is how the provider's documentation writes them (and what a mock of the spec, such as Prism,
   * serves). A path the real program does not have is answered with its web page, which this client
   * reports as an error (`kind: 'media-type'`), never as data.
   */
  brand?: string;
}

/** The brand word of the user paths the real local proxy manager serves (`/api/lpm_users`): the `brand` option's default. */
export const DEFAULT_BRAND = 'lpm';

/** The manager client: one documented method per operation (hover one for its docs), `paginate`, and openapi-fetch's own methods. */
export type ManagerClient = TypedClient<paths, typeof operations, DocumentedMethods<OperationMethods<paths, typeof operations>>>;

/**
 * A typed client of the Local Proxy Manager API: one method per operationId
 * (`client.createProxy(...)`), plus openapi-fetch's path-based `GET`/`POST`/… .
 *
 * Text responses (`OK`, log tails) come back as strings; 204s as `data: undefined`. Every error is a
 * truthy object: the JSON error body, or a `ResponseError` for a text or empty answer. Timeouts and
 * network failures throw `ZoneApiError`, never with the token in the message.
 */
export function createManagerClient(options: ManagerClientOptions = {}): ManagerClient {
  const { token, baseUrl = DEFAULT_MANAGER_URL, brand = DEFAULT_BRAND, ...core } = options;
  const headers = token ? { Authorization: token } : undefined;
  return createTypedClient<paths, typeof operations>({ ...core, baseUrl }, operations, {
    ...(headers ? { auth: (schemaPath: string) => (TOKEN_PATHS.includes(schemaPath) ? headers : undefined) } : {}),
    secrets: token ? [token] : [],
    brand,
  }) as ManagerClient;
}
