import createClient, { type Client, type ClientForPath, type Middleware, type QuerySerializer } from 'openapi-fetch';
import { createTransport, type TransportOptions } from './fetch.js';
import { textBodies } from './middleware.js';

/** An operation table, generated from a bundle: operationId -> method and path. */
export type OperationTable = Record<string, { readonly method: string; readonly path: string }>;

type Media = `${string}/${string}`;

/** One typed method per operationId, e.g. `client.getZone({ params: { query: { zone } } })`. */
export type OperationMethods<Paths extends {}, Ops extends OperationTable> = {
  [K in keyof Ops]: Ops[K]['path'] extends keyof Paths
    ? // biome-ignore lint/suspicious/noExplicitAny: the constraint openapi-fetch's ClientForPath itself declares
      Paths[Ops[K]['path']] extends Record<string | number, any>
      ? ClientForPath<Paths[Ops[K]['path']], Media>[Ops[K]['method'] & keyof ClientForPath<Paths[Ops[K]['path']], Media>]
      : never
    : never;
};

/** The typed client: a method per operationId, plus openapi-fetch's path-based GET/POST/… and `use`. */
export type TypedClient<Paths extends {}, Ops extends OperationTable> = OperationMethods<Paths, Ops> & Client<Paths>;

export interface CoreClientOptions extends TransportOptions {
  baseUrl: string;
  /** Extra headers sent with every request. */
  headers?: Record<string, string>;
}

/**
 * Query strings: primitives as `k=v`, arrays repeated (`k=a&k=b`), and objects JSON-encoded
 * (`plan={"ips_type":"shared"}`), as the APIs expect for JSON-in-query parameters.
 * Dotted names such as `status.code` stay as they are.
 */
export const querySerializer: QuerySerializer<unknown> = (query) => {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(query ?? {})) {
    if (value === undefined || value === null) continue;
    if (Array.isArray(value)) for (const item of value) search.append(key, String(item));
    else if (typeof value === 'object') search.append(key, JSON.stringify(value));
    else search.append(key, String(value));
  }
  return search.toString();
};

/**
 * Builds the shared client: openapi-fetch over a transport with timeout and retries, text bodies
 * as strings, the given middleware (auth first), and one method per operation of `operations`.
 * `secrets` are the credentials the client holds: no error message will contain them.
 */
export function createTypedClient<Paths extends {}, Ops extends OperationTable>(
  options: CoreClientOptions,
  operations: Ops,
  middleware: readonly Middleware[],
  secrets: readonly string[],
): TypedClient<Paths, Ops> {
  const client = createClient<Paths>({
    baseUrl: options.baseUrl,
    fetch: createTransport(options, secrets),
    querySerializer,
    ...(options.headers ? { headers: options.headers } : {}),
  });
  client.use(...middleware, textBodies(secrets));
  const typed = client as TypedClient<Paths, Ops>;
  const request = client.request as (method: string, path: string, init?: unknown) => Promise<unknown>;
  for (const [operationId, { method, path }] of Object.entries(operations)) {
    Object.defineProperty(typed, operationId, {
      value: (init?: unknown) => request(method, path, init),
      enumerable: true,
    });
  }
  return typed;
}
