import type { ApiName, OpenApiDoc } from '@zone-api/spec/model';
import type { OperationTypes as ControlOperations } from '@zone-api/spec/sandbox-control';
import { validateSeed } from '../domain/seed-check.js';
import type { Store } from '../domain/state.js';
import type { StateData } from '../domain/types.js';
import type { FaultRegistry } from '../router/faults.js';
import type { HandlerTable } from '../router/handlers.js';
import { badRequest, HttpError } from '../shared/errors.js';
import type { CallLog } from './calls.js';

// The control API's operations (specs/sandbox-control), one handler per operationId, each typed by
// its generated operation as the account and manager APIs' handlers are: the control routes validate
// the path, query and body against the bundle before a handler runs (control.ts).

export type { ControlOperations };

/** What the control endpoints of one port act on. */
export interface ControlOptions {
  api: ApiName;
  store: Store;
  /** The bundles of both APIs: a seed given to `POST /__sandbox/accounts` is checked against them. */
  specs: Record<ApiName, OpenApiDoc>;
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

/** The control API's handler table: one handler per operationId of the bundle, or the compile fails. */
export type ControlHandlers = HandlerTable<undefined, ControlOperations>;

/** Why `operationId` cannot be armed on this API (it names no operation of it), or undefined. */
export function unknownOperation(api: string, operationIds: ReadonlySet<string>, operationId: string | undefined): string | undefined {
  return operationId !== undefined && !operationIds.has(operationId) ? `the ${api} API has no operation ${operationId}` : undefined;
}

export function controlHandlers(o: ControlOptions): ControlHandlers {
  /** The store a control request is about: `?account=<customer>` names one made by createAccount(). */
  const storeOf = (customer: string | undefined): Store => {
    if (customer === undefined) return o.store;
    const store = o.accounts.storeOf(customer);
    if (!store)
      throw new HttpError(404, `No account ${customer} in this sandbox`, {
        details: [{ field: 'query.account', reason: 'no such account' }],
      });
    return store;
  };
  return {
    getState: ({ query }) => ({ body: storeOf(query.account).toData() }),
    resetSandbox: async () => {
      await o.reset();
      return { body: { reset: true } };
    },
    getSettled: async () => {
      await o.settled();
      return { body: { settled: true } };
    },
    getCaCertificate: async () => {
      const pem = await o.caCertificate();
      if (!pem) throw new HttpError(404, 'SSL analyzing needs listening proxy ports: start without --no-proxy-ports / --no-traffic');
      return { text: pem };
    },
    listAccounts: () => ({ body: { accounts: o.accounts.list() } }),
    createAccount: async ({ body }) => {
      const seed = body?.seed;
      let a: Awaited<ReturnType<ControlOptions['accounts']['create']>>;
      try {
        if (seed !== undefined) validateSeed(seed, o.specs, 'body.seed');
        a = await o.accounts.create(seed, { manager: body?.manager === true });
      } catch (err) {
        throw badRequest('body.seed', (err as Error).message);
      }
      return {
        body: {
          customer: a.customer,
          token: a.token,
          credentials: a.credentials,
          ...(a.manager ? { managerUrl: a.manager.url, ports: a.manager.ports } : {}),
        },
      };
    },
    deleteAccount: async ({ params }) => {
      if (!(await o.accounts.remove(params.customer)))
        throw new HttpError(404, `No account ${params.customer} made by createAccount in this sandbox`);
      return { body: { removed: params.customer } };
    },
    getClock: ({ query }) => ({ body: storeOf(query.account).clock.state() }),
    changeClock: ({ query, body }) => {
      const { clock } = storeOf(query.account);
      try {
        if (body.advance_ms !== undefined) clock.advance(body.advance_ms);
        else if (body.set !== undefined) clock.set(body.set);
      } catch (err) {
        throw badRequest(body.advance_ms !== undefined ? 'body.advance_ms' : 'body.set', (err as Error).message);
      }
      return { body: clock.state() };
    },
    resetClock: ({ query }) => {
      const { clock } = storeOf(query.account);
      clock.reset();
      return { body: clock.state() };
    },
    listFaults: () => ({ body: { faults: o.faults.list() } }),
    addFault: ({ body }) => {
      const unknown = unknownOperation(o.api, o.operationIds, body.operationId);
      if (unknown) throw badRequest('body.operationId', unknown);
      return { body: { fault: o.faults.add(body) } };
    },
    deleteFaults: () => ({ body: { cleared: o.faults.clear() } }),
    listCalls: ({ query }) => ({ body: { calls: o.calls.list(query) } }),
    deleteCalls: () => ({ body: { cleared: o.calls.clear() } }),
  };
}
