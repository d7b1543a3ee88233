import { randomBytes } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { AccountHandlers } from './account/context.js';
import { accountHandlers } from './account/index.js';
import { defaultSeed, SEED } from './domain/seed.js';
import { Store, validateSeed } from './domain/state.js';
import type { StateData } from './domain/types.js';
import type { ApiName, OpenApiDoc } from './router/spec.js';
import { isSeedBuilder } from './seed-builder.js';

// More customers on one sandbox (sandbox.createAccount()): each its own state (Zones, usage, logs),
// clock and credentials, made in milliseconds, so that each test of a suite has an account of its own
// on a sandbox started once. A request goes to the account its credential belongs to; the handlers
// are the same code over that account's Store.

/** One account of the sandbox beside its first. */
export interface AccountEntry {
  customer: string;
  store: Store;
  handlers: AccountHandlers;
  /** What `reset()` goes back to. */
  seed: StateData;
}

const hex = (bytes: number) => randomBytes(bytes).toString('hex');

export class Accounts {
  private readonly entries = new Map<string, AccountEntry>();
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
   * basic credential is looked up in each account); the first account's when none holds it, which then
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
    const holds =
      scheme === 'bearer'
        ? (s: Store) => s.tokens.has(value)
        : scheme === 'basic'
          ? (s: Store) => s.basic.has(Buffer.from(value, 'base64').toString('utf8'))
          : () => false;
    if (holds(this.primary())) return this.primary();
    for (const e of this.entries.values()) if (holds(e.store)) return e.store;
    return this.primary();
  }

  /**
   * A new account from `seed` (the built-in one by default): a customer id of its own, and new secrets
   * where the seed holds the built-in fixtures' (tokens, Zone passwords, the basic credential), so that
   * no credential of one account opens another. A seed of your own keeps its customer and secrets, which
   * must not be another account's.
   */
  create(seed?: StateData | { build(): StateData }): AccountEntry {
    let data: StateData;
    if (seed === undefined) {
      this.builtIn ??= defaultSeed();
      data = structuredClone(this.builtIn);
    } else data = isSeedBuilder(seed) ? seed.build() : structuredClone(seed);
    const a = data.account;
    if (a.customer === SEED.customer || this.storeOf(a.customer)) {
      if (seed !== undefined && a.customer !== SEED.customer)
        throw new Error(`createAccount: the sandbox already has customer ${a.customer}`);
      a.customer = `hl_${hex(4)}`;
      while (this.storeOf(a.customer)) a.customer = `hl_${hex(4)}`;
    }
    data.manager.settings.customer = a.customer;
    const fixtures = new Set<string>([SEED.token, SEED.limitedToken]);
    for (const t of a.tokens) if (fixtures.has(t.token)) t.token = `sandbox-token-${hex(12)}`;
    const builtInPasswords = new Set<string>(Object.values(SEED.zones));
    for (const z of a.zones) z.passwords = z.passwords.map((p) => (builtInPasswords.has(p) ? hex(6) : p));
    if (builtInPasswords.has(data.manager.settings.password ?? '')) {
      const zone = a.zones.find((z) => z.name === data.manager.settings.zone);
      if (zone) data.manager.settings.password = zone.passwords[0];
    }
    for (const b of a.basic) {
      if (b.username === SEED.basic.username) b.username = `${a.customer}@example.com`;
      if (b.password === SEED.basic.password) b.password = `sandbox-basic-${hex(8)}`;
    }
    for (const t of a.tokens) {
      if (this.storeFor({ headers: { authorization: `Bearer ${t.token}` } } as FastifyRequest).tokens.has(t.token))
        throw new Error(`createAccount: a token of the seed (${t.token.slice(0, 4)}…) belongs to another account of the sandbox`);
    }
    // The built-in seed was checked at start; a seed of your own is checked here, every reference with its path.
    if (seed !== undefined) validateSeed(data, this.specs, `createAccount seed (${a.customer})`);
    const store = new Store(data);
    const entry: AccountEntry = { customer: a.customer, store, handlers: accountHandlers(store), seed: data };
    this.entries.set(a.customer, entry);
    return entry;
  }

  remove(customer: string): boolean {
    return this.entries.delete(customer);
  }
}
