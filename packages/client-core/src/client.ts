import createClient, {
  type Client,
  type MaybeOptionalInit,
  type Middleware,
  type ParseAsResponse,
  type QuerySerializer,
} from 'openapi-fetch';
import type { ErrorResponse, MediaType, Readable, ResponseObjectMap, SuccessResponse } from 'openapi-typescript-helpers';
import { textAnswer } from './answer.js';
import { redact, ZoneApiError } from './errors.js';
import { createTransport, PlainRequest, type TransportOptions } from './fetch.js';
import { type AtPointer, type Pagination, paginate } from './paginate.js';

/**
 * One operation as the spec states it, generated from the bundle into each client's operation table
 * (`scripts/gen-operations.mjs`; the extensions are documented in `specs/README.md`).
 */
export interface OperationInfo {
  readonly method: string;
  readonly path: string;
  /** `x-idempotent`: safe to repeat, so the client may retry it. */
  readonly idempotent: boolean;
  /** `x-changes-state`: a successful call changes the server's state. */
  readonly changesState: boolean;
  /** The security schemes of the operation (its own `security`, else the API's). */
  readonly credentials?: readonly string[];
  /** `x-brand-prefix`: the path segment prefix that stands for the program's brand (`pm` in `/api/pm_users`). */
  readonly brandPrefix?: string;
  readonly deprecated?: boolean;
  /** `x-pagination`: how the operation's results are paged. */
  readonly pagination?: Pagination;
  /** The media types each declared 2xx status may carry (none: no body). */
  readonly success: Readonly<Record<string, readonly string[]>>;
}

/** An operation table: operationId -> what the spec says of the operation. */
export type OperationTable = Record<string, OperationInfo>;

type Media = `${string}/${string}` & MediaType;

/**
 * What every error value of a call carries, whatever its shape: a readable one-line `message`
 * (`POST /api/proxies answered 400: port: port 24000 in use by another proxy`), so that
 * `if (error) throw new Error(error.message)` needs no narrowing. On a JSON error body it is added as
 * a non-enumerable property (the body still serializes as the server sent it); a body's own string
 * `message` is kept. Never contains a credential.
 */
export interface ErrorMessage {
  readonly message: string;
}

/**
 * The `error` of an answer that has no JSON object to give: an error status with a text body
 * (`kind: 'text'`, the text in `error`) or with no body at all (`'empty'`), or a 2xx in a media type
 * the operation does not declare (`'media-type'`, e.g. the real manager's HTML page for a path it does
 * not have). Always a truthy object, so `if (error)` tells a failure from a success. Neither `error`
 * nor `message` contains a credential; `response.headers` keep the real Content-Type.
 */
export interface ResponseError extends ErrorMessage {
  readonly kind: 'text' | 'empty' | 'media-type';
  readonly status: number;
  readonly contentType: string | null;
  /** The text, or what came instead of a declared answer; named like the account API's `Error.error`. */
  readonly error: string;
  /** Never set: declared so that `error.details` reads on every error of the account API without narrowing. */
  readonly details?: undefined;
}

// biome-ignore lint/suspicious/noExplicitAny: the shape openapi-fetch's own types constrain path items to
type AnyRecord = Record<string | number, any>;
type PathItemOf<Paths, P> = P extends keyof Paths ? (Paths[P] extends AnyRecord ? Paths[P] : never) : never;
type MethodOf<Item, M> = Lowercase<M & string> & keyof Item;
type RequiredKeys<T> = { [K in keyof T]-?: Record<never, never> extends Pick<T, K> ? never : K }[keyof T];
/**
 * The options a typed method takes: openapi-fetch's, less `parseAs` (the method parses the answer as the
 * operation declares it: text as a string, JSON as its type; the path-based `GET`/`POST`/… still take it).
 */
type MethodInit<Paths, K, Ops extends OperationTable> = K extends keyof Ops
  ? Omit<
      NonNullable<MaybeOptionalInit<PathItemOf<Paths, Ops[K]['path']>, MethodOf<PathItemOf<Paths, Ops[K]['path']>, Ops[K]['method']>>>,
      'parseAs'
    >
  : never;
/**
 * The argument list of a method: optional when nothing in it is required. Not generic over the
 * argument (openapi-fetch's methods infer `Init` from it and add `[key: string]: unknown`): a
 * parameter whose type is inferred from the literal it is given, or that has an index signature,
 * is exempt from excess-property checks, so a misspelt body field compiled. A fixed parameter type
 * lets TypeScript check the literal against the spec's closed object types, nested bodies included.
 */
