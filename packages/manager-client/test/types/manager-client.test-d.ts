import { describe, expectTypeOf, it } from 'vitest';
import { createManagerClient, type ErrorMessage, errorAt, type ResponseError, type Schemas } from '../../src/index.js';

const client = createManagerClient();

describe('manager client types', () => {
  it('types bodies and results from the spec', async () => {
    const r = await client.createProxy({ body: { proxy: { port: 24001, dns: 'remote', debug: 'full' } } });
    expectTypeOf(r.data?.data.port).toEqualTypeOf<number | undefined>();
    const logs = await client.getGeneralLogs();
    expectTypeOf(logs.data).toEqualTypeOf<string | undefined>();
    expectTypeOf<Schemas['ProxyPort']['proxy_connection_type']>().toEqualTypeOf<'http' | 'https' | 'socks' | undefined>();
  });

  it('refuses wrong bodies and missing required fields at compile time', () => {
    // @ts-expect-error `proxy` is required
    void client.createProxy({ body: {} });
    // @ts-expect-error dns is `local` or `remote`
    void client.createProxy({ body: { proxy: { dns: 'google' } } });
    // @ts-expect-error the path needs a port
    void client.deleteProxy({ params: { path: {} } });
    // @ts-expect-error port is a number
    void client.deleteProxy({ params: { path: { port: '24000' } } });
    // @ts-expect-error an operation that does not exist
    void client.deleteEverything();
  });

  it('paginate walks getLogs by skip/limit and yields HAR entries', async () => {
    for await (const entry of client.paginate('getLogs', { params: { query: { limit: 100, search: 'example' } } })) {
      expectTypeOf(entry).toEqualTypeOf<Schemas['HarEntry']>();
    }
    // @ts-expect-error listProxies is not paged
    void client.paginate('listProxies');
  });

  it('if (error) narrows data, text errors included', async () => {
    const settings = await client.getSettings();
    if (settings.error) {
      expectTypeOf(settings.error.error).toEqualTypeOf<string>();
      return;
    }
    expectTypeOf(settings.data.customer).toEqualTypeOf<string | undefined>();
    const created = await client.createProxy({ body: { proxy: { port: 24001 } } });
    if (created.error) {
      if ('errors' in created.error) expectTypeOf(created.error.errors[0]?.msg).toEqualTypeOf<string | undefined>();
      return;
    }
    // The real manager always sends the port it listens on: required, so it goes back as a path parameter as it is.
    expectTypeOf(created.data.data.port).toEqualTypeOf<number>();
    void client.deleteProxy({ params: { path: { port: created.data.data.port } } });
  });

  it('types as required the fields the real manager always sends', async () => {
    // getNodeVersion, getVersion and getLogs: each handler of the real manager writes these on every answer.
    const node = await client.getNodeVersion();
    if (node.data) {
      expectTypeOf(node.data.satisfied).toEqualTypeOf<boolean>();
      expectTypeOf(node.data.recommended).toEqualTypeOf<string>();
    }
    const version = await client.getVersion();
    if (version.data) expectTypeOf(version.data.argv).toEqualTypeOf<string>();
    const logs = await client.getLogs();
    if (logs.data) {
      expectTypeOf(logs.data.total).toEqualTypeOf<number>();
      expectTypeOf(logs.data.skip).toEqualTypeOf<number>();
      expectTypeOf(logs.data.sum_in).toEqualTypeOf<number>();
      expectTypeOf(logs.data.sum_out).toEqualTypeOf<number>();
    }
  });

  it('errorAt types the error of each declared status, and refuses a status the operation does not declare', async () => {
    const created = await client.createProxy({ body: { proxy: { port: 24001 } } });
    expectTypeOf(errorAt(created, 400)).toEqualTypeOf<(Schemas['ProxyErrors'] & ErrorMessage) | undefined>();
    expectTypeOf(errorAt(created, 400)?.errors[0]?.msg).toEqualTypeOf<string | undefined>();
    // 500 is a text answer of the real manager: a ResponseError.
    expectTypeOf(errorAt(created, 500)).toEqualTypeOf<ResponseError | undefined>();
    // @ts-expect-error 418 is not a status createProxy declares
    errorAt(created, 418);
    // @ts-expect-error 200 is not an error status
    errorAt(created, 200);
  });
});
