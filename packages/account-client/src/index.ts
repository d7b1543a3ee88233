import { type CallInit, type CoreClientOptions, createTypedClient, type OperationMethods, type TypedClient } from '@zone-api/client-core';
import { type components, type DocumentedMethods, type OperationTypes as Operations, operations, type paths } from '@zone-api/spec/account';

export type { ErrorAtStatus, ErrorMessage, ErrorStatus, ResponseError, RetryOptions } from '@zone-api/client-core';
export { errorAt, ZoneApiError } from '@zone-api/client-core';
// The schema types and the operation table are generated into @zone-api/spec; the client re-exports them.
export type { components, OperationId, paths } from '@zone-api/spec/account';
export { operations } from '@zone-api/spec/account';

/** Named schemas of the spec, e.g. `Schemas['Zone']`. */
export type Schemas = components['schemas'];
/** Per-operation types, e.g. `OperationTypes['getZone']['responses']`. */
export type OperationTypes = Operations;

/** How the client authenticates: exactly one of the three schemes of the spec. */
export type AccountAuth =
  /** `Authorization: Bearer <token>`: the current scheme. */
  | { token: string }
  /** HTTP basic: deprecated since 01-Jan-2021 (a warning is emitted once per process). */
  | { basic: { username: string; password: string } }
  /**
   * The Zone credential header `X-Service-Auth: service-customer-<customer>-zone-<zone>-key-<password>`.
   * `country` is appended as `-country-<country>` on `getRouteIps`, in lower case, as the provider's own
   * tools write it (its CLI, and the local proxy manager for every value of its credentials). With it, calls
   * omit `customer` and `zone`.
   */
  | { zone: { customer: string; zone: string; password: string; country?: string } };

export interface AccountClientOptions extends Omit<CoreClientOptions, 'headers'> {
  /** Scheme and host of the account API (the provider's documentation calls it {base_url}), or a sandbox/mock URL. */
  baseUrl: string;
  auth: AccountAuth;
  /**
   * Default account id, added to the query (GET) or the JSON body (other methods) of calls that
   * leave `customer` out. Not used with `auth.zone`, whose header names the account.
   */
  customer?: string;
  headers?: Record<string, string>;
}

/** The two paths whose `plan` query parameter is a JSON object (`content: application/json`). */
type PlanPaths = '/api/zone/count_available_ips' | '/api/count_available_ips';
type PlanGet<P extends PlanPaths> = paths[P]['get'];
type PlanQuery<P extends PlanPaths> = Omit<PlanGet<P>['parameters']['query'], 'plan'> & {
  /** The plan filter; the client JSON-encodes it into the query. A pre-encoded JSON string is accepted too. */
  plan?: components['schemas']['AvailableIpPlanFilter'] | string;
};

/**
 * The generated paths, except that `plan` is typed as the object it is: openapi-typescript types a
 * content-encoded query parameter as `string`, leaving callers to encode JSON by hand.
 */
export type AccountPaths = Omit<paths, PlanPaths> & {
  [P in PlanPaths]: Omit<paths[P], 'get'> & {
    get: Omit<PlanGet<P>, 'parameters'> & { parameters: Omit<PlanGet<P>['parameters'], 'query'> & { query: PlanQuery<P> } };
  };
};

/** The fields the client fills in itself: `customer` (a default `customer`), `zone` (a Zone credential). */
export type FilledField = 'customer' | 'zone';

type Optional<T, K extends PropertyKey> = T extends object ? Omit<T, K & keyof T> & Partial<Pick<T, K & keyof T>> : T;
type HasRequired<T> = { [F in keyof T]-?: Record<never, never> extends Pick<T, F> ? never : F }[keyof T] extends never ? false : true;
type FillQuery<P, K extends PropertyKey> = P extends { query?: infer Q }
  ? [NonNullable<Q>] extends [never]
    ? P
    : Omit<P, 'query'> &
        (HasRequired<Optional<NonNullable<Q>, K>> extends true
          ? { query: Optional<NonNullable<Q>, K> }
          : { query?: Optional<NonNullable<Q>, K> })
  : P;
type FillBody<B, K extends PropertyKey> = B extends { content: { 'application/json': infer J } }
  ? Omit<B, 'content'> & { content: { 'application/json': Optional<J, K> } }
  : B;
// A homomorphic mapped type: an optional `requestBody` stays optional.
type FillOp<Op, K extends PropertyKey> = Op extends { parameters: infer P }
  ? { [F in keyof Op]: F extends 'parameters' ? FillQuery<P, K> : F extends 'requestBody' ? FillBody<Op[F], K> : Op[F] }
  : Op;