type InitArgs<Init> = RequiredKeys<Init> extends never ? [init?: Init] : [init: Init];

/**
 * The result of an operation's method: openapi-fetch's `{ data, error, response }`, except that
 * `error` is never a bare string or empty: text and empty error answers become a `ResponseError`.
 */
export type CallResult<Op extends AnyRecord, Init> = (
  | { data: ParseAsResponse<Readable<SuccessResponse<ResponseObjectMap<Op>, Media>>, Init>; error?: never; response: Response }
  | {
      data?: never;
      error: (Exclude<Readable<ErrorResponse<ResponseObjectMap<Op>, Media>>, string> & ErrorMessage) | ResponseError;
      response: Response;
    }
) & { readonly [OPERATION]?: Op };

/** Carries an operation's type on its results, for `errorAt` (a type only: never set). */
declare const OPERATION: unique symbol;

type ResponsesOf<R> = R extends { readonly [OPERATION]?: infer Op } ? (Op extends { responses: infer Rs } ? Rs : never) : never;
/** The error statuses an operation declares (what `errorAt` takes). */
export type ErrorStatus<R> = Extract<Exclude<keyof ResponsesOf<R>, `2${string}` | 200 | 201 | 202 | 203 | 204 | 206>, number>;
type BodyOf<Res> = Res extends { content: infer C }
  ? { [M in keyof C]: M extends `application/${string}json` ? Readable<C[M]> & ErrorMessage : ResponseError }[keyof C]
  : ResponseError;
/** The error of one status, as the operation declares it: its JSON body, or a `ResponseError` for a text or empty answer. */
export type ErrorAtStatus<R, S> = S extends keyof ResponsesOf<R> ? BodyOf<ResponsesOf<R>[S]> : never;

/**
 * The error of a result when it answered `status`, typed by what the operation declares for that
 * status; undefined for any other answer. `errorAt(created, 400)?.errors[0]?.msg` reads the manager's
 * `{errors}` form without testing which of an operation's error shapes came.
 */
export function errorAt<R extends { error?: unknown; response: Response }, S extends ErrorStatus<R>>(
  result: R,
  status: S,
): ErrorAtStatus<R, S> | undefined {
  return result.response.status === status && result.error !== undefined ? (result.error as ErrorAtStatus<R, S>) : undefined;
}

/**
 * One typed method per operationId, e.g. `client.getZone({ params: { query: { zone } } })`. A body or
 * parameter field the spec does not name does not compile (the request types are closed).
 */
export type OperationMethods<Paths extends {}, Ops extends OperationTable> = {
  [K in keyof Ops]: (
    ...init: InitArgs<MethodInit<Paths, K, Ops>>
  ) => Promise<
    CallResult<PathItemOf<Paths, Ops[K]['path']>[MethodOf<PathItemOf<Paths, Ops[K]['path']>, Ops[K]['method']>], MethodInit<Paths, K, Ops>>
  >;
};

/** The operations whose results come in pages (`x-pagination` in the spec). */
export type PagedOperationId<Ops extends OperationTable> = {
  [K in keyof Ops]: Ops[K] extends { readonly pagination: Pagination } ? K : never;
}[keyof Ops];

// biome-ignore lint/suspicious/noExplicitAny: matches any method signature
type Fn = (...args: any[]) => any;
type DataOf<F> = F extends Fn ? (Awaited<ReturnType<F>> extends { data?: infer D } ? NonNullable<D> : never) : never;
type ItemsPointer<P> = P extends { readonly items: infer I } ? I : undefined;

/** A record of a paged operation: an element of the list its `x-pagination` points at. */
export type PageItem<Paths extends {}, Ops extends OperationTable, K extends PagedOperationId<Ops>> =
  AtPointer<DataOf<OperationMethods<Paths, Ops>[K]>, ItemsPointer<Ops[K]['pagination']>> extends readonly (infer I)[] ? I : never;

/** The first argument of an operation's method (its params and body). */
export type InitOf<Paths extends {}, Ops extends OperationTable, K extends keyof Ops> = OperationMethods<Paths, Ops>[K] extends Fn
  ? Parameters<OperationMethods<Paths, Ops>[K]>[0]
  : never;

