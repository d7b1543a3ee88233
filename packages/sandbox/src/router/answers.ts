import type { ErrorObject } from 'ajv/dist/2020.js';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { clip, ERROR_LIMITS, HttpError, joinProblems } from '../shared/errors.js';
import { UnreadableBody } from './bodies.js';
import type { ApiName, OperationDef } from './spec.js';
import { detailsFromAjv, PART_PREFIX } from './validators.js';

// How an answer goes out as the operation declares it: its default status, text or JSON errors.

/** Requests answered by the body parsers' failure (the manager's app-level handler), before any route's own headers. */
const beforeRoutes = new WeakSet<FastifyRequest>();

/** Whether this request's answer came from the body parsers, before the API's routes (and so without their headers). */
export const answeredBeforeRoutes = (req: FastifyRequest): boolean => beforeRoutes.has(req);

/** An error as one line of text within the spec's bound: the message, then each field at fault with the reason. */
export function errorText(err: HttpError): string {
  if (!err.details?.length) return err.message;
  return joinProblems(
    err.message,
    err.details.map((d) => `${d.field} ${d.reason}`),
  );
}

/** The status an answer without an explicit one gets: the operation's first declared 2xx. */
export function defaultStatus(op: OperationDef): number {
  for (const s of op.responses.keys()) if (/^2\d\d$/.test(s)) return Number(s);
  return 200;
}

export function textType(op: OperationDef, status: number, fallback = 'text/plain'): string {
  const media = op.responses.get(String(status))?.media ?? [];
  return `${media.find((m) => m.startsWith('text/')) ?? fallback}; charset=utf-8`;
}

/** Whether the operation declares only a text body for this status (then errors go out as text). */
export function declaresOnlyText(op: OperationDef, status: number): boolean {
  const media = op.responses.get(String(status))?.media;
  return !!media && media.length > 0 && media.every((m) => m.startsWith('text/'));
}

/**
 * The API's answers to errors: an HttpError as the operation declares its status (JSON, text or none),
 * a failed validation or an unreadable body as a 400 naming the field, a path no operation serves as a 404.
 */
export function answerErrors(
  app: FastifyInstance,
  name: ApiName,
  options: {
    textMedia?: string | undefined;
    errorBody?: ((op: OperationDef, err: HttpError) => unknown) | undefined;
    /** Bodies read as the real manager reads them (bodies.ts): one over the limit is its 500 too. */
    realBodies?: boolean;
    /** The headers every answer of the API carries: not an unreadable body's (bodies.ts). */
    headers?: Record<string, string> | undefined;
  },
): void {
  const sendError = (op: OperationDef | undefined, reply: FastifyReply, err: HttpError) => {
    if (err instanceof UnreadableBody) {
      beforeRoutes.add(reply.request);
      for (const name of Object.keys(options.headers ?? {})) reply.removeHeader(name);
    }
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
    const op = request.routeOptions.config?.op;
    const e = error as Error & { validation?: ErrorObject[]; validationContext?: string; code?: string; statusCode?: number };
    if (e instanceof HttpError) return sendError(op, reply, e);
    if (e.validation) {
      const prefix = PART_PREFIX[e.validationContext ?? 'body'] ?? 'body';
      return sendError(op, reply, new HttpError(400, 'Invalid request', { details: detailsFromAjv(e.validation, prefix) }));
    }
    if (options.realBodies && e.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return sendError(op, reply, new UnreadableBody());
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
    reply.code(404).send({ error: clip(`No operation at ${request.method} ${request.url.split('?')[0]}`, ERROR_LIMITS.message) });
  });
}