/** The paths with the fields `K` optional in every query and JSON body: the client adds them. */
export type FilledPaths<K extends PropertyKey> = {
  [P in keyof AccountPaths]: { [M in keyof AccountPaths[P]]: M extends 'parameters' ? AccountPaths[P][M] : FillOp<AccountPaths[P][M], K> };
};

/**
 * The account client: one documented method per operation (hover one for its docs), `paginate`, and
 * openapi-fetch's own methods. `K`: the fields the client fills in, optional in every call.
 */
export type AccountClient<K extends FilledField = never> = TypedClient<
  FilledPaths<K>,
  typeof operations,
  DocumentedMethods<OperationMethods<FilledPaths<K>, typeof operations>>
>;

export const ZONE_AUTH_HEADER = 'X-Service-Auth';

let basicWarned = false;

/**
 * The `X-Service-Auth` value for a Zone credential. The country in lower case: the spec's layout
 * (`-country-[a-z]{2}`), and what the provider's CLI sends (@brightdata/cli
 * lowers it before it writes `-country-`: dist/utils/browser-credentials.js 13-18, 46-48, 0.3.7).
 */
export function zoneCredential(zone: { customer: string; zone: string; password: string; country?: string }, withCountry = false): string {
  const base = `service-customer-${zone.customer}-zone-${zone.zone}-key-${zone.password}`;
  return withCountry && zone.country ? `${base}-country-${zone.country.toLowerCase()}` : base;
}

/** The credential headers of a path, and the credentials no message may show. */
function credentials(auth: AccountAuth): { auth: (schemaPath: string) => Record<string, string>; secrets: string[] } {
  if ('token' in auth) {
    const headers = { Authorization: `Bearer ${auth.token}` };
    return { auth: () => headers, secrets: [auth.token] };
  }
  if ('basic' in auth) {
    if (!basicWarned) {
      basicWarned = true;
      process.emitWarning('HTTP basic authentication of the account API is deprecated since 01-Jan-2021; use { token }.', {
        type: 'DeprecationWarning',
        code: 'ZONE_API_BASIC_AUTH',
      });
    }
    const pair = `${auth.basic.username}:${auth.basic.password}`;
    const headers = { Authorization: `Basic ${Buffer.from(pair).toString('base64')}` };
    return { auth: () => headers, secrets: [auth.basic.password, pair] };
  }
  const zone = auth.zone;
  return {
    auth: (schemaPath) => ({ [ZONE_AUTH_HEADER]: zoneCredential(zone, schemaPath === '/api/zone/route_ips') }),
    secrets: [zone.password, zoneCredential(zone), zoneCredential(zone, true)],
  };
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  value !== null &&
  typeof value === 'object' &&
  (Object.getPrototypeOf(value) === Object.prototype || Object.getPrototypeOf(value) === null);

/**
 * Adds the default `customer` to the query (GET, HEAD) or the JSON object body of calls that leave it
 * out (a `customer` of `undefined` or `null` counts as left out). A body the call serializes itself
 * (its own `bodySerializer`) is left alone.
 */
function customerDefault(customer: string): (method: string, init: CallInit | undefined) => CallInit | undefined {
  return (method, init) => {
    if (method === 'GET' || method === 'HEAD') {
      const query = init?.params?.query as Record<string, unknown> | undefined;
      if (query?.customer != null) return init;
      return { ...init, params: { ...init?.params, query: { ...query, customer } } };
    }
    const body = init?.body;
    if (!isPlainObject(body) || body.customer != null || init?.bodySerializer !== undefined) return init;
    const { customer: _left, ...rest } = body;
    return { ...init, body: { customer, ...rest } };
  };
}

/**
 * A typed client of the Account and Zone Management API: one method per operationId
 * (`client.getZone(...)`), plus openapi-fetch's path-based `GET`/`POST`/… .
 *
 * Results are `{ data, error, response }`: `data` typed by the 2xx schema, `error` by the error
 * schemas. `getRouteIps` returns its text as a string; JSON-in-query `plan` is encoded for you;
 * DELETE bodies are sent. Timeouts and network failures throw `ZoneApiError`, never with a credential
 * in the message.
 */
export function createAccountClient(options: AccountClientOptions & { auth: { zone: object } }): AccountClient<FilledField>;
export function createAccountClient(options: AccountClientOptions & { customer: string }): AccountClient<'customer'>;
export function createAccountClient(options: AccountClientOptions): AccountClient;
export function createAccountClient(options: AccountClientOptions): AccountClient<FilledField> | AccountClient<'customer'> | AccountClient {
  const { auth, customer, ...core } = options;
  return createTypedClient<FilledPaths<FilledField>, typeof operations>(core, operations, {
    ...credentials(auth),
    ...(customer && !('zone' in auth) ? { fill: customerDefault(customer) } : {}),
  }) as AccountClient<FilledField>;
}
