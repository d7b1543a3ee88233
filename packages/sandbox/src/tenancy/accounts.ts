import { randomBytes } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { AccountAuth } from '../account/auth.js';
import { accountHandlers } from '../account/index.js';
import { isSeedBuilder } from '../control/seed-builder.js';
import { defaultSeed, SEED } from '../domain/seed.js';
import { validateSeed } from '../domain/seed-check.js';
import { Store } from '../domain/state.js';
import type { StateData } from '../domain/types.js';
import type { Handler } from '../router/api-options.js';
import type { ApiName, OpenApiDoc } from '../router/spec.js';

// More customers on one sandbox (sandbox.createAccount()): each its own state (Zones, usage, logs),
// clock and credentials, made in milliseconds, so that each test of a suite has an account of its own
// on a sandbox started once. A request goes to the account its credential belongs to; the handlers
// are the same code over that account's Store.

/**
 * Accounts a sandbox makes beside its first, and of those, how many run a manager of their own: each
 * account holds about 0.25 MB, each own manager about 1 MB and three listeners' descriptors (measured:
 * 2,000 accounts +494 MB; 300 own managers +279 MB and 926 fds, before these bounds).
 */
export const ACCOUNTS_LIMIT = 500;
export const OWN_MANAGERS_LIMIT = 32;

/** One account of the sandbox beside its first. */
export interface AccountEntry {
  customer: string;
  store: Store;
  handlers: Record<string, Handler<AccountAuth>>;
  /** Back to the account's seed (with the same credentials). */
  reset(): void;
}

const hex = (bytes: number) => randomBytes(bytes).toString('hex');

export class Accounts {
  private readonly entries = new Map<string, AccountEntry>();
  /**
   * Each created account's bearer tokens and basic credentials (`user:password`), so that a request finds
   * its account in one look-up however many there are. An account's secrets stay the same across its
   * resets; the first account's are read from its store.
   */
  private readonly byToken = new Map<string, AccountEntry>();
  private readonly byBasic = new Map<string, AccountEntry>();
  /** The built-in seed, built once: each account copies it (its Store copies what it loads). */
  private builtIn: StateData | undefined;

  constructor(
    private readonly primary: () => Store,
    private readonly specs: Record<ApiName, OpenApiDoc>,
  ) {}

  get(customer: string): AccountEntry | undefined {
    return this.entries.get(customer);
  }

  list(): AccountEntry[] {
    return [...this.entries.values()];
  }

  /** The store a customer's requests use: the first account's, or a created one's. */
  storeOf(customer: string): Store | undefined {
    return customer === this.primary().account.customer ? this.primary() : this.entries.get(customer)?.store;
  }

  /**
   * The store a request's credential belongs to (`X-Service-Auth` names its customer; a token or a
   * basic credential is looked up in the index of created accounts); the first account's when none holds it, which then
   * refuses the credential as unknown.
   */
  storeFor(req: FastifyRequest): Store {
    if (this.entries.size === 0) return this.primary();
    const zone = req.headers['x-service-auth'];
    if (typeof zone === 'string') {
      const customer = /^service-customer-([^-]+)-/.exec(zone)?.[1];
      return (customer && this.storeOf(customer)) || this.primary();
    }
    const header = req.headers.authorization;
    if (typeof header !== 'string') return this.primary();
    const space = header.indexOf(' ');
    const scheme = header.slice(0, space).toLowerCase();
    const value = header.slice(space + 1).trim();
    if (scheme === 'bearer') {
      if (this.primary().tokens.has(value)) return this.primary();
      return this.byToken.get(value)?.store ?? this.primary();
    }
    if (scheme === 'basic') {
      const pair = Buffer.from(value, 'base64').toString('utf8');
      if (this.primary().basic.has(pair)) return this.primary();
      return this.byBasic.get(pair)?.store ?? this.primary();
    }
    return this.primary();
  }

