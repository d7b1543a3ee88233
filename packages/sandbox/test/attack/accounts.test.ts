import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultSeed, type Sandbox, type SandboxAccount, seed, startSandbox } from '../../src/index.js';
import { ACCOUNTS_LIMIT, OWN_MANAGERS_LIMIT } from '../../src/tenancy/accounts.js';

// Per-test accounts (issue 39): an account created with another account's basic `user:password` took
// that credential over (token collisions were refused, basic ones were not); and accounts were made
// without bound, 300 with their own manager (+279 MB, 926 fds), then 2,000 (+494 MB). A credential
// now belongs to one account, and both kinds of account are capped with an error that says so.

// The first account with a basic credential and a token of its own (the built-in fixtures' are replaced in a created account).
const FIRST_BASIC = { username: 'first@example.com', password: 'first-basic-pw' };
const FIRST_TOKEN = 'first-account-token-0123456789';
let s: Sandbox;
beforeAll(async () => {
  const data = defaultSeed();
  data.account.basic = [FIRST_BASIC];
  (data.account.tokens[0] as { token: string }).token = FIRST_TOKEN;
  s = await startSandbox({ seed: data });
});
afterAll(async () => {
  await s?.close();
});

/** The accounts made by createAccount() that the sandbox holds now (its control API). */
const accountCount = async () =>
  ((await (await fetch(`${s.accountUrl}/__sandbox/accounts`)).json()) as { accounts: unknown[] }).accounts.length;

const basicOf = (username: string, password: string) => {
  const data = seed.empty().build();
  data.account.customer = `hl_${Math.random().toString(16).slice(2, 10)}`;
  data.account.basic = [{ username, password }];
  return data;
};

describe('a credential belongs to one account', () => {
  it("the first account's basic credential is refused to a new account", async () => {
    const { username, password } = FIRST_BASIC;
    await expect(s.createAccount(basicOf(username, password))).rejects.toThrow(
      `createAccount: a basic credential of the seed (user ${username}) belongs to another account of the sandbox`,
    );
    expect(await accountCount()).toBe(0);
  });

  it("a created account's basic credential is refused to the next; the same user with another password is not", async () => {
    const first = await s.createAccount(basicOf('shared@example.com', 'pw-one'));
    try {
      await expect(s.createAccount(basicOf('shared@example.com', 'pw-one'))).rejects.toThrow(
        /basic credential of the seed .* belongs to another account/,
      );
      const other = await s.createAccount(basicOf('shared@example.com', 'pw-two'));
      await other.remove();
    } finally {
      await first.remove();
    }
  });

  it("a token is refused as before: another account's bearer token", async () => {
    const data = seed.empty().build();
    data.account.customer = 'hl_00c0ffee';
    data.account.tokens = [{ ...(defaultSeed().account.tokens[0] as object), token: FIRST_TOKEN } as (typeof data.account.tokens)[0]];
    await expect(s.createAccount(data)).rejects.toThrow(/a token of the seed .* belongs to another account/);
    expect(await accountCount()).toBe(0);
  });
});

describe('accounts are capped', () => {
  it(`${ACCOUNTS_LIMIT} accounts beside the first, then a clear error; one removed makes room`, async () => {
    const made: SandboxAccount[] = [];
    try {
      for (let i = 0; i < ACCOUNTS_LIMIT; i++) made.push(await s.createAccount(seed.empty()));
      expect(made.length).toBe(ACCOUNTS_LIMIT);
      await expect(s.createAccount(seed.empty())).rejects.toThrow(
        `createAccount: the sandbox holds ${ACCOUNTS_LIMIT} accounts beside its first, as many as it makes; remove one (account.remove()) or start another sandbox`,
      );
      await made.pop()?.remove();
      made.push(await s.createAccount(seed.empty()));
    } finally {
      for (const a of made) await a.remove();
    }
    expect(await accountCount()).toBe(0);
  }, 120_000);

  it(`${OWN_MANAGERS_LIMIT} with a manager of their own, then a clear error; the account is not made`, async () => {
    const made: SandboxAccount[] = [];
    try {
      for (let i = 0; i < OWN_MANAGERS_LIMIT; i++) made.push(await s.createAccount(seed.empty(), { manager: true }));
      expect(made.filter((a) => a.manager).length).toBe(OWN_MANAGERS_LIMIT);
      await expect(s.createAccount(seed.empty(), { manager: true })).rejects.toThrow(
        `createAccount: the sandbox runs ${OWN_MANAGERS_LIMIT} managers of created accounts, as many as it runs; remove an account that has one, or create this one without { manager: true }`,
      );
      expect(await accountCount()).toBe(OWN_MANAGERS_LIMIT);
      // Without a manager of its own it is made.
      made.push(await s.createAccount(seed.empty()));
    } finally {
      for (const a of made) await a.remove();
    }
  }, 120_000);
});
