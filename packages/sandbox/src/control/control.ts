import { randomBytes, timingSafeEqual } from 'node:crypto';
import { isIP } from 'node:net';
import { hostname } from 'node:os';
import { loadBundle, type OpenApiDoc } from '@zone-api/spec/model';
import type { ValidateFunction } from 'ajv/dist/2020.js';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { defaultStatus } from '../router/answers.js';
import type { Handler } from '../router/api-options.js';
import type { Fault, FaultRegistry, FaultSpec } from '../router/faults.js';
import { routerTable } from '../router/handlers.js';
import { checkHandlers, type OperationDef, routesOf } from '../router/spec.js';
import { bundleId, compileCached, detailsFromAjv, validatorsFor } from '../router/validators.js';
import { HttpError } from '../shared/errors.js';
import { CONTROL_TOKEN_HEADER } from './client.js';
import { type ControlOptions, controlHandlers, unknownOperation } from './handlers.js';

export type { ControlOptions } from './handlers.js';

// The sandbox's own endpoints under /__sandbox/ (the control API, specs/sandbox-control) and the guards of both ports:
// a sandbox is a test tool, and what it holds (every token and password) must not leak to a web page
// the developer visits or to the network it listens on.

/** Header carrying the control token (required for /__sandbox/* when listening beyond loopback). */
export { CONTROL_TOKEN_HEADER } from './client.js';

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

export const isLoopbackHost = (host: string) => host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);

/** A random control token (printed once in the banner; never logged elsewhere). */
export const newControlToken = () => randomBytes(18).toString('base64url');

/**
 * Which `Host` headers a port answers (DNS rebinding: a web page whose name resolves to 127.0.0.1
 * sends its own name). Loopback names always; the bound address and this machine's name when bound
 * to one; any literal IP when bound to every interface (a rebinding attack needs a name).
 */
/** What a Host header may be: a name or an IP (IPv6 in brackets), a port after it, nothing else. */
const HOST_HEADER = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._~-]+)(:\d{1,5})?$/;

export function hostAllowed(boundHost: string, header: string | undefined): boolean {
  // `localhost:80@evil.com` once passed as localhost: a Host with userinfo, a path or other trailer is none.
  if (!header || !HOST_HEADER.test(header)) return false;
  const name = header.startsWith('[') ? header.slice(0, header.indexOf(']') + 1) : (header.split(':')[0] as string);
  const bare = name.replace(/^\[|\]$/g, '').toLowerCase();
  if (LOOPBACK_HOSTS.has(name.toLowerCase()) || isLoopbackHost(bare)) return true;
  if (isLoopbackHost(boundHost)) return false;
  if (bare === boundHost.toLowerCase() || bare === hostname().toLowerCase()) return true;
  return (boundHost === '0.0.0.0' || boundHost === '::') && isIP(bare) !== 0;
}

const CONTROL = 'sandbox-control';
/** The control API's bundle, read once. Its validators (the router's) are compiled when first used. */
let bundle: OpenApiDoc | undefined;
const controlBundle = () => (bundle ??= loadBundle(CONTROL));
const validators = () => validatorsFor(controlBundle(), CONTROL);
/** A schema of the control API's bundle, by its JSON pointer. */
const ref = (pointer: string) => ({ $ref: `${bundleId(CONTROL)}${pointer}` });

/** The fault control of one API, in process: what `/__sandbox/faults` does, typed. */
export interface FaultControl<Id extends string> {
  /** Arms a fault (as `POST /__sandbox/faults`) and returns it with its id; a bad spec throws a TypeError naming the field. */
  arm(spec: Omit<FaultSpec, 'operationId'> & { operationId?: Id }): Fault;
  /** The armed faults (as `GET /__sandbox/faults`). */
  list(): Fault[];
  /** Disarms every fault of this API; returns how many there were (as `DELETE /__sandbox/faults`). */
  clear(): number;
}

export function faultControl<Id extends string>(api: string, registry: FaultRegistry, operationIds: ReadonlySet<string>): FaultControl<Id> {
  // The schema `POST /__sandbox/faults` checks its body against.
  const check = lazy(() => compileCached(validators(), 'body', 'FaultSpec', ref('#/components/schemas/FaultSpec')));
  return {
    arm(spec) {
      if (!check(spec)) {
        const d = detailsFromAjv(check.errors, 'spec')[0];
        throw new TypeError(
          `faults.${api}.arm: ${d?.field ?? 'spec'} ${d?.reason ?? 'is not a fault'} (a fault needs status, latency_ms or drop, or pass: true, or else a sequence of steps that each have one)`,
        );
      }
      const unknown = unknownOperation(api, operationIds, spec.operationId);
      if (unknown) throw new TypeError(`faults.${api}.arm: spec.operationId: ${unknown}`);
      return { ...registry.add(spec) };
    },
    list: () => registry.list(),
    clear: () => registry.clear(),
  };
}

