import { zoneCredential } from '@zone-api/spec/model';
import type { FastifyRequest } from 'fastify';
import type { Store } from '../domain/state.js';
import type { ApiProfile } from '../router/api-options.js';
import type { OpenApiDoc, OperationDef } from '../router/spec.js';
import { type AccountAuth, authenticateAccount, fillFromCredential } from './auth.js';
import { accountHandlers } from './index.js';

/** The provider's documentation puts every account path under this prefix; the provider's current host serves them without it (observed). */
export const ACCOUNT_PREFIX = '/api';

/**
 * The account API's other router path for an operation, derived from its path in the bundle by rule,
 * never from a list of operations: the same path without the documentation's `/api` prefix
 * (`/api/zone/get_active_zones` → `/zone/get_active_zones`), as the provider's current host serves it
 * and its own SDK and tools call it. The alias is the same route: same handler, same validation.
 */
export function accountAliases(op: OperationDef): string[] {
  return op.url.startsWith(`${ACCOUNT_PREFIX}/`) ? [op.url.slice(ACCOUNT_PREFIX.length)] : [];
}

/**
 * The largest account request body: the sandbox's own bound (the provider publishes none, and its
 * largest documented bodies, lists of IPs, stay far below it).
 */
export const ACCOUNT_BODY_LIMIT = 1024 * 1024;

export interface AccountProfileOptions {
  /** The first account's store (created accounts run over their own: see tenancy/accounts.ts). */
  store: Store;
  /** The account bundle: its security scheme `zoneCredential` says how the Zone credential header reads. */
  doc: OpenApiDoc;
  strict: boolean;
  /** The store of the account a request's credential names. */
  storeFor: (req: FastifyRequest) => Store;
}

/** The account API, whole: what the router needs to serve it. */
export function accountProfile(o: AccountProfileOptions): ApiProfile<AccountAuth> {
  // The Zone credential header as the account spec describes it (its name and value patterns).
  const credentialRules = { credential: zoneCredential(o.doc), strict: o.strict };
  return {
    name: 'account',
    handlers: accountHandlers(o.store),
    authenticate: (req, reply, op) => authenticateAccount(credentialRules, o.storeFor(req), req, reply, op),
    prepare: fillFromCredential,
    accountOf: (auth) => auth?.customer ?? o.store.account.customer,
    // The specs' `Error` form (`{error, details}`), as the router writes it.
    errorBody: undefined,
    textMedia: 'text/plain',
    headers: {},
    // The provider's current host serves the account paths without `/api`: both are served.
    aliases: accountAliases,
    bodyLimit: ACCOUNT_BODY_LIMIT,
    // JSON bodies only, and paths as the spec writes them.
    realBodies: false,
    realPaths: false,
  };
}
