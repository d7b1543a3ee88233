import { randomBytes, timingSafeEqual } from 'node:crypto';
import { isIP } from 'node:net';
import { hostname } from 'node:os';
import { Ajv, type ValidateFunction } from 'ajv';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Store } from '../domain/state.js';
import type { StateData } from '../domain/types.js';
import type { Fault, FaultRegistry, FaultSpec } from '../router/faults.js';
import { badRequest, HttpError } from '../shared/errors.js';
import type { CallFilter, CallLog } from './calls.js';

// The sandbox's own endpoints under /__sandbox/ (state, reset, faults) and the guards of both ports:
// a sandbox is a test tool, and what it holds (every token and password) must not leak to a web page
// the developer visits or to the network it listens on.

/** Header carrying the control token (required for /__sandbox/* when listening beyond loopback). */
export const CONTROL_TOKEN_HEADER = 'x-sandbox-control-token';

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

const actionProperties = {
  count: { type: 'integer', minimum: 1, maximum: 1_000_000 },
  status: { type: 'integer', minimum: 100, maximum: 599 },
  body: {},
  latency_ms: { type: 'integer', minimum: 0, maximum: 120_000 },
  drop: { type: 'boolean' },
  pass: { type: 'boolean', const: true },
};
const anAction = [{ required: ['status'] }, { required: ['latency_ms'] }, { required: ['drop'] }, { required: ['pass'] }];

const faultSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    operationId: { type: 'string', minLength: 1 },
    ...actionProperties,
    when: {
      type: 'object',
      additionalProperties: false,
      properties: {
        params: { type: 'object' },
        body: {},
        headers: { type: 'object', additionalProperties: { type: 'string' } },
        account: { type: 'string', minLength: 1 },
      },
    },
    sequence: {
      type: 'array',
      minItems: 1,
      maxItems: 100,
      items: { type: 'object', additionalProperties: false, properties: actionProperties, anyOf: anAction },
    },
  },
  // One action, or a sequence of them (not both).
  oneOf: [
    { anyOf: anAction, not: { required: ['sequence'] } },
    { required: ['sequence'], not: { anyOf: anAction } },
  ],
};

const accountSchema = {
  anyOf: [
    { type: 'null' },
    { type: 'object', additionalProperties: false, properties: { seed: { type: 'object' }, manager: { type: 'boolean' } } },
  ],
};

const callsQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    api: { enum: ['account', 'manager'] },
    operationId: { type: 'string' },
    account: { type: 'string' },
    method: { type: 'string' },
    status: { type: 'integer' },
    after: { type: 'integer', minimum: 0 },
  },
};

const clockSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    advance_ms: { type: 'integer', minimum: 0, maximum: 100 * 365 * 86_400_000 },
    set: { type: 'string', format: 'date-time' },
  },
  oneOf: [{ required: ['advance_ms'] }, { required: ['set'] }],
};

/** Moves the clock as a control request asks; a refusal is a 400 naming the field. */
function moveClock(store: Store, body: { advance_ms?: number; set?: string }) {
  try {
    if (body.advance_ms !== undefined) store.clock.advance(body.advance_ms);
    else store.clock.set(body.set as string);
  } catch (err) {
    throw badRequest(body.advance_ms !== undefined ? 'body.advance_ms' : 'body.set', (err as Error).message);
  }
  return store.clock.state();
}

/** The fault control of one API, in process: what `/__sandbox/faults` does, typed. */
export interface FaultControl<Id extends string> {
  /** Arms a fault (as `POST /__sandbox/faults`) and returns it with its id; a bad spec throws a TypeError naming the field. */
  arm(spec: Omit<FaultSpec, 'operationId'> & { operationId?: Id }): Fault;
  /** The armed faults (as `GET /__sandbox/faults`). */
  list(): Fault[];
  /** Disarms every fault of this API; returns how many there were (as `DELETE /__sandbox/faults`). */
  clear(): number;
}

let checkFault: ValidateFunction | undefined;

/** Why `operationId` cannot be armed on this API (it names no operation of it), or undefined. */
function unknownOperation(api: string, operationIds: ReadonlySet<string>, operationId: string | undefined): string | undefined {
  return operationId !== undefined && !operationIds.has(operationId) ? `the ${api} API has no operation ${operationId}` : undefined;
}