function sameToken(given: unknown, token: string): boolean {
  if (typeof given !== 'string') return false;
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * A validator compiled when it first checks something (a sandbox starts without compiling the control
 * API's schemas; most runs never call most routes); `optional`: an absent value passes (a body the
 * operation may be sent without).
 */
function lazy(make: () => ValidateFunction, optional = false): ValidateFunction {
  let compiled: ValidateFunction | undefined;
  const check = ((data: unknown) => {
    if (optional && data === undefined) {
      check.errors = null;
      return true;
    }
    compiled ??= make();
    const ok = compiled(data);
    check.errors = compiled.errors;
    return ok;
  }) as ValidateFunction;
  check.errors = null;
  return check;
}

/** The validators of one route's parts, against the bundle, as fastify's route `schema` carries them. */
function routeSchemas(op: OperationDef): { schema: Record<string, object>; compiled: Map<object, ValidateFunction> } {
  const schema: Record<string, object> = {};
  const compiled = new Map<object, ValidateFunction>();
  const use = (part: string, jsonSchema: object, fn: ValidateFunction) => {
    schema[part] = jsonSchema;
    compiled.set(jsonSchema, fn);
  };
  for (const [part, where] of [
    ['querystring', 'query'],
    ['params', 'path'],
  ] as const) {
    const params = op.params.filter((p) => p.in === where);
    if (!params.length) continue;
    const s = {
      type: 'object',
      properties: Object.fromEntries(params.map((p) => [p.name, ref(p.schemaPointer)])),
      required: params.filter((p) => p.required).map((p) => p.name),
    };
    use(
      part,
      s,
      lazy(() => compileCached(validators(), 'query', `${op.operationId} ${where}`, s)),
    );
  }
  if (op.body) {
    const s = ref(op.body.schemaPointer);
    use(
      'body',
      s,
      lazy(() => compileCached(validators(), 'body', op.operationId, s), !op.body.required),
    );
  }
  return { schema, compiled };
}

/**
 * The control endpoints of one port: every operation of the control API's bundle, its request checked
 * against the bundle, answered by its handler (handlers.ts). With a token, every request needs it. A
 * POST must be JSON: a cross-site page can send a "simple" POST (`text/plain`, no preflight) but not a JSON one.
 */
export function controlRoutes(o: ControlOptions) {
  const ops = routesOf(controlBundle());
  const table = controlHandlers(o);
  checkHandlers('sandbox-control', ops, Object.keys(table));
  const handlers = routerTable<undefined>(table);
  return (app: FastifyInstance) => {
    const guard = async (req: FastifyRequest, _reply: FastifyReply) => {
      if (o.token && !sameToken(req.headers[CONTROL_TOKEN_HEADER.toLowerCase()], o.token)) {
        throw new HttpError(401, `The control endpoints need the control token (header X-Sandbox-Control-Token, printed at start)`);
      }
      if (req.method === 'POST' && !/^application\/json\b/i.test(req.headers['content-type'] ?? '')) {
        throw new HttpError(415, 'Control requests that change the sandbox must be application/json', {
          details: [{ field: 'header.Content-Type', reason: 'must be application/json' }],
        });
      }
    };
    for (const op of ops) {
      const handler = handlers[op.operationId] as Handler<undefined>;
      const { schema, compiled } = routeSchemas(op);
      const status = defaultStatus(op);
      const media = op.responses.get(String(status))?.media[0];
      app.route<{ Querystring: Record<string, unknown>; Params: Record<string, unknown> }>({
        method: op.method,
        url: op.url,
        onRequest: guard,
        schema,
        validatorCompiler: ({ schema: s }) => compiled.get(s) ?? missing(op),
        handler: async (req, reply) => {
          const answer = await handler({
            op,
            query: req.query,
            params: req.params,
            body: req.body,
            headers: req.headers,
            ip: req.ip,
            auth: undefined,
          });
          reply.code(answer?.status ?? status);
          if (answer?.headers) reply.headers(answer.headers);
          if (answer?.text !== undefined) return reply.type(media ?? 'text/plain').send(answer.text);
          return reply.send(answer?.body);
        },
      });
    }
  };
}

function missing(op: OperationDef): never {
  throw new Error(`control route ${op.operationId}: a schema without its validator`);
}
