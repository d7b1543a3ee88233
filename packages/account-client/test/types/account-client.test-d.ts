import { describe, expectTypeOf, it } from 'vitest';
import { createAccountClient, type Schemas } from '../../src/index.js';

const client = createAccountClient({ baseUrl: 'http://account.test', auth: { token: 't' } });

describe('account client types', () => {
  it('types query, bodies and results from the spec', async () => {
    const zone = await client.getZone({ params: { query: { zone: 'static_zone' } } });
    expectTypeOf(zone.data?.password).toEqualTypeOf<string[] | undefined>();
    const text = await client.getRouteIps({ params: { query: { zone: 'static_zone' } } });
    // Text (one IP per line, or the seed's range), or JSON with list_countries.
    expectTypeOf(text.data).toEqualTypeOf<string | { ip: string; country: string }[] | undefined>();
    await client.getAvailableIpCount({
      params: {
        query: {
          customer: 'c',
          zone: 'z',
          plan: { ips_type: 'selective', country_city: 'us-newyork', city: true, geo_db: { maxmind: true } },
        },
      },
    });
    await client.listRequestLogs({ params: { query: { 'status.code': '200', 'ts.from': '2024-05-01' } } });
    expectTypeOf<Schemas['Plan']['type']>().toEqualTypeOf<'static' | 'resident' | 'unblocker' | 'browser_api' | undefined>();
  });

  it('refuses wrong bodies and missing required fields at compile time', () => {
    // @ts-expect-error the create body needs `zone` and `plan`
    void client.createZone({ body: { customer: 'c' } });
    // @ts-expect-error zone.name is required
    void client.createZone({ body: { zone: {}, plan: {} } });
    // @ts-expect-error bandwidth is payperusage or unlimited
    void client.createZone({ body: { zone: { name: 'n' }, plan: { bandwidth: 'metered' } } });
    // @ts-expect-error status is suspend_manual or active
    void client.setAccountStatus({ body: { status: 'paused' } });
    // @ts-expect-error network_type is all, res, dc or mobile
    void client.getNetworkStatus({ params: { path: { network_type: 'wifi' } } });
    // @ts-expect-error count_available_ips needs customer and zone
    void client.getAvailableIpCount({ params: { query: {} } });
    // @ts-expect-error ips_type of the plan filter is shared or selective
    void client.getAvailableIpCount({ params: { query: { customer: 'c', zone: 'z', plan: { ips_type: 'dedicated' } } } });
    // @ts-expect-error the auth must be one of the three schemes
    createAccountClient({ baseUrl: 'x', auth: { apiKey: 'k' } });
  });

  it('paginate yields the records of a paged operation, typed, and takes only paged operations', async () => {
    for await (const log of client.paginate('listRequestLogs', { params: { query: { zone: 'static_zone', page_size: 50 } } })) {
      // Assignable both ways (the item comes through openapi-fetch's response types, so it is not the
      // identical intersection with the open record's index signature), and its fields are the spec's.
      expectTypeOf(log).toExtend<Schemas['RequestLog']>();
      expectTypeOf<Schemas['RequestLog']>().toExtend<typeof log>();
      expectTypeOf(log.status?.code).toEqualTypeOf<number | undefined>();
      expectTypeOf(log.dst?.url).toEqualTypeOf<string | undefined>();
    }
    // @ts-expect-error getZone is not paged (no x-pagination in the spec)
    void client.paginate('getZone');
    // @ts-expect-error the walk's query is the operation's own
    void client.paginate('listRequestLogs', { params: { query: { page_size: 'ten' } } });
  });

  it('fields the client fills in are optional in the call: a default customer, a Zone credential', async () => {
    // @ts-expect-error without a default customer, getAvailableIpCount needs one (the documentation requires it)
    void client.getAvailableIpCount({ params: { query: { zone: 'static_zone' } } });
    const withCustomer = createAccountClient({ baseUrl: 'http://account.test', auth: { token: 't' }, customer: 'hl_1a2b3c4d' });
    const count = await withCustomer.getAvailableIpCount({ params: { query: { zone: 'static_zone' } } });
    expectTypeOf(count.data?.count).toEqualTypeOf<number | undefined>();
    // @ts-expect-error zone is still the caller's to give
    void withCustomer.getAvailableIpCount({ params: { query: {} } });
    const zoneAuth = createAccountClient({
      baseUrl: 'http://account.test',
      auth: { zone: { customer: 'hl_1a2b3c4d', zone: 'static_zone', password: 'p' } },
    });
    await zoneAuth.getAvailableIpCount();
    await zoneAuth.getZone();
    await zoneAuth.addZoneIps({ body: { count: 2 } });
  });

  it('if (error) narrows data, on every operation', async () => {
    const { data, error } = await client.getZone({ params: { query: { zone: 'static_zone' } } });
    if (error) {
      expectTypeOf(error.error).toEqualTypeOf<string>();
      return;
    }
    expectTypeOf(data.password).toEqualTypeOf<string[] | undefined>();
    const text = await client.getRouteIps({ params: { query: { zone: 'static_zone' } } });
    if (text.error) return;
    expectTypeOf(text.data).toEqualTypeOf<string | { ip: string; country: string }[]>();
  });
});
