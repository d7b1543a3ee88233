// The request types of both clients are closed: a body or parameter field the spec does not name does
// not compile, nested or not. Each case of issue "types that catch mistakes" is here; every
// body-taking operation of both bundles is checked by packages/client-core/test/request-types.test.ts.
import { createAccountClient, errorAt } from '@zone-api/account-client';
import { createManagerClient } from '@zone-api/manager-client';
import { describe, expectTypeOf, it } from 'vitest';

const manager = createManagerClient();
const account = createAccountClient({ baseUrl: 'http://account.test', auth: { token: 't' }, customer: 'hl_1' });
const zoneAccount = createAccountClient({
  baseUrl: 'http://account.test',
  auth: { zone: { customer: 'hl_1', zone: 'z', password: 'p' } },
});

describe('request types refuse unknown fields', () => {
  it('refuses a misspelt optional field in a body, at any depth', () => {
    // @ts-expect-error `contry` is not a field of a port (country is)
    void manager.createProxy({ body: { proxy: { zone: 'z', contry: 'us' } } });
    // @ts-expect-error `www_whitelist_ipz` is not a setting
    void manager.updateSettings({ body: { www_whitelist_ipz: [] } });
    // @ts-expect-error `typ` is not a field of a plan
    void account.createZone({ body: { zone: { name: 'n' }, plan: { typ: 'static' } } });
    // @ts-expect-error `contry` is not a field of addZoneIps
    void account.addZoneIps({ body: { zone: 'z', count: 1, contry: 'us' } });
    // @ts-expect-error the same through a client whose Zone credential fills `zone` and `customer`
    void zoneAccount.addZoneIps({ body: { count: 1, contry: 'us' } });
    // @ts-expect-error `bogus` is not an option of a call
    void manager.listProxies({ bogus: true });
    // @ts-expect-error `zonez` is not a query parameter of getZone
    void account.getZone({ params: { query: { zonez: 'z' } } });
  });

  it('accepts the same calls spelt right', () => {
    void manager.createProxy({ body: { proxy: { zone: 'z', country: 'us' } } });
    void manager.updateSettings({ body: { www_whitelist_ips: [] } });
    void account.createZone({ body: { zone: { name: 'n' }, plan: { type: 'static' } } });
    void account.addZoneIps({ body: { zone: 'z', count: 1, country: 'us' } });
    void zoneAccount.addZoneIps({ body: { count: 1, country: 'us' } });
    void manager.listProxies({ signal: AbortSignal.timeout(1000) });
  });

  it('types the banIps and banIpAllPorts bodies as a union of their two forms', () => {
    type BanIps = NonNullable<Parameters<typeof manager.banIps>[0]>['body'];
    expectTypeOf<{ ip: string[] }>().toExtend<BanIps>();
    expectTypeOf<{ ips: string[]; ms: number }>().toExtend<BanIps>();
    expectTypeOf<{ domain: string }>().not.toExtend<BanIps>();
    const port = { path: { port: 24000 } };
    void manager.banIps({ params: port, body: { ip: ['192.0.2.1'] } });
    void manager.banIps({ params: port, body: { ips: ['192.0.2.1'], domain: 'example.com' } });
    void manager.banIps({ params: port, body: { ip: ['192.0.2.1'], ips: ['192.0.2.2'] } });
    // @ts-expect-error a number is not a body of banIps
    void manager.banIps({ params: port, body: 42 });
    // @ts-expect-error one of `ip` and `ips` is required
    void manager.banIps({ params: port, body: { domain: 'example.com' } });
    // @ts-expect-error `ipz` is in neither form
    void manager.banIps({ params: port, body: { ip: ['192.0.2.1'], ipz: [] } });
    void manager.banIpAllPorts({ body: { ip: '192.0.2.1' } });
    void manager.banIpAllPorts({ body: { ips: ['192.0.2.1'], ports: [24000] } });
    // @ts-expect-error a number is not a body of banIpAllPorts
    void manager.banIpAllPorts({ body: 42 });
    // @ts-expect-error one of `ip` and `ips` is required
    void manager.banIpAllPorts({ body: { ports: [24000] } });
    // @ts-expect-error `ip` of banIpAllPorts is one IP, not a list
    void manager.banIpAllPorts({ body: { ip: ['192.0.2.1'] } });
  });
});

// biome-ignore lint/suspicious/noExplicitAny: matches any method
type ErrorOf<F> = F extends (...args: any[]) => Promise<infer R> ? (R extends { error: infer E } ? NonNullable<E> : never) : never;
/** The operations whose error has no `message: string`: none. */
type WithoutMessage<C, Ids extends keyof C> = { [K in Ids]: ErrorOf<C[K]> extends { readonly message: string } ? never : K }[Ids];

describe('every error has one message', () => {
  it('reads error.message on every operation of both clients without narrowing', async () => {
    type AccountIds = import('@zone-api/account-client').OperationId;
    type ManagerIds = import('@zone-api/manager-client').OperationId;
    expectTypeOf<WithoutMessage<typeof account, AccountIds>>().toEqualTypeOf<never>();
    expectTypeOf<WithoutMessage<typeof manager, ManagerIds>>().toEqualTypeOf<never>();
    // Not vacuous: the errors are what the operations declare, with the message beside.
    expectTypeOf<ErrorOf<typeof manager.createProxy>>().toExtend<{ readonly message: string }>();
    const created = await manager.createProxy({ body: { proxy: { zone: 'z' } } });
    if (created.error) throw new Error(created.error.message);
    const zone = await account.getZone({ params: { query: { zone: 'z' } } });
    if (zone.error) throw new Error(zone.error.message);
    expectTypeOf(zone.data.password).toEqualTypeOf<string[] | undefined>();
  });

  it('errorAt narrows on both APIs', async () => {
    const created = await manager.createProxy({ body: { proxy: { zone: 'z' } } });
    expectTypeOf(errorAt(created, 400)?.errors[0]?.msg).toEqualTypeOf<string | undefined>();
    expectTypeOf(errorAt(created, 400)?.message).toEqualTypeOf<string | undefined>();
    const zone = await account.getZone({ params: { query: { zone: 'z' } } });
    expectTypeOf(errorAt(zone, 401)?.details).toEqualTypeOf<{ field: string; reason: string }[] | undefined>();
    expectTypeOf(errorAt(zone, 401)?.error).toEqualTypeOf<string | undefined>();
    // @ts-expect-error getZone declares no 418
    errorAt(zone, 418);
  });
});
