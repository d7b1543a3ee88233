import type { IncomingHttpHeaders } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { HttpError } from '../shared/errors.js';
import type { BodyAsSent } from './bodies.js';
import type { FaultRegistry } from './faults.js';
import type { ApiName, OpenApiDoc, OperationDef } from './spec.js';

// What an API hands the router (ApiProfile: its handlers, auth, error bodies, body parsing and limit,
// headers), what the host adds (ApiWiring), and what its handlers take and answer (Ctx, Answer,
// Handler); http.ts builds the routes from them.

/** What a handler answers. Nothing at all means the operation's first declared 2xx without a body. */
export interface Answer {
  status?: number;
  /** A JSON body. */
  body?: unknown;
  /** A text body, sent as the operation's text media type. */
  text?: string;
  headers?: Record<string, string>;
}

export interface Ctx<A> {
  op: OperationDef;
  // biome-ignore lint/suspicious/noExplicitAny: validated against the spec before the handler runs
  query: Record<string, any>;
  // biome-ignore lint/suspicious/noExplicitAny: see query
  params: Record<string, any>;
  // biome-ignore lint/suspicious/noExplicitAny: see query
  body: any;
  headers: IncomingHttpHeaders;
  ip: string;
  auth: A;
}

export type Handler<A> = (ctx: Ctx<A>) => Answer | undefined | Promise<Answer | undefined>;

/**
 * What an API says of itself, whole (account/profile.ts, manager/profile.ts): its handlers, how it
 * authenticates, how its errors and texts go out, which other paths serve an operation, how bodies are
 * read and how large they may be, the headers of its answers. The host adds only the wiring (ApiWiring).
 */
export interface ApiProfile<A> {
  name: ApiName;
  handlers: Record<string, Handler<A>>;
  /**
   * Runs before the body is read: throws an HttpError (401, 403) for a refused credential. Where bodies
   * are read as the real manager reads them (`realBodies`), it runs after the body is read, as the real
   * manager's checks do (its body parsers come before its API routes, web_server.js 166-176).
   */
  authenticate: (req: FastifyRequest, reply: FastifyReply, op: OperationDef) => A;
  /** Runs before validation, after content parameters are parsed: may fill in values (e.g. from a credential). */
  prepare?: (req: FastifyRequest, op: OperationDef, auth: A) => void;
  /** The customer a request's credential belongs to (faults matching an account, the record of calls). */
  accountOf: (auth: A | undefined) => string;
  /**
   * Turns an error into the body the operation declares (e.g. the manager's `{errors}` form). Where there
   * is none, or it answers nothing, the specs' `Error` form (`{error, details}`).
   */
  errorBody: ((op: OperationDef, err: HttpError) => unknown) | undefined;
  /** The media type of a text body whose status the operation does not declare (an injected fault). */
  textMedia: string;
  /** Headers sent with every response of the API under `/api` (e.g. the manager's `Deprecation`). */
  headers: Record<string, string>;
  /** Runs on each answer before it is sent (fastify's onSend): may add headers and replace the body (the manager's, manager/api-headers.ts). */
  onSend?: (req: FastifyRequest, reply: FastifyReply, payload: unknown) => unknown;
  /** Other paths that serve an operation too (e.g. the real manager's brand in a user path). */
  aliases: (op: OperationDef) => string[];
  /** The largest request body, in bytes. */
  bodyLimit: number;
  /**
   * Read bodies as the real local proxy manager does, unless `strict` (bodies.ts): form bodies too, other
   * media types as none, malformed JSON a 500.
   */
  realBodies: boolean;
  /**
   * Match paths as the real local proxy manager's express router does, unless `strict`: without regard to
   * case, with or without a trailing slash (express's defaults, `caseSensitive` and `strict` off; observed
   * on 1.570.247: `GET /API/VERSION` and `GET /api/proxies/` are answered as their operations).
   */
  realPaths: boolean;
}

/** What the host adds to a profile: the bundle, faults, the record of calls, saving, the control routes. */
export interface ApiWiring {
  doc: OpenApiDoc;
  faults: FaultRegistry;
  /** Whether a successful call of the operation may have changed state (then `afterChange` runs before the answer). */
  mutates: (op: OperationDef) => boolean;
  afterChange: () => Promise<void>;
  /**
   * Refuse request fields the spec's schemas do not name (`--strict`). Default: accept and ignore
   * them, and list them in `X-Sandbox-Ignored-Fields` (see lenient.ts).
   */
  strict?: boolean;
  /** Extra routes outside the spec (the control endpoints). */
  extraRoutes?: (app: FastifyInstance) => void;
  /** Whether to answer a request with this `Host` header (DNS rebinding); refused with 421 otherwise. */
  allowHost?: (host: string | undefined) => boolean;
  logger?: boolean;
  /** Told of every answered request to an operation (the record of calls). */
  onCall?: (call: AnsweredCall) => void;
}

export type ApiOptions<A> = ApiProfile<A> & ApiWiring;

/** A request to an operation, once answered. */
export interface AnsweredCall {
  operationId: string;
  account: string;
  method: string;
  path: string;
  params: Record<string, unknown>;
  body?: unknown;
  /** The body's size as sent, in bytes, when it was read from the request. */
  body_size?: number;
  /** The body's text as sent, when it was read (the record of calls keeps it rather than `body`). */
  body_text?: BodyAsSent;
  status: number;
  /** Epoch ms when it arrived (the process clock). */
  started: number;
  duration_ms: number;
  fault?: number;
}