export interface Paginator<Paths extends {}, Ops extends OperationTable> {
  /**
   * Walks every page of a paged operation and yields its records one by one:
   * `for await (const log of client.paginate('listRequestLogs', { params: { query: { zone } } }))`.
   * Starts at the query's own page (or offset), else 0; stops on a short or empty page, or at the
   * total the response reports. A page that answers an error status throws `ZoneApiError` (kind `http`).
   */
  paginate<K extends PagedOperationId<Ops>>(
    operationId: K,
    init?: InitOf<Paths, Ops, K>,
  ): AsyncGenerator<PageItem<Paths, Ops, K>, void, undefined>;
}

/**
 * The typed client: a method per operationId (`Methods`: by default the bare method types; the client
 * packages pass their generated `DocumentedMethods`, which carry each operation's docs), `paginate`,
 * plus openapi-fetch's path-based GET/POST/… and `use`.
 */
export type TypedClient<Paths extends {}, Ops extends OperationTable, Methods = OperationMethods<Paths, Ops>> = Methods &
  Paginator<Paths, Ops> &
  Client<Paths>;

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

/** The media type of a Content-Type value, without its parameters (`application/json; charset=utf-8` → `application/json`). */
const mediaOf = (contentType: string | null) => (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';

/** The longest summary of an error body a `message` quotes (a manager's 404 is a whole web page). */
const MESSAGE_MAX = 500;
const clip = (text: string) => {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > MESSAGE_MAX ? `${line.slice(0, MESSAGE_MAX)}…` : line;
};

/**
 * What a JSON error body says, in one line: the account API's `error` (with the fields at fault of its
 * `details`), the manager's `errors[].msg` (with their `field`), a `message`, else the body itself.
 */
function summary(body: Record<string, unknown>): string {
  const problems = (list: unknown, text: string, where: string) =>
    Array.isArray(list)
      ? list
          .filter((p): p is Record<string, unknown> => p !== null && typeof p === 'object')
          .map((p) => (typeof p[where] === 'string' && p[where] ? `${p[where]}: ${String(p[text])}` : String(p[text])))
      : [];
  if (typeof body.error === 'string') {
    const details = problems(body.details, 'reason', 'field');
    return details.length ? `${body.error} (${details.join('; ')})` : body.error;
  }
  const errors = problems(body.errors, 'msg', 'field');
  if (errors.length) return errors.join('; ');
  if (typeof body.message === 'string') return body.message;
  return JSON.stringify(body);
}

/**
 * Holds an answer to what the operation declares: a 2xx body in an undeclared media type becomes a
 * `ResponseError`, and so does an error answer that is text, has no body or is not a JSON object.
 * Every error gets its one-line `message`.
 */
function checked(op: OperationInfo, result: { data?: unknown; error?: unknown; response: Response }, secrets: readonly string[]) {
  const { response } = result;
  const contentType = response.headers.get('Content-Type');
  const answered = `${op.method} ${op.path} answered ${response.status}`;
  const fail = (kind: ResponseError['kind'], text: string) => {
    const error = redact(text, secrets);
    const message = kind === 'text' ? `${answered}: ${clip(error) || '(empty text)'}` : error;
    return { error: { kind, status: response.status, contentType, error, message } satisfies ResponseError, response };
  };
  if (response.ok) {
    const declared = op.success[String(response.status)];
    if (result.data === undefined) return result;
    if (!declared?.includes(mediaOf(contentType))) {
      return fail(
        'media-type',
        `${answered} with ${contentType ?? 'no Content-Type'}, which the operation does not declare${
          declared ? ` (it declares ${declared.join(', ') || 'no body'})` : ''
        }`,
      );
    }
    return result;
  }
  if (result.error === undefined || result.error === '') return fail('empty', `${answered} with no body`);
  if (typeof result.error === 'string') return fail('text', result.error);
  if (result.error === null || typeof result.error !== 'object' || Array.isArray(result.error)) {
    return fail('text', JSON.stringify(result.error));
  }
  const body = result.error as Record<string, unknown>;
  // The body was redacted in the transport, so the summary of it is too.
  if (typeof body.message !== 'string') {
    Object.defineProperty(body, 'message', { value: `${answered}: ${clip(summary(body))}`, enumerable: false, configurable: true });
  }
  return result;
}

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

  /** Sends a prepared call: real Requests for middleware (a user's, or a call's own), else PlainRequests. */
  const send = (repeat: boolean, method: string, path: string, init: CallInit | undefined) =>
    (registered.size || init?.middleware !== undefined ? (repeat ? request : requestOnce) : repeat ? plainRequest : plainRequestOnce)(
      method,
      path,
      init,
    );

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
