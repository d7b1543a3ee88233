// Builds a client: openapi-fetch over the transport (fetch.ts), one method per operation of the table,
// the credentials and filled-in fields, and each answer held to its operation (checked.ts). What the
// methods take and return is in types.ts.
import createClient, { type Client, type Middleware, type QuerySerializer } from 'openapi-fetch';
import { textAnswer } from './answer.js';
import { checked } from './checked.js';
import { ZoneApiError } from './errors.js';
import { createTransport, PlainRequest, type TransportOptions } from './fetch.js';
import { paginate } from './paginate.js';
import { readFailure } from './read.js';
import type { OperationInfo, OperationTable, TypedClient } from './types.js';

export interface CoreClientOptions extends TransportOptions {
  baseUrl: string;
  /** Extra headers sent with every request. */
  headers?: Record<string, string>;
}

/** A call's options as openapi-fetch takes them (`params`, `body`, `headers`, …). */
export type CallInit = Record<string, unknown> & { params?: Record<string, unknown>; body?: unknown; headers?: unknown };

/** What a client package adds to the shared client. */
export interface ClientParts {
  /**
   * The credential headers of a request to a schema path (none: `undefined`). Asked once per path.
   * A header of the same name that the caller sets (client `headers`, or the call's) wins.
   */
  auth?: (schemaPath: string) => Readonly<Record<string, string>> | undefined;
  /**
   * Fills in what a call left out (the account's default `customer`), on the call's options before
   * openapi-fetch serializes them; returns them unchanged, or a new object.
   */
  fill?: (method: string, init: CallInit | undefined) => CallInit | undefined;
  /** The credentials the client holds: no error message or error text will contain them. */
  secrets: readonly string[];
  /** Replaces an operation's `brandPrefix` in its path (the manager's `pm_users` → `lpm_users`). */
  brand?: string;
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

const PATH_METHODS = ['GET', 'PUT', 'POST', 'DELETE', 'OPTIONS', 'HEAD', 'PATCH', 'TRACE'] as const;

/** A per-call middleware that sets each header the request does not carry yet (the caller's own headers win). */
function setIfAbsent(headers: Readonly<Record<string, string>>): Middleware {
  return {
    onRequest({ request }) {
      for (const [name, value] of Object.entries(headers)) if (!request.headers.has(name)) request.headers.set(name, value);
      return request;
    },
  };
}

/**
 * Builds the shared client: openapi-fetch over a transport with timeout and retries that also turns
 * text bodies into strings and redacts error bodies, credentials added as headers, and one method per
 * operation of `operations`. Operations that are not safe to repeat (`idempotent: false`) are sent
 * once, whatever the method. No middleware of ours runs on a call (openapi-fetch's middleware steps
 * cost a share of every call): the middleware a user adds with `use` runs on every call, as before.
 */
export function createTypedClient<Paths extends {}, Ops extends OperationTable>(
  options: CoreClientOptions,
  operations: Ops,
  parts: ClientParts,
): TypedClient<Paths, Ops> {
  const { secrets } = parts;
  // Caught here, not by the HTTP stack, whose error would quote the header value (the credential).
  if (secrets.some((secret) => /[\r\n\0]/.test(secret))) {
    throw new TypeError(
      'A credential given to the client contains a line break or a NUL character (a trailing newline read from a file?), which no HTTP header can carry; the credential is not shown here',
    );
  }
  const answer = textAnswer(secrets);
  const mayRepeat = (op: OperationInfo) => op.idempotent || (options.retry !== false && options.retry?.retryNonIdempotent === true);
  const base = {
    baseUrl: options.baseUrl,
    querySerializer,
    ...(options.headers ? { headers: options.headers } : {}),
  };
  // openapi-fetch clients over two transports: one that retries what its method allows, one that sends
  // once (for operations not safe to repeat). While no middleware is registered, calls go through the
  // pair that builds no Request of its own (a PlainRequest, which the transport hands to fetch as URL
  // and init: the call's one Request is the one fetch builds); a user's middleware gets real Requests
  // from the other pair, the client handed out.
  const retrying = createTransport(options, secrets, answer);
  const sendOnce = createTransport({ ...options, retry: false }, secrets, answer);
  const client = createClient<Paths>({ ...base, fetch: retrying });
  const single = createClient<Paths>({ ...base, fetch: sendOnce });
  const Request = PlainRequest as unknown as typeof globalThis.Request;
  const plainClient = createClient<Paths>({ ...base, fetch: retrying, Request });
  const plainSingle = createClient<Paths>({ ...base, fetch: sendOnce, Request });
  type Raw = (method: string, path: string, init?: unknown) => Promise<{ data?: unknown; error?: unknown; response: Response }>;
  const raw = (c: Client<Paths>) => c.request.bind(c) as Raw;
  const [request, requestOnce, plainRequest, plainRequestOnce] = [client, single, plainClient, plainSingle].map(raw) as [
    Raw,
    Raw,
    Raw,
    Raw,
  ];
  const registered = new Set<Middleware>();

  // The credential headers of a path, less those the client's own `headers` set (which win).
  const own = new Headers(options.headers);
  const authOf = (schemaPath: string) => {
    const headers = parts.auth?.(schemaPath);
    if (!headers) return undefined;
    const kept = Object.entries(headers).filter(([name]) => !own.has(name));
    return kept.length ? Object.fromEntries(kept) : undefined;
  };
  /** A call's options with the filled-in fields and the credential headers. */
  const prepare = (method: string, auth: Readonly<Record<string, string>> | undefined, init: CallInit | undefined) => {
    const filled = parts.fill ? parts.fill(method, init) : init;
    if (!auth) return filled;
    // The caller's headers, if any, are merged by openapi-fetch first; the credential then only fills a gap.
    if (filled?.headers !== undefined || filled?.params?.header !== undefined) {
      const middleware = (filled.middleware as Middleware[] | undefined) ?? [];
      return { ...filled, middleware: [...middleware, setIfAbsent(auth)] };
    }
    return filled ? { ...filled, headers: auth } : { headers: auth };
  };

  /**
   * Sends a prepared call: real Requests for middleware (a user's, or a call's own), else PlainRequests.
   * A failure while the answer's body is read (cut short, too slow, too large) is a ZoneApiError too.
   */
  const send = (repeat: boolean, method: string, path: string, init: CallInit | undefined) =>
    (registered.size || init?.middleware !== undefined ? (repeat ? request : requestOnce) : repeat ? plainRequest : plainRequestOnce)(
      method,
      path,
      init,
    ).catch((err: unknown) => {
      throw readFailure(err, method.toUpperCase(), path) ?? err;
    });

  const typed = client as TypedClient<Paths, Ops>;
  const call = (op: OperationInfo, path: string, auth: Readonly<Record<string, string>> | undefined, init?: CallInit) =>
    send(mayRepeat(op), op.method, path, prepare(op.method, auth, init)).then(
      (r) => checked(op, r, secrets),
      (err: unknown) => {
        // openapi-fetch's JSON.parse of a broken body: its message quotes the body, so it is not passed on.
        if (err instanceof SyntaxError) {
          throw new ZoneApiError(`${op.method} ${path} answered a JSON body that does not parse`, 'parse', op.method, path, 1);
        }
        throw err;
      },
    );
  for (const [operationId, op] of Object.entries(operations)) {
    // What does not change from call to call is worked out once: the branded path, the credential.
    const path = op.brandPrefix && parts.brand ? op.path.replace(`/${op.brandPrefix}_`, `/${parts.brand}_`) : op.path;
    const auth = authOf(op.path);
    Object.defineProperty(typed, operationId, { value: (init?: CallInit) => call(op, path, auth, init), enumerable: true });
  }
  // The path-based methods get the same credential and filled-in fields.
  for (const method of PATH_METHODS) {
    Object.defineProperty(typed, method, {
      value: (url: string, init?: CallInit) => send(true, method, url, prepare(method, authOf(url), init)),
      enumerable: true,
    });
  }
  Object.defineProperty(typed, 'request', {
    value: (method: string, url: string, init?: CallInit) => send(true, method, url, prepare(method.toUpperCase(), authOf(url), init)),
    enumerable: true,
  });
  // A user's middleware runs on every call, whichever client sends it.
  const { use, eject } = client;
  Object.defineProperty(typed, 'use', {
    value: (...middleware: Middleware[]) => {
      use(...middleware);
      single.use(...middleware);
      for (const m of middleware) if (m) registered.add(m);
    },
  });
  Object.defineProperty(typed, 'eject', {
    value: (...middleware: Middleware[]) => {
      eject(...middleware);
      single.eject(...middleware);
      for (const m of middleware) registered.delete(m);
    },
  });
  Object.defineProperty(typed, 'paginate', {
    value: (operationId: string, init?: Record<string, unknown>) => {
      const op = operations[operationId];
      if (!op?.pagination) throw new TypeError(`${operationId} is not a paged operation`);
      const path = op.brandPrefix && parts.brand ? op.path.replace(`/${op.brandPrefix}_`, `/${parts.brand}_`) : op.path;
      const auth = authOf(op.path);
      return paginate((i) => call(op, path, auth, i), op.pagination, init, op.method, op.path);
    },
  });
  return typed;
}
