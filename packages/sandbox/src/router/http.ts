import type { IncomingHttpHeaders } from 'node:http';
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest, type RouteOptions } from 'fastify';
import { type ErrorDetail, HttpError } from './errors.js';
import type { Fault, FaultRegistry } from './faults.js';
import { type Leniency, leniencyHeaders, requestCheckerFor } from './lenient.js';
import { type ApiName, checkHandlers, type OpenApiDoc, type OperationDef, operationsOf } from './spec.js';

// ajv-formats is CommonJS: under NodeNext its default import is the module object in types, the function at run time.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as typeof addFormatsModule.default;

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

export interface ApiOptions<A> {
  name: ApiName;
  doc: OpenApiDoc;
  handlers: Record<string, Handler<A>>;
  faults: FaultRegistry;
  /** Runs before the body is read: throws an HttpError (401, 403) for a refused credential. */
  authenticate?: (req: FastifyRequest, reply: FastifyReply, op: OperationDef) => A;
  /** Runs before validation, after content parameters are parsed: may fill in values (e.g. from a credential). */
  prepare?: (req: FastifyRequest, op: OperationDef, auth: A) => void;
  /** Turns an error into the body the operation declares (e.g. the manager's `{errors}` form). */
  errorBody?: (op: OperationDef, err: HttpError) => unknown;
  /** The media type of a text body whose status the operation does not declare (an injected fault). */
  textMedia?: string;
  /** Headers sent with every response of the API (e.g. the manager's `Deprecation`). */
  headers?: Record<string, string>;
  /** Whether a successful call of the operation may have changed state (then `afterChange` runs before the answer). */
  mutates: (op: OperationDef) => boolean;
  afterChange: () => Promise<void>;
  /** Other paths that serve an operation too (e.g. the real manager's brand in a user path). */
  aliases?: (op: OperationDef) => string[];
  /**
   * Refuse request fields the spec's schemas do not name (`--strict`). Default: accept and ignore
   * them, and list them in `X-Sandbox-Ignored-Fields` (see lenient.ts).
   */
  strict?: boolean;
  /** Extra routes outside the spec (the control endpoints). */
  extraRoutes?: (app: FastifyInstance) => void;
  logger?: boolean;
}

const kAuth = Symbol('auth');
const kUnsupportedMedia = Symbol('unsupportedMedia');
const kLeniency = Symbol('leniency');
type Req = FastifyRequest & { [kAuth]?: unknown; [kUnsupportedMedia]?: string; [kLeniency]?: Leniency[] };

// What the body validator accepted leniently, keyed by the body it checked (a validator sees no request).
const bodyLeniency = new WeakMap<object, Leniency>();

interface Validators {
  id: string;
  body: Ajv2020;
  query: Ajv2020;
  cache: Map<string, ValidateFunction>;
}

// Compiled validators depend only on the bundle: several sandboxes in one process (the tests) share them.
const validatorCache = new WeakMap<OpenApiDoc, Validators>();

function validatorsFor(doc: OpenApiDoc, name: string): Validators {
  let v = validatorCache.get(doc);
  if (!v) {
    const id = `https://zone-api.local/${name}.openapi.json`;
    const common = { strict: false, allErrors: true, validateFormats: true } as const;
    // Bodies are JSON: no coercion. Query and path values are strings on the wire: coerced to the schema's types.
    const body = new Ajv2020({ ...common, coerceTypes: false, useDefaults: false });
    const query = new Ajv2020({ ...common, coerceTypes: true, useDefaults: true });
    for (const ajv of [body, query]) {
      addFormats(ajv);
      ajv.addSchema({ ...doc, $id: id });
    }
    v = { id, body, query, cache: new Map() };
    validatorCache.set(doc, v);
  }
  return v;
}

function compileCached(v: Validators, kind: 'body' | 'query', key: string, schema: object): ValidateFunction {
  const k = `${kind} ${key}`;
  let fn = v.cache.get(k);
  if (!fn) {
    fn = v[kind].compile(schema);
    v.cache.set(k, fn);
  }
  return fn;
}

const PART_PREFIX: Record<string, string> = { body: 'body', querystring: 'query', params: 'path', headers: 'header' };

function fieldPath(prefix: string, instancePath: string, extra?: string): string {
  let out = prefix;
  const segments = instancePath ? instancePath.split('/').slice(1) : [];
  if (extra !== undefined) segments.push(extra);
  for (const raw of segments) {
    const s = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    out += /^\d+$/.test(s) ? `[${s}]` : `.${s}`;
  }
  return out;
}