  /**
   * A new account from `seed` (the built-in one by default): a customer id of its own, and new secrets
   * where the seed holds the built-in fixtures' (tokens, Zone passwords, the basic credential), so that
   * no credential of one account opens another. A seed of your own keeps its customer and secrets, which
   * must not be another account's.
   */
  create(seed?: StateData | { build(): StateData }): AccountEntry {
    if (this.entries.size >= ACCOUNTS_LIMIT)
      throw new Error(
        `createAccount: the sandbox holds ${ACCOUNTS_LIMIT} accounts beside its first, as many as it makes; remove one (account.remove()) or start another sandbox`,
      );
    let template: StateData;
    if (seed === undefined) {
      // The built-in seed without the manager's HAR log and general log: a created account has no manager of its own.
      this.builtIn ??= { ...defaultSeed(), manager: { ...defaultSeed().manager, har: [], general_log: [] } };
      template = this.builtIn;
    } else template = isSeedBuilder(seed) ? seed.build() : structuredClone(seed);
    let customer = template.account.customer;
    if (customer === SEED.customer || this.storeOf(customer)) {
      if (seed !== undefined && customer !== SEED.customer) throw new Error(`createAccount: the sandbox already has customer ${customer}`);
      do customer = `hl_${hex(4)}`;
      while (this.storeOf(customer));
    }
    // New secrets where the template holds the built-in fixtures', the same ones again on a reset.
    const secrets = new Map<string, string>([
      [SEED.token, `sandbox-token-${hex(12)}`],
      [SEED.limitedToken, `sandbox-token-${hex(12)}`],
      [SEED.basic.username, `${customer}@example.com`],
      [SEED.basic.password, `sandbox-basic-${hex(8)}`],
      ...Object.values(SEED.zones).map((p): [string, string] => [p, hex(6)]),
    ]);
    const fresh = (data: StateData): StateData => {
      const a = data.account;
      a.customer = customer;
      data.manager.settings.customer = customer;
      const swap = (v: string) => secrets.get(v) ?? v;
      for (const t of a.tokens) t.token = swap(t.token);
      for (const z of a.zones) z.passwords = z.passwords.map(swap);
      for (const b of a.basic) Object.assign(b, { username: swap(b.username), password: swap(b.password) });
      if (data.manager.settings.password !== undefined) data.manager.settings.password = swap(data.manager.settings.password);
      return data;
    };
    const data = fresh(seed === undefined ? structuredClone(template) : template);
    for (const t of data.account.tokens) {
      if (this.primary().tokens.has(t.token) || this.byToken.has(t.token))
        throw new Error(`createAccount: a token of the seed (${t.token.slice(0, 4)}…) belongs to another account of the sandbox`);
    }
    // A basic credential too (the pair a request sends): the index would hand it to the newer account.
    for (const b of data.account.basic) {
      const pair = `${b.username}:${b.password}`;
      if (this.primary().basic.has(pair) || this.byBasic.has(pair))
        throw new Error(`createAccount: a basic credential of the seed (user ${b.username}) belongs to another account of the sandbox`);
    }
    // The built-in seed was checked at start; a seed of your own is checked here, every reference with its path.
    if (seed !== undefined) validateSeed(data, this.specs, `createAccount seed (${customer})`);
    const pristine = seed === undefined ? undefined : structuredClone(data);
    const store = new Store(data, true);
    const entry: AccountEntry = {
      customer,
      store,
      handlers: accountHandlers(store),
      reset: () => store.load(pristine ? structuredClone(pristine) : fresh(structuredClone(template)), undefined, true),
    };
    this.entries.set(customer, entry);
    for (const t of store.tokens.keys()) this.byToken.set(t, entry);
    for (const b of store.basic.keys()) this.byBasic.set(b, entry);
    return entry;
  }

  /**
   * The account API's handlers for every account: a created account's requests run its own table over
   * its own Store; the operations `shared` names (a test's overrides) answer every account alike.
   */
  dispatching(table: Record<string, Handler<AccountAuth>>, shared: (id: string) => boolean): Record<string, Handler<AccountAuth>> {
    return Object.fromEntries(
      Object.entries(table).map(([id, h]) => {
        if (shared(id)) return [id, h];
        const dispatch: Handler<AccountAuth> = (ctx) => {
          const other = ctx.auth && ctx.auth.customer !== this.primary().account.customer ? this.entries.get(ctx.auth.customer) : undefined;
          return (other?.handlers[id] ?? h)(ctx);
        };
        return [id, dispatch];
      }),
    );
  }

  remove(customer: string): boolean {
    const entry = this.entries.get(customer);
    if (!entry) return false;
    for (const [k, e] of this.byToken) if (e === entry) this.byToken.delete(k);
    for (const [k, e] of this.byBasic) if (e === entry) this.byBasic.delete(k);
    return this.entries.delete(customer);
  }
}
