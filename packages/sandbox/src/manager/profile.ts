import type { Store } from '../domain/state.js';
import type { ApiProfile } from '../router/api-options.js';
import type { OperationDef } from '../router/spec.js';
import { REAL_MANAGER_BRAND } from '../shared/brand.js';
import { managerAnswer } from './api-headers.js';
import { authenticateManager, managerErrorBody } from './auth.js';
import type { ManagerOptions } from './context.js';
import { managerHandlers } from './index.js';
import { API_BODY_LIMIT } from './manager-options.js';

/**
 * Sent with every manager `/api` response, as the real manager 1.570.247 sends it: the last second of
 * 1 November 2023 in its own date format, not an HTTP-date (lib/mixins/web_api.js 172-173
 * `sunset('11-01-2023')`, lib/middleware.js 96-99).
 */
export const MANAGER_SUNSET = '01-Nov-23 23:59:59';

/** The headers of every manager `/api` response (lib/middleware.js 96-99). */
export const MANAGER_HEADERS: Readonly<Record<string, string>> = { Deprecation: 'true', Sunset: MANAGER_SUNSET };

/** The real manager sends every text body as text/html (observed), declared or not. */
export const MANAGER_TEXT_MEDIA = 'text/html';

/**
 * The real manager's user paths carry its brand (`/api/lpm_users`) where the spec writes `pm`
 * (`x-brand-prefix`): both are served.
 */
export function managerAliases(op: OperationDef): string[] {
  return op.brandPrefix ? [op.url.replace(`/${op.brandPrefix}_`, `/${REAL_MANAGER_BRAND}_`)] : [];
}

/** The manager API over a store (the first account's, or a created account's own), whole: what the router needs to serve it. */
export function managerProfile(own: Store, options: ManagerOptions): ApiProfile<undefined> {
  return {
    name: 'manager',
    handlers: managerHandlers(own, options),
    authenticate: (req, reply, op) => authenticateManager(own, req, reply, op),
    accountOf: () => own.manager.settings.customer,
    errorBody: managerErrorBody,
    textMedia: MANAGER_TEXT_MEDIA,
    headers: { ...MANAGER_HEADERS },
    // Its web server's own headers, ETag and gzip (api-headers.ts).
    onSend: managerAnswer,
    aliases: managerAliases,
    // Its `api_body_limit` (manager-options.ts).
    bodyLimit: API_BODY_LIMIT.bytes,
    // Bodies as the real manager's express server reads them (form bodies too; router/bodies.ts), unless strict.
    realBodies: true,
    // Paths matched as its express router matches them (any case, a trailing slash or none), unless strict.
    realPaths: true,
  };
}
