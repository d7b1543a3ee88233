// The typed surface of a client, worked out from the generated `paths` and operation table: what each
// method takes and returns, its errors, `errorAt`, `paginate`. Types only, but for `errorAt`.
import type { Client, MaybeOptionalInit, ParseAsResponse } from 'openapi-fetch';
import type { ErrorResponse, MediaType, Readable, ResponseObjectMap, SuccessResponse } from 'openapi-typescript-helpers';
import type { AtPointer, Pagination } from './paginate.js';

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
) & { readonly [OPERATION]?: { responses: Op['responses'] } };

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