/** Ajv errors as `{field, reason}`, naming the property at fault rather than its parent. */
export function detailsFromAjv(errors: ErrorObject[] | null | undefined, prefix: string): ErrorDetail[] {
  const out: ErrorDetail[] = [];
  const seen = new Set<string>();
  for (const e of errors ?? []) {
    const p = e.params as Record<string, string>;
    let detail: ErrorDetail;
    if (e.keyword === 'required' && p.missingProperty === undefined) detail = { field: prefix, reason: e.message ?? 'is required' };
    else if (e.keyword === 'required') detail = { field: fieldPath(prefix, e.instancePath, p.missingProperty), reason: 'is required' };
    else if (e.keyword === 'additionalProperties')
      detail = { field: fieldPath(prefix, e.instancePath, p.additionalProperty), reason: 'is not a known field' };
    else if (e.keyword === 'unevaluatedProperties')
      detail = { field: fieldPath(prefix, e.instancePath, p.unevaluatedProperty), reason: 'is not a known field' };
    else if (e.keyword === 'dependentRequired')
      detail = { field: fieldPath(prefix, e.instancePath, p.missingProperty), reason: `is required together with ${p.property}` };
    else {
      let reason = e.message ?? e.keyword;
      if (e.keyword === 'enum')
        reason += `: ${(e.params as { allowedValues: unknown[] }).allowedValues.map((x) => JSON.stringify(x)).join(', ')}`;
      detail = { field: fieldPath(prefix, e.instancePath), reason };
    }
    const key = `${detail.field}\n${detail.reason}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(detail);
    if (out.length >= 50) break;
  }
  return out;
}

/** An error as one line of text: the message, then each field at fault with the reason. */
function errorText(err: HttpError): string {
  if (!err.details?.length) return err.message;
  return `${err.message}: ${err.details.map((d) => `${d.field} ${d.reason}`).join('; ')}`;
}

/** The status an answer without an explicit one gets: the operation's first declared 2xx. */
function defaultStatus(op: OperationDef): number {
  for (const s of op.responses.keys()) if (/^2\d\d$/.test(s)) return Number(s);
  return 200;
}

function textType(op: OperationDef, status: number, fallback = 'text/plain'): string {
  const media = op.responses.get(String(status))?.media ?? [];
  return `${media.find((m) => m.startsWith('text/')) ?? fallback}; charset=utf-8`;
}

/** Whether the operation declares only a text body for this status (then errors go out as text). */
function declaresOnlyText(op: OperationDef, status: number): boolean {
  const media = op.responses.get(String(status))?.media;
  return !!media && media.length > 0 && media.every((m) => m.startsWith('text/'));
}

export function buildApi<A>(options: ApiOptions<A>): FastifyInstance {
  const { doc, name, faults } = options;
  const ops = operationsOf(doc);
  checkHandlers(name, ops, Object.keys(options.handlers));
  const v = validatorsFor(doc, name);
  const checker = requestCheckerFor(doc, v.id);
  const strict = options.strict === true;

  const app = Fastify({
    logger: options.logger === true,
    bodyLimit: 1024 * 1024,
    return503OnClosing: false,
  });

  // Empty bodies parse to "no body" (the schema then says whether one was required); bad JSON is a 400.
  // Other media types are read and refused later, only by operations that take a JSON body.
  const jsonParser = app.getDefaultJsonParser('error', 'error');
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    if ((body as string).length === 0) return done(null, undefined);
    jsonParser(req, body as string, done);
  });
  app.addContentTypeParser('*', { parseAs: 'string' }, (req, body, done) => {
    if ((body as string).length > 0) (req as Req)[kUnsupportedMedia] = String(req.headers['content-type'] ?? '');
    done(null, undefined);
  });

  // The route schemas below point into the bundle and their validators are compiled once per bundle
  // (fastify's own Ajv would strip unknown fields and coerce bodies); fastify is handed those.
  // Routes outside the spec (the control endpoints) bring small schemas of their own, compiled here.
  const compiled = new Map<unknown, ValidateFunction>();
  app.setValidatorCompiler(({ schema, httpPart }) => compiled.get(schema) ?? (httpPart === 'body' ? v.body : v.query).compile(schema));

  const sendError = (op: OperationDef | undefined, reply: FastifyReply, err: HttpError) => {
    if (err.headers) reply.headers(err.headers);
    reply.code(err.status);
    if (err.body !== undefined) return reply.send(err.body);
    // The operation declares this status with no body (the manager's bare 400s): status alone.
    if (op?.responses.get(String(err.status))?.media.length === 0) return reply.send();
    if (err.text || (op && declaresOnlyText(op, err.status)))
      return reply
        .type(op ? textType(op, err.status, options.textMedia) : `${options.textMedia ?? 'text/plain'}; charset=utf-8`)
        .send(errorText(err));
    const body = op && options.errorBody ? options.errorBody(op, err) : undefined;
    return reply.send(body ?? (err.details?.length ? { error: err.message, details: err.details } : { error: err.message }));
  };

  app.setErrorHandler((error, request, reply) => {
    const op = (request.routeOptions.config as { op?: OperationDef } | undefined)?.op;
    const e = error as Error & { validation?: ErrorObject[]; validationContext?: string; code?: string; statusCode?: number };
    if (e instanceof HttpError) return sendError(op, reply, e);
    if (e.validation) {
      const prefix = PART_PREFIX[e.validationContext ?? 'body'] ?? 'body';
      return sendError(op, reply, new HttpError(400, 'Invalid request', { details: detailsFromAjv(e.validation, prefix) }));
    }
    if (typeof e.code === 'string' && e.code.startsWith('FST_ERR_CTP_')) {
      const reason =
        e.code === 'FST_ERR_CTP_INVALID_JSON_BODY'
          ? 'is not valid JSON'
          : e.code === 'FST_ERR_CTP_BODY_TOO_LARGE'
            ? 'is too large'
            : (e.message ?? 'cannot be read');
      return sendError(op, reply, new HttpError(400, 'Invalid request body', { details: [{ field: 'body', reason }] }));
    }
    if (typeof e.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500) {
      return sendError(op, reply, new HttpError(400, e.message || 'Bad request'));
    }
    console.error(`[zone-api sandbox] ${name} ${request.method} ${request.url}:`, e);
    return sendError(op, reply, new HttpError(500, 'Internal sandbox error'));
  });

  app.setNotFoundHandler((request, reply) => {
    reply.code(404).send({ error: `No operation at ${request.method} ${request.url.split('?')[0]}` });
  });

  if (options.headers) {
    const extra = options.headers;
    app.addHook('onRequest', (req, reply, done) => {
      if (req.url.startsWith('/api')) reply.headers(extra);
      done();
    });
  }

  const runFault = (op: OperationDef, fault: Fault, req: FastifyRequest, reply: FastifyReply, next: () => void) => {
    const act = () => {
      if (fault.drop) {
        reply.hijack();
        req.raw.socket.destroy();
        return;
      }
      if (fault.status !== undefined) {
        const status = fault.status;
        if (status === 429 || status === 503) reply.header('Retry-After', '1');
        reply.code(status);
        if (typeof fault.body === 'string') return reply.type(textType(op, status, options.textMedia)).send(fault.body);
        if (fault.body !== undefined) return reply.send(fault.body);
        if (declaresOnlyText(op, status)) return reply.type(textType(op, status, options.textMedia)).send(`Injected fault ${fault.id}`);
        if (status === 204 || status === 304) return reply.send();
        return reply.send({ error: `Injected fault ${fault.id}` });
      }
      next();
    };
    if (fault.latency_ms) setTimeout(act, fault.latency_ms);
    else act();
  };

  for (const op of ops) {
    const handler = options.handlers[op.operationId] as Handler<A>;
    const query = op.params.filter((p) => p.in === 'query');
    const path = op.params.filter((p) => p.in === 'path');
    const contentParams = query.filter((p) => p.content === 'application/json');

    const objectSchema = (params: typeof query) => ({
      type: 'object',
      properties: Object.fromEntries(params.map((p) => [p.name, p.content ? {} : { $ref: `${v.id}${p.schemaPointer}` }])),
      required: params.filter((p) => p.required).map((p) => p.name),
    });
    const schema: Record<string, unknown> = {};
    const use = (part: string, jsonSchema: object, fn: ValidateFunction) => {
      schema[part] = jsonSchema;
      compiled.set(jsonSchema, fn);
    };
    if (query.length) {
      const s = objectSchema(query);
      use('querystring', s, compileCached(v, 'query', `${op.operationId} query`, s));
    }
    if (path.length) {
      const s = objectSchema(path);
      use('params', s, compileCached(v, 'query', `${op.operationId} path`, s));
    }
    if (op.body) {
      const s = { $ref: `${v.id}${op.body.schemaPointer}` };
      const pointer = op.body.schemaPointer;
      const required = op.body.required;
      // fastify hands an absent body over as null.
      const missing = [{ keyword: 'required', instancePath: '', schemaPath: '#', params: {}, message: 'is required: send a JSON body' }];
      const wrapped = ((data: unknown) => {
        if (data == null) {
          wrapped.errors = required ? missing : null;
          return !required;
        }
        const result = checker.check(pointer, data, 'body', strict);
        if (!result.ok) {
          wrapped.errors = result.errors;
          return false;
        }
        wrapped.errors = null;
        if ((result.ignored.length || result.normalized.length) && typeof data === 'object') bodyLeniency.set(data, result);
        return true;
      }) as ValidateFunction;
      use('body', s, wrapped);
    }

    const authenticate = options.authenticate;
    const prepare = options.prepare;
    const mutates = options.mutates(op);
    const status2xx = defaultStatus(op);

    const route: Omit<RouteOptions, 'url'> = {
      method: op.method,
      schema,
      config: { op },
      onRequest(req, reply, done) {
        const proceed = () => {
          if (authenticate) {
            try {
              (req as Req)[kAuth] = authenticate(req, reply, op);
            } catch (err) {
              return done(err as Error);
            }
          }
          done();
        };
        if (faults.active) {
          const fault = faults.take(op.operationId);
          if (fault) return runFault(op, fault, req, reply, proceed);
        }
        proceed();
      },
      preValidation(req, _reply, done) {
        if (op.body && (req as Req)[kUnsupportedMedia] !== undefined) {
          return done(
            new HttpError(400, 'Invalid request body', {
              details: [{ field: 'header.Content-Type', reason: `must be application/json, not ${(req as Req)[kUnsupportedMedia]}` }],
            }),
          );
        }
        const q = req.query as Record<string, unknown>;
        for (const p of contentParams) {
          const raw = q[p.name];
          if (raw === undefined) continue;
          let parsed: unknown;
          try {
            if (typeof raw !== 'string') throw new Error('not a single value');
            parsed = JSON.parse(raw);
          } catch {
            return done(new HttpError(400, 'Invalid request', { details: [{ field: `query.${p.name}`, reason: 'is not valid JSON' }] }));
          }
          const result = checker.check(p.schemaPointer, parsed, `query.${p.name}`, strict);
          if (!result.ok) return done(new HttpError(400, 'Invalid request', { details: detailsFromAjv(result.errors, `query.${p.name}`) }));
          if (result.ignored.length || result.normalized.length) {
            const found = (req as Req)[kLeniency] ?? [];
            found.push(result);
            (req as Req)[kLeniency] = found;
          }
          q[p.name] = parsed;
        }
        if (prepare) {
          try {
            prepare(req, op, (req as Req)[kAuth] as A);
          } catch (err) {
            return done(err as Error);
          }
        }
        done();
      },
      preHandler(req, reply, done) {
        // Reported on every answer, a refusal by the handler included: the caller learns what was not read.
        const found = (req as Req)[kLeniency] ?? [];
        const body = req.body && typeof req.body === 'object' ? bodyLeniency.get(req.body) : undefined;
        if (body) found.push(body);
        if (found.length) reply.headers(leniencyHeaders(found));
        done();
      },
      async handler(req, reply) {
        const answer = await handler({
          op,
          query: req.query as Record<string, unknown>,
          params: req.params as Record<string, unknown>,
          body: req.body,
          headers: req.headers,
          ip: req.ip,
          auth: (req as Req)[kAuth] as A,
        });
        if (mutates) await options.afterChange();
        const status = answer?.status ?? status2xx;
        reply.code(status);
        if (answer?.headers) reply.headers(answer.headers);
        if (answer?.text !== undefined) return reply.type(textType(op, status, options.textMedia)).send(answer.text);
        if (answer?.body !== undefined) return reply.send(answer.body);
        return reply.send();
      },
    };
    for (const url of [op.url, ...(options.aliases?.(op) ?? [])]) app.route({ ...route, url });
  }

  options.extraRoutes?.(app);
  return app;
}

/** One API's handler table from its modules' tables; an operationId handled twice is a programming error. */
export function combineHandlers<A>(...tables: Record<string, Handler<A>>[]): Record<string, Handler<A>> {
  const out: Record<string, Handler<A>> = {};
  for (const table of tables) {
    for (const [id, handler] of Object.entries(table)) {
      if (Object.hasOwn(out, id)) throw new Error(`two handler modules handle ${id}`);
      out[id] = handler;
    }
  }
  return out;
}
