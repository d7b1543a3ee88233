import { Readable } from 'node:stream';
import type { ValidateFunction } from 'ajv/dist/2020.js';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest, type RouteOptions } from 'fastify';
import { HttpError } from '../shared/errors.js';
import { answerErrors, defaultStatus, textType } from './answers.js';
import type { ApiOptions, Handler } from './api-options.js';
import {
  addBodyParsers,
  bodySizeOf,
  bodyTextOf,
  bodyValidator,
  LARGE_BODY,
  leniencyOf,
  pathValidator,
  queryValidator,
  readBody,
} from './bodies.js';
import { boundRequestTimes, capConnections } from './connections.js';
import { runFault } from './faults.js';
import { jsonAnswer, PIECE, weighsMore } from './json-pieces.js';
import { requestCheckerFor } from './lenient.js';
import { type Leniency, leniencyHeaders } from './lenient-headers.js';
import { checkHandlers, type OperationDef, routesOf } from './spec.js';
import { compileCached, decimalOnly, detailsFromAjv, validatorsFor } from './validators.js';

declare module 'fastify' {
  /** Each route of an operation carries it (here; not in the package's public types): the error handler and the record of calls read it. */
  interface FastifyContextConfig {
    op?: OperationDef;
  }
}

const kAuth = Symbol('auth');
const kLeniency = Symbol('leniency');
const kFault = Symbol('fault');
type Req = FastifyRequest & { [kAuth]?: unknown; [kLeniency]?: Leniency[]; [kFault]?: number };

/** Path and query parameters of a request, as a fault or the record of calls reads them. */
const paramsOf = (req: FastifyRequest): Record<string, unknown> => ({
  ...((req.params as Record<string, unknown> | undefined) ?? {}),
  ...((req.query as Record<string, unknown> | undefined) ?? {}),
});

