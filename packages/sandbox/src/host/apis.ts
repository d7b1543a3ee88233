import type { FastifyInstance } from 'fastify';
import type { AccountAuth } from '../account/auth.js';
import { accountProfile } from '../account/profile.js';
import type { CallLog } from '../control/calls.js';
import { withOverrides } from '../control/overrides.js';
import type { Store } from '../domain/state.js';
import { portFieldTypes } from '../manager/port-config.js';
import { managerProfile } from '../manager/profile.js';
import type { ApiWiring, Handler } from '../router/api-options.js';
import type { FaultRegistry } from '../router/faults.js';
import { buildApi } from '../router/http.js';
import type { AccountOperationId, ApiName, OpenApiDoc } from '../router/spec.js';
import type { Accounts } from '../tenancy/accounts.js';
import type { PortTraffic, Traffic } from '../traffic/index.js';
import type { SandboxOptions } from './sandbox-types.js';

// The two APIs as the sandbox runs them: each API's own profile (account/profile.ts,
// manager/profile.ts) with the host's wiring (the bundle, faults, the record of calls, saving, the
// control endpoints, the test's overrides). No fact of either API is set here.

/** The sandbox's parts the APIs are wired to. */
export interface ApiHost {
  options: SandboxOptions;
  specs: Record<ApiName, OpenApiDoc>;
  /** The first account's store. */
  store: Store;
  accounts: Accounts;
  faults: Record<ApiName, FaultRegistry>;
  calls: CallLog;
  traffic: Traffic;
  /** The ports the account and manager APIs listen on, once they listen. */
  listening: readonly number[];
  /** Saves a change to the data file. */
  persist: () => Promise<void>;
  /** The control endpoints on an API's port. */
  control: (api: ApiName) => (app: FastifyInstance) => void;
  allowHost: (host: string | undefined) => boolean;
}

/**
 * A manager API over a store: the first account's (with the control endpoints and the data file), or
 * a created account's own, whose proxy ports are its own (`ports`); `reserved` lists the ports its
 * created ports must not take.
 */
export type ManagerApi = (own: Store, ports: PortTraffic | undefined, reserved: () => number[], first: boolean) => FastifyInstance;

/** The host's part of an API; the control endpoints and the data file are the first account's. */
function wiring(h: ApiHost, api: ApiName, first: boolean): ApiWiring {
  return {
    doc: h.specs[api],
    faults: h.faults[api],
    onCall: (c) => {
      const { started: _started, ...rest } = c;
      h.calls.record({ api, ...rest, time: new Date(h.store.clock.now() - c.duration_ms).toISOString() });
    },
    mutates: (op) => op.changesState,
    afterChange: first ? h.persist : async () => {},
    ...(first ? { extraRoutes: h.control(api) } : {}),
    allowHost: h.allowHost,
    strict: h.options.strict,
    logger: h.options.logger,
  };
}

/** An API's handlers with the test's overrides and own handlers over them (control/overrides.ts). */
const merged = <A>(h: ApiHost, api: ApiName, base: Record<string, Handler<A>>) =>
  withOverrides<A>(api, h.specs[api], base, h.options.overrides?.[api] ?? {}, h.options.handlers?.[api] ?? {});

export function accountApi(h: ApiHost): FastifyInstance {
  const profile = accountProfile({
    store: h.store,
    doc: h.specs.account,
    strict: h.options.strict === true,
    storeFor: (req) => h.accounts.storeFor(req),
  });
  // A created account's requests run its own handlers over its own Store (overrides stay shared).
  const handlers = h.accounts.dispatching(
    merged(h, 'account', profile.handlers),
    (id) => !!h.options.overrides?.account?.[id as AccountOperationId],
  );
  return buildApi<AccountAuth>({ ...profile, handlers, ...wiring(h, 'account', true) });
}

export function managerApiOf(h: ApiHost): ManagerApi {
  const { options, traffic } = h;
  return (own, ports, reserved, first) => {
    const profile = managerProfile(own, {
      reservedPorts: () => (traffic.network ? [...reserved(), traffic.network.port] : reserved()),
      ports,
      portDefaults: () => (traffic.upstream ? { proxy: traffic.upstream.host, proxy_port: traffic.upstream.port } : {}),
      strict: options.strict,
      portFieldTypes: portFieldTypes(h.specs.manager),
      argv: options.argv ?? `--port ${first ? (options.managerPort ?? 0) : 0}`,
      doc: h.specs.manager,
      // Its own API port (`www` of GET /api/defaults): the first account's, or the last reserved (an own manager's, once it listens).
      wwwPort: () => (first ? h.listening[1] : reserved().at(-1)) ?? 0,
      ...(first ? { onShutdown: options.onShutdown } : {}),
    });
    return buildApi<undefined>({ ...profile, handlers: merged(h, 'manager', profile.handlers), ...wiring(h, 'manager', first) });
  };
}
