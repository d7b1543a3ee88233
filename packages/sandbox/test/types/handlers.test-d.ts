import { describe, expectTypeOf, it } from 'vitest';
import type { AccountHandlers } from '../../src/account/context.js';
import type { ManagerHandlers, ManagerHandlerTable } from '../../src/manager/context.js';
import type { BodyAsSent, ManagerOperations } from '../../src/router/handlers.js';

// The handler tables are typed by operationId from the types generated into @zone-api/spec: these
// checks fail `tsc` (the `types` project) when a handler may read a field its operation does not
// have, or a table names an operation that does not exist or leaves one out.

describe('handler tables typed by operationId', () => {
  it('gives each handler its operation generated params, query and body', () => {
    void ({
      changeProxyIps: (ctx) => {
        expectTypeOf(ctx.body.port).toEqualTypeOf<number>();
        expectTypeOf(ctx.body.ips).toEqualTypeOf<string[] | undefined>();
        return undefined;
      },
      getBanList: (ctx) => {
        expectTypeOf(ctx.query.full).toEqualTypeOf<string | undefined>();
        return undefined;
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

  it('types a part the real manager reads unchecked (x-observed-unchecked) as sent: path text, body fields of any type', () => {
    void ({
      banIp: (ctx) => {
        expectTypeOf(ctx.params.port).toEqualTypeOf<number | string>();
        expectTypeOf(ctx.body).toEqualTypeOf<BodyAsSent<ManagerOperations['banIp']['requestBody']['content']['application/json']>>();
        expectTypeOf(ctx.body?.ip).toEqualTypeOf<unknown>();
        expectTypeOf(ctx.body?.ms).toEqualTypeOf<unknown>();
        return { status: 204 };
      },
      // A query read unchecked: each parameter's text as sent, a list when repeated.
      getLogs: (ctx) => {
        expectTypeOf(ctx.query.skip).toEqualTypeOf<number | string | string[] | undefined>();
        // @ts-expect-error getLogs has no `skipp`
        void ctx.query.skipp;
        return undefined;
      },
      // A union of two forms: the fields of both.
      banIps: (ctx) => {
        expectTypeOf(ctx.body?.ips).toEqualTypeOf<unknown>();
        expectTypeOf(ctx.body?.ip).toEqualTypeOf<unknown>();
        return { status: 204 };
      },
    } satisfies ManagerHandlers);
  });

  it('refuses a body field the operation does not have', () => {
    void ({
      changeProxyIps: (ctx) => {
        // @ts-expect-error UpdateIpsRequest has `ips`, not `ipz`
        void ctx.body.ipz;
        // @ts-expect-error and `port` is a number
        void ctx.body.port.push;
        return undefined;
      },
      banIp: (ctx) => {
        // @ts-expect-error BanIpRequest has `ip`, not `ips`, even read unchecked
        void ctx.body?.ips;
        // @ts-expect-error an unchecked body may be absent
        void ctx.body.ip;
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