export function buildApi<A>(options: ApiOptions<A>): FastifyInstance {
  const { doc, name, faults } = options;
  const ops = routesOf(doc);
  checkHandlers(name, ops, Object.keys(options.handlers));
  const v = validatorsFor(doc, name);
  const checker = requestCheckerFor(doc, v.id);
  const strict = options.strict === true;

  const app = Fastify({
    logger: options.logger === true,
    bodyLimit: options.bodyLimit,
    return503OnClosing: false,
    // close() destroys every connection, idle (keep-alive) or in flight (a latency fault): it does not
    // wait for the keep-alive timeout or for answers no one may be waiting for.
    forceCloseConnections: true,
    // A path parameter of any length reaches its operation, which answers it as declared (a 400 naming
    // the parameter, a 404): fastify's own bound (100 characters) answered an undeclared 414. Node's
    // bound on the request line (16 kB) still holds.
    routerOptions: {
      maxParamLength: 16 * 1024,
      ...(options.realPaths === true && !strict ? { caseSensitive: false, ignoreTrailingSlash: true } : {}),
    },
  });

  // Heads, bodies and connections bounded (router/connections.ts): before any other handler of a connection.
  boundRequestTimes(app.server, true);
  capConnections(app.server);

  const realBodies = options.realBodies === true && !strict;
  const realPaths = options.realPaths === true && !strict;
  addBodyParsers(app, realBodies);

  // The route schemas below point into the bundle and their validators are compiled once per bundle
  // (fastify's own Ajv would strip unknown fields and coerce bodies); fastify is handed those.
  // Routes outside the spec (the control endpoints) bring small schemas of their own, compiled here.
  const compiled = new Map<unknown, ValidateFunction>();
  app.setValidatorCompiler(({ schema, httpPart }) => compiled.get(schema) ?? (httpPart === 'body' ? v.body : v.query).compile(schema));

  answerErrors(app, name, { ...options, realBodies });

  if (options.allowHost) {
    const allow = options.allowHost;
    app.addHook('onRequest', (req, reply, done) => {
      if (allow(req.headers.host)) return done();
      reply
        .code(421)
        .type('text/plain; charset=utf-8')
        .send(`This sandbox does not answer requests for host ${String(req.headers.host ?? '(none)').slice(0, 100)}`);
    });
  }

  if (Object.keys(options.headers).length) {
    const extra = options.headers;
    app.addHook('onRequest', (req, reply, done) => {
      // Under `/api` in the case the router matches (any case with realPaths, as the real manager's mount).
      if (realPaths ? /^\/api/i.test(req.url) : req.url.startsWith('/api')) reply.headers(extra);
      done();
    });
  }

  if (options.onSend) {
    const onSend = options.onSend;
    app.addHook('onSend', (req, reply, payload, done) => done(null, onSend(req, reply, payload)));
  }

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
      use('querystring', s, queryValidator(op, decimalOnly(query, compileCached(v, 'query', `${op.operationId} query`, s)), strict));
    }
    if (path.length) {
      const s = objectSchema(path);
      use('params', s, pathValidator(op, decimalOnly(path, compileCached(v, 'query', `${op.operationId} path`, s)), strict));
    }
    if (op.body) {
      const s = { $ref: `${v.id}${op.body.schemaPointer}` };
      use('body', s, bodyValidator(op, checker, strict));
    }
    // A form's text values read as the schema's types before the body's check (its verdict is that check's).
    const formPointer = op.body?.formPointer;
    const coerceForm =
      formPointer && !strict ? compileCached(v, 'form', `${op.operationId} form`, { $ref: `${v.id}${formPointer}` }) : undefined;

    const authenticate = options.authenticate;
    const prepare = options.prepare;
    const mutates = options.mutates(op);
    /** The body's schema, where its unknown fields are ignored: lenient, and checked (not `x-observed-unchecked`). */
    const setAside = !strict && op.body && !op.unchecked.includes('body') ? op.body.schemaPointer : undefined;
    const status2xx = defaultStatus(op);
    /**
     * The credential check of both hooks (onRequest; preValidation where bodies are read as the real
     * manager reads them, before its access checks): the caller's identity kept on the request, or the
     * refusal handed to `done`. False when refused.
     */
    const authenticated = (req: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void): boolean => {
      try {
        (req as Req)[kAuth] = authenticate(req, reply, op);
        return true;
      } catch (err) {
        done(err as Error);
        return false;
      }
    };

    const route: Omit<RouteOptions, 'url'> = {
      method: op.method,
      schema,
      config: { op },
      onRequest(req, reply, done) {
        const proceed = () => {
          if (!realBodies && !authenticated(req, reply, done)) return;
          done();
        };
        if (faults.active) {
          const fault = faults.take(op.operationId, { params: paramsOf(req), headers: req.headers });
          if (fault) {
            (req as Req)[kFault] = fault.id;
            return runFault(op, fault, req, reply, proceed, options.textMedia);
          }
        }
        proceed();
      },
      preValidation(req, reply, done) {
        // A body the real manager cannot parse is refused (500) before its credential is checked.
        if (realBodies && !authenticated(req, reply, done)) return;
        const refused = readBody(req, op, realBodies, strict);
        if (refused) return done(refused);
        if (coerceForm && bodyTextOf(req)?.media === 'form') coerceForm(req.body);
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
        // Faults that match the body or the account: now that the body is read and the credential checked.
        if (faults.active && faults.late) {
          const account = options.accountOf((req as Req)[kAuth] as A);
          const fault = faults.take(op.operationId, { params: paramsOf(req), headers: req.headers, body: req.body, account }, true);
          if (fault) {
            (req as Req)[kFault] = fault.id;
            return runFault(op, fault, req, reply, () => done(), options.textMedia);
          }
        }
        // A large body's fields that no schema of it names are set aside in pieces before the (synchronous)
        // check, which then sees a small body (lenient.ts setAsideInPieces): Ajv over 60,000 unknown fields
        // held the event loop in one stretch.
        if (setAside && (bodyTextOf(req)?.text.length ?? 0) >= LARGE_BODY) {
          checker.setAsideInPieces(setAside, req.body).then(
            (kept) => {
              if (kept) req.body = kept;
              done();
            },
            (err: Error) => done(err),
          );
          return;
        }
        done();
      },
      preHandler(req, reply, done) {
        // Reported on every answer, a refusal by the handler included: the caller learns what was not read.
        const found = (req as Req)[kLeniency] ?? [];
        const body = leniencyOf(req.body);
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
        if (answer?.body === undefined) return reply.send();
        if (!weighsMore(answer.body, PIECE)) return reply.send(answer.body);
        // A large answer (a log of whole bodies, a port of 60,000 fields) is serialised piece by piece, the
        // event loop let go of between pieces, and sent as the pieces with their length; a very large one
        // is counted first and made again as it is sent (json-pieces.ts jsonAnswer).
        const { chunks, bytes } = await jsonAnswer(answer.body);
        reply.header('content-type', 'application/json; charset=utf-8').header('content-length', bytes);
        return reply.send(Readable.from(chunks, { objectMode: false }));
      },
    };
    for (const url of [op.url, ...options.aliases(op)]) app.route({ ...route, url });
  }

  if (options.onCall) {
    const onCall = options.onCall;
    app.addHook('onResponse', (req, reply, done) => {
      const op = req.routeOptions.config?.op;
      if (op) {
        const r = req as Req;
        const duration = reply.elapsedTime;
        onCall({
          operationId: op.operationId,
          account: options.accountOf(r[kAuth] as A),
          method: req.method,
          path: req.url.split('?')[0] as string,
          params: paramsOf(req),
          ...(req.body !== undefined && req.body !== null
            ? { body: req.body, body_size: bodySizeOf(req), ...(bodyTextOf(req) !== undefined ? { body_text: bodyTextOf(req) } : {}) }
            : {}),
          status: reply.statusCode,
          started: Date.now() - duration,
          duration_ms: Math.round(duration * 10) / 10,
          ...(r[kFault] !== undefined ? { fault: r[kFault] } : {}),
        });
      }
      done();
    });
  }
  options.extraRoutes?.(app);
  return app;
}
