import { describe, expectTypeOf, it } from 'vitest';
import { type SeedBuilder, seed } from '../../src/index.js';

describe('the seed builder is typed from the spec and tracks its Zones', () => {
  it('a port or a whitelist names a Zone the seed has; plans and ports take the spec types', () => {
    const b = seed().zone('ci_zone', { plan: { type: 'static', ips_type: 'dedicated', bandwidth: 'unlimited', ips: 2 }, ips: 2 });
    expectTypeOf(b).toEqualTypeOf<SeedBuilder<'static_zone' | 'res_zone' | 'dc_zone_2' | 'mob_zone' | 'old_zone' | 'ci_zone'>>();
    b.port({ port: 24010, zone: 'ci_zone', country: 'us' }).whitelist('ci_zone', '127.0.0.1');
    // @ts-expect-error no Zone of that name in the seed
    b.port({ port: 24011, zone: 'ci_zone_typo' });
    // @ts-expect-error no Zone of that name in the seed
    b.whitelist('nope', '127.0.0.1');
    // @ts-expect-error a plan type the spec does not list
    seed().zone('z', { plan: { type: 'satellite' } });
    // @ts-expect-error a port field of the wrong type (the spec's ProxyPort)
    seed().port({ port: 24012, zone: 'res_zone', rotate_session: 'yes' });
    const renamed = seed().renameZone('static_zone', 'static_ci');
    renamed.port({ port: 24013, zone: 'static_ci' });
    // @ts-expect-error the old name is gone
    renamed.port({ port: 24014, zone: 'static_zone' });
    // @ts-expect-error an empty account has no Zone to name yet
    seed.empty().port({ port: 24015, zone: 'res_zone' });
  });
});

describe('overrides are typed by operationId, their bodies by the spec', () => {
  it('takes a declared body and refuses another shape at compile time', () => {
    const overrides: import('../../src/index.js').Overrides = {
      account: { getBalance: () => ({ body: { balance: 1, pending_costs: 0 } }) },
      manager: { getVersion: () => ({ body: { version: '1.0.0', argv: '' } }) },
    };
    void overrides;
    const wrong: import('../../src/index.js').Overrides = {
      // @ts-expect-error balance is a number in the spec
      account: { getBalance: () => ({ body: { balance: 'lots', pending_costs: 0 } }) },
    };
    void wrong;
    // @ts-expect-error no operation of that name
    const typo: import('../../src/index.js').Overrides = { account: { getBalanse: () => undefined } };
    void typo;
  });
});