export function faultControl<Id extends string>(api: string, registry: FaultRegistry, operationIds: ReadonlySet<string>): FaultControl<Id> {
  checkFault ??= new Ajv({ allErrors: true }).compile(faultSchema);
  const check = checkFault;
  return {
    arm(spec) {
      if (!check(spec)) {
        const e = check.errors?.[0];
        const field = e?.instancePath ? `spec${e.instancePath.replaceAll('/', '.')}` : 'spec';
        throw new TypeError(
          `faults.${api}.arm: ${field} ${e?.message ?? 'is not a fault'} (a fault needs status, latency_ms or drop, or pass: true, or else a sequence of steps that each have one)`,
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

export interface ControlOptions {
  api: 'account' | 'manager';
  store: Store;
  /** Back to the seed: the state, the listening ports, the data file. */
  reset: () => Promise<void>;
  /** The CA certificate of SSL analyzing, when ports listen. */
  caCertificate: () => Promise<string | undefined>;
  faults: FaultRegistry;
  operationIds: ReadonlySet<string>;
  /** The calls received (both APIs). */
  calls: CallLog;
  /** The sandbox's other customers (createAccount()). */
  accounts: {
    create(
      seed?: StateData,
      options?: { manager?: boolean },
    ): Promise<{ customer: string; token: string; credentials: unknown; manager?: { url: string; ports: unknown } }>;
    remove(customer: string): Promise<boolean>;
    list(): string[];
    storeOf(customer: string): Store | undefined;
  };
  /** Resolves once every request and tunnel so far is billed and logged (sandbox.settled()). */
  settled: () => Promise<void>;
  /** Required in `X-Sandbox-Control-Token` when set (the sandbox listens beyond loopback). */
  token?: string;
}

function sameToken(given: unknown, token: string): boolean {
  if (typeof given !== 'string') return false;
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * The control endpoints of one port. With a token, every request needs it. A POST must be JSON: a
 * cross-site page can send a "simple" POST (`text/plain`, no preflight) but not a JSON one.
 */
export function controlRoutes(o: ControlOptions) {
  return (app: FastifyInstance) => {
    const guard = async (req: FastifyRequest, _reply: FastifyReply) => {
      if (o.token && !sameToken(req.headers[CONTROL_TOKEN_HEADER], o.token)) {
        throw new HttpError(401, `The control endpoints need the control token (header X-Sandbox-Control-Token, printed at start)`);
      }
      if (req.method === 'POST' && !/^application\/json\b/i.test(req.headers['content-type'] ?? '')) {
        throw new HttpError(415, 'Control requests that change the sandbox must be application/json', {
          details: [{ field: 'header.Content-Type', reason: 'must be application/json' }],
        });
      }
    };
    /** The store a control request is about: `?account=<customer>` names one made by createAccount(). */
    const storeOf = (req: FastifyRequest): Store => {
      const customer = (req.query as { account?: unknown }).account;
      if (customer === undefined) return o.store;
      const store = typeof customer === 'string' ? o.accounts.storeOf(customer) : undefined;
      if (!store)
        throw new HttpError(404, `No account ${String(customer)} in this sandbox`, {
          details: [{ field: 'query.account', reason: 'no such account' }],
        });
      return store;
    };
    app.get('/__sandbox/state', { onRequest: guard }, async (req) => storeOf(req).toData());
    app.get('/__sandbox/accounts', { onRequest: guard }, async () => ({ accounts: o.accounts.list() }));
    app.post('/__sandbox/accounts', { onRequest: guard, schema: { body: accountSchema } }, async (req) => {
      const body = req.body as { seed?: StateData; manager?: boolean } | undefined;
      let a: Awaited<ReturnType<ControlOptions['accounts']['create']>>;
      try {
        a = await o.accounts.create(body?.seed, { manager: body?.manager === true });
      } catch (err) {
        throw badRequest('body.seed', (err as Error).message);
      }
      return {
        customer: a.customer,
        token: a.token,
        credentials: a.credentials,
        ...(a.manager ? { managerUrl: a.manager.url, ports: a.manager.ports } : {}),
      };
    });
    app.get('/__sandbox/settled', { onRequest: guard }, async () => {
      await o.settled();
      return { settled: true };
    });
    app.delete('/__sandbox/accounts/:customer', { onRequest: guard }, async (req) => {
      const { customer } = req.params as { customer: string };
      if (!(await o.accounts.remove(customer))) throw new HttpError(404, `No account ${customer} made by createAccount in this sandbox`);
      return { removed: customer };
    });
    app.post('/__sandbox/reset', { onRequest: guard }, async () => {
      await o.reset();
      return { reset: true };
    });
    app.get('/__sandbox/ca', { onRequest: guard }, async (_req, reply) => {
      const pem = await o.caCertificate();
      if (!pem) throw new HttpError(404, 'SSL analyzing needs listening proxy ports: start without --no-proxy-ports / --no-traffic');
      return reply.type('application/x-pem-file').send(pem);
    });
    app.get('/__sandbox/clock', { onRequest: guard }, async (req) => storeOf(req).clock.state());
    app.post('/__sandbox/clock', { onRequest: guard, schema: { body: clockSchema } }, async (req) =>
      moveClock(storeOf(req), req.body as { advance_ms?: number; set?: string }),
    );
    app.delete('/__sandbox/clock', { onRequest: guard }, async (req) => {
      const store = storeOf(req);
      store.clock.reset();
      return store.clock.state();
    });
    app.get('/__sandbox/faults', { onRequest: guard }, async () => ({ faults: o.faults.list() }));
    app.post('/__sandbox/faults', { onRequest: guard, schema: { body: faultSchema } }, async (req) => {
      const spec = req.body as FaultSpec;
      const unknown = unknownOperation(o.api, o.operationIds, spec.operationId);
      if (unknown) throw badRequest('body.operationId', unknown);
      return { fault: o.faults.add(spec) };
    });
    app.delete('/__sandbox/faults', { onRequest: guard }, async () => ({ cleared: o.faults.clear() }));
    app.get('/__sandbox/calls', { onRequest: guard, schema: { querystring: callsQuery } }, async (req) => ({
      calls: o.calls.list(req.query as CallFilter),
    }));
    app.delete('/__sandbox/calls', { onRequest: guard }, async () => ({ cleared: o.calls.clear() }));
  };
}
