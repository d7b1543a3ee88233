import type { Store } from '../domain/state.js';
import type { ZoneState } from '../domain/types.js';
import type { Ctx } from '../router/api-options.js';
import type { AccountTable } from '../router/handlers.js';
import { badRequest, HttpError } from '../shared/errors.js';
import type { AccountAuth } from './auth.js';

// What the account API's handler modules share: the store and the rules that name the Zone a call is
// about (the credential's, or the `zone` parameter). Each module of this folder is one tag of the
// account spec and a table of handlers by operationId.

export type AccountCtx = Ctx<AccountAuth>;
/** A module's handlers, typed by operationId: `return { … } satisfies AccountHandlers`. */
export type AccountHandlers = Partial<AccountTable<AccountAuth>>;
/** Every operation's handler, typed by its operationId. */
export type AccountHandlerTable = AccountTable<AccountAuth>;
type C = AccountCtx;

/** Query parameters on GET, body fields otherwise (the provider's documentation's convention for `customer` and `zone`). */
export function input(ctx: C): { where: 'query' | 'body'; values: Record<string, unknown> } {
  return ctx.op.method === 'GET'
    ? { where: 'query', values: ctx.query }
    : { where: 'body', values: (ctx.body ?? {}) as Record<string, unknown> };
}

export type AccountContext = ReturnType<typeof accountContext>;

export function accountContext(store: Store) {
  const notFound = (name: string) => new HttpError(404, `Zone not found: ${name}`);

  /** The Zone the call is about: the credential's with `X-Service-Auth`, else the `zone` parameter. */
  function zoneOf(ctx: C): ZoneState {
    const { where, values } = input(ctx);
    const given = values.zone as string | undefined;
    if (ctx.auth.scheme === 'zone') {
      if (given !== undefined && given !== ctx.auth.zone) {
        throw badRequest(`${where}.zone`, `the X-Service-Auth credential is for Zone ${ctx.auth.zone}`);
      }
      return (
        store.zones.get(ctx.auth.zone as string) ??
        (() => {
          throw notFound(ctx.auth.zone as string);
        })()
      );
    }
    if (given === undefined) throw badRequest(`${where}.zone`, 'is required with token or basic authentication');
    const zone = store.zones.get(given);
    if (!zone) throw notFound(given);
    return zone;
  }

  /**
   * `zoneOf`, with the status the provider's clients show for an unknown Zone on this operation (observed:
   * 400 "not found" on delete, 422 "zone does not exist" on passwords) instead of the sandbox's 404.
   */
  function zoneOr(ctx: C, status: 400 | 422): ZoneState {
    try {
      return zoneOf(ctx);
    } catch (e) {
      if (!(e instanceof HttpError) || e.status !== 404) throw e;
      const name = String(input(ctx).values.zone ?? ctx.auth.zone);
      throw new HttpError(status, status === 422 ? `zone does not exist: ${name}` : `Zone not found: ${name}`);
    }
  }

  /**
   * `zones` of the whitelist, recent-IPs and domain reads: a Zone name, names separated by commas, or `*`;
   * absent, every Zone (the provider's reference). With a Zone credential, its own Zone only.
   */
  function zonesOf(ctx: C): ZoneState[] {
    const sel = ctx.query.zones as string | undefined;
    const names = sel === undefined ? ['*'] : [...new Set(sel.split(',').map((n) => n.trim()))].filter(Boolean);
    if (ctx.auth.scheme === 'zone') {
      if (names.some((n) => n !== '*' && n !== ctx.auth.zone))
        throw badRequest('query.zones', `the X-Service-Auth credential is for Zone ${ctx.auth.zone}`);
      return [store.zones.get(ctx.auth.zone as string) as ZoneState];
    }
    if (names.includes('*')) return [...store.zones.values()];
    return names.map((n) => {
      const zone = store.zones.get(n);
      if (!zone) throw notFound(n);
      return zone;
    });
  }

  return { store, notFound, zoneOf, zoneOr, zonesOf };
}
