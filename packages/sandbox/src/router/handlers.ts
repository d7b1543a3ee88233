import type {
  OperationId as AccountOperationId,
  OperationTypes as AccountOperations,
  operations as accountOperationTable,
} from '@zone-api/spec/account';
import type {
  OperationId as ManagerOperationId,
  OperationTypes as ManagerOperations,
  operations as managerOperationTable,
} from '@zone-api/spec/manager';
import type { Answer, Ctx, Handler } from './api-options.js';

// Handlers typed by operationId: a table's keys are the generated operationId unions, and each
// handler's `params`, `query` and `body` are the generated types of its operation (what the router
// has validated against the spec before the handler runs). A handler for an operation the spec does
// not have, or a module that leaves one out, fails the compile; the router's start-up check
// (`checkHandlers`) still guards tables built at run time.

type Parameters<Op, Where extends string> = Op extends { parameters: infer P }
  ? Where extends keyof P
    ? NonNullable<P[Where]>
    : never
  : never;
/** A part the operation does not have: nothing to read there. */
type OrNothing<T> = [T] extends [never] ? Record<string, never> : T;

/** The validated query of an operation. */
export type QueryOf<Op> = OrNothing<Parameters<Op, 'query'>>;
/** The validated path parameters of an operation. */
export type PathOf<Op> = OrNothing<Parameters<Op, 'path'>>;
type JsonOf<B> = [B] extends [never] ? undefined : B extends { content: { 'application/json': infer J } } ? J : undefined;
/** The validated JSON body of an operation: `undefined` when it takes none, or may be sent without one. */
export type BodyOf<Op> = Op extends { requestBody: infer B }
  ? JsonOf<B>
  : Op extends { requestBody?: infer B }
    ? JsonOf<NonNullable<B>> | undefined
    : undefined;

/** The keys of every member of a union (`keyof` of a union gives only the keys they share). */
type KeysOf<T> = T extends unknown ? keyof T : never;
/** The parts of a request (`body`, `path`) an operation's table row says the real program reads unchecked. */
type UncheckedOf<Row> = Row extends { readonly unchecked: readonly (infer P)[] } ? P : never;
/**
 * A body the real program reads without checking it (`x-observed-unchecked: [body]`): the router hands it
 * on as sent (router/bodies.ts), any JSON or none (`null`), checked only under `--strict`. Its fields are
 * the documented ones, each of any type: the handler reads them as the real program does.
 */
export type BodyAsSent<B> = { readonly [K in KeysOf<NonNullable<B>>]?: unknown } | null | undefined;
/** Path parameters the real program looks up unchecked (`x-observed-unchecked: [path]`): the text as sent, or the checked value under `--strict`. */
export type PathAsSent<P> = { readonly [K in keyof P]: P[K] | string };
/** A query the real program reads unchecked (`x-observed-unchecked: [query]`): each parameter's text as sent (a list when repeated), or the checked value under `--strict`. */
export type QueryAsSent<Q> = { readonly [K in keyof NonNullable<Q>]?: NonNullable<Q>[K] | string | string[] };

/**
 * What a handler of one operation sees: its generated types, or for a part its table row marks
 * `unchecked`, that part as sent (BodyAsSent, PathAsSent, QueryAsSent).
 */
export interface OperationCtx<A, Op, Row = unknown> extends Omit<Ctx<A>, 'query' | 'params' | 'body'> {
  query: 'query' extends UncheckedOf<Row> ? QueryAsSent<QueryOf<Op>> : QueryOf<Op>;
  params: 'path' extends UncheckedOf<Row> ? PathAsSent<PathOf<Op>> : PathOf<Op>;
  body: 'body' extends UncheckedOf<Row> ? BodyAsSent<BodyOf<Op>> : BodyOf<Op>;
}

export type OperationHandler<A, Op, Row = unknown> = (ctx: OperationCtx<A, Op, Row>) => Answer | undefined | Promise<Answer | undefined>;

/** A complete handler table: one typed handler per operationId of `Ops`, each part typed as its row in `Rows` says the router hands it on. */
export type HandlerTable<A, Ops, Rows = Record<never, never>> = {
  [K in keyof Ops & string]: OperationHandler<A, Ops[K], K extends keyof Rows ? Rows[K] : unknown>;
};

export type AccountTable<A> = HandlerTable<A, AccountOperations, typeof accountOperationTable>;
export type ManagerTable<A> = HandlerTable<A, ManagerOperations, typeof managerOperationTable>;
export type { AccountOperationId, AccountOperations, ManagerOperationId, ManagerOperations };

type Merged<T extends readonly object[]> = T extends readonly [infer H, ...infer R extends readonly object[]] ? H & Merged<R> : unknown;

/**
 * One API's table from its modules' tables, typed as all of them together (so that a table left
 * incomplete fails the compile where it is assigned); an operationId handled twice is a programming
 * error, refused when the table is built.
 */
export function combineHandlers<T extends readonly object[]>(...tables: T): Merged<T> {
  const out: Record<string, unknown> = {};
  for (const table of tables) {
    for (const [id, handler] of Object.entries(table)) {
      if (Object.hasOwn(out, id)) throw new Error(`two handler modules handle ${id}`);
      out[id] = handler;
    }
  }
  return out as Merged<T>;
}

/**
 * A typed table as the router holds it: by operationId, each handler taking the router's `Ctx`. The
 * one place where the typed contexts meet the router's: the router has validated the path, query and
 * body of a call against its operation's schemas before it calls the handler (router/http.ts).
 */
export const routerTable = <A>(table: object): Record<string, Handler<A>> => table as Record<string, Handler<A>>;
