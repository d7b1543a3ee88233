import { describe, expectTypeOf, it } from 'vitest';
import type { AccountHandlers } from '../../src/account/context.js';
import type { ManagerHandlers, ManagerHandlerTable } from '../../src/manager/context.js';

// The handler tables are typed by operationId from the types generated into @zone-api/spec: these
// checks fail `tsc` (the `types` project) when a handler may read a field its operation does not
// have, or a table names an operation that does not exist or leaves one out.

describe('handler tables typed by operationId', () => {
  it('gives each handler its operation generated params, query and body', () => {
    void ({
      banIp: (ctx) => {
        expectTypeOf(ctx.params.port).toEqualTypeOf<number>();
        expectTypeOf(ctx.body.ip).toEqualTypeOf<string>();
        expectTypeOf(ctx.body.domain).toEqualTypeOf<string | undefined>();
        return { status: 204 };
      },
      getVersion: (ctx) => {
        expectTypeOf(ctx.body).toEqualTypeOf<undefined>();
        return undefined;
      },
    } satisfies ManagerHandlers);
    void ({
      getZone: (ctx) => {
        expectTypeOf(ctx.query.zone).toEqualTypeOf<string | undefined>();
        return undefined;
      },
    } satisfies AccountHandlers);
  });

  it('refuses a body field the operation does not have', () => {
    void ({
      banIp: (ctx) => {
        // @ts-expect-error BanIpRequest has `ip`, not `ips`
        void ctx.body.ips;
        // @ts-expect-error and `ip` is a string
        void ctx.body.ip.push;
        return undefined;
      },
    } satisfies ManagerHandlers);
  });

  it('refuses a misspelt handler and a table that leaves an operation out', () => {
    void ({
      // @ts-expect-error no operation is called banIpp
      banIpp: () => undefined,
    } satisfies ManagerHandlers);
    // @ts-expect-error every operation needs a handler
    const incomplete: ManagerHandlerTable = { banIp: () => undefined };
    void incomplete;
  });
});
