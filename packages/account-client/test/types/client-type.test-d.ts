import { describe, expectTypeOf, it } from 'vitest';
import { type AccountClient, createAccountClient } from '../../src/index.js';

// The client's type as users write it when they pass a client around: `ReturnType<typeof
// createAccountClient>` (the last overload's, `AccountClient`), a function parameter, a class field.
// Every client fits it, whatever it was created with (a default `customer`, a Zone credential): a
// client that fills a field in takes every call that names it. It once failed with "Two different
// types with this name exist, but they are unrelated" (the results carried the filled parameters).

type Client = ReturnType<typeof createAccountClient>;

const plain = createAccountClient({ baseUrl: 'http://account.test', auth: { token: 't' } });
const withCustomer = createAccountClient({ baseUrl: 'http://account.test', auth: { token: 't' }, customer: 'hl_1a2b3c4d' });
const zoned = createAccountClient({
  baseUrl: 'http://account.test',
  auth: { zone: { customer: 'hl_1a2b3c4d', zone: 'static_zone', password: 'p' } },
});

async function balanceOf(client: Client, customer: string): Promise<number | undefined> {
  const { data, error } = await client.getBalance({ params: { query: { customer } } });
  if (error) throw new Error(error.message);
  return data.balance;
}

class ZoneService {
  constructor(private readonly client: Client) {}
  async names(customer: string): Promise<string[]> {
    const { data } = await this.client.listActiveZones({ params: { query: { customer } } });
    return (data ?? []).map((z) => z.name);
  }
}

/** A function that relies on the client's default customer names the type that says so. */
async function myBalance(client: AccountClient<'customer'>): Promise<number | undefined> {
  return (await client.getBalance()).data?.balance;
}

describe('the account client type users write', () => {
  it('ReturnType<typeof createAccountClient> is AccountClient, and every client fits it', () => {
    expectTypeOf<Client>().toEqualTypeOf<AccountClient>();
    expectTypeOf(plain).toExtend<Client>();
    expectTypeOf(withCustomer).toExtend<Client>();
    expectTypeOf(zoned).toExtend<Client>();
  });

  it('as a function parameter and a class field', () => {
    void balanceOf(plain, 'hl_1a2b3c4d');
    void balanceOf(withCustomer, 'hl_1a2b3c4d');
    void balanceOf(zoned, 'hl_1a2b3c4d');
    void new ZoneService(withCustomer).names('hl_1a2b3c4d');
    void new ZoneService(zoned).names('hl_1a2b3c4d');
    const field: { client: Client } = { client: withCustomer };
    void field;
    void myBalance(withCustomer);
    // @ts-expect-error a client without a default customer does not fill it in
    void myBalance(plain);
  });

  it('through the general type a call still names customer (the client may have no default)', () => {
    const client: Client = withCustomer;
    // @ts-expect-error getAvailableIpCount needs customer unless the type says the client fills it in
    void client.getAvailableIpCount({ params: { query: { zone: 'static_zone' } } });
    void client.getAvailableIpCount({ params: { query: { customer: 'hl_1a2b3c4d', zone: 'static_zone' } } });
    const filled: AccountClient<'customer'> = withCustomer;
    void filled.getAvailableIpCount({ params: { query: { zone: 'static_zone' } } });
  });
});
