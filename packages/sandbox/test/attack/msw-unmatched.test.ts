import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setupServer } from 'msw/node';
import { Agent, type Dispatcher, getGlobalDispatcher, request, setGlobalDispatcher } from 'undici';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { interceptUndici, sandboxHandlers } from '../../src/in-process/msw.js';
import { type Sandbox, startSandbox } from '../../src/index.js';

// The MSW adapter with `onUnhandledRequest: 'error'`: an `undici.request` to a host no handler answers
// once went on to the dispatcher interceptUndici had replaced, so a test could reach the real provider.
// "Outside" here is a loopback server: the dispatcher standing for the real network resolves every
// host name to it, so that a request that leaves the process is seen, and nothing leaves the machine.

let outside: Server;
const seen: string[] = [];
let sandbox: Sandbox;
let server: ReturnType<typeof setupServer>;
let previous: Dispatcher;
let network: Agent;
let outsidePort = 0;

beforeAll(async () => {
  outside = createServer((req, res) => {
    seen.push(`${req.method} ${req.headers.host}${req.url}`);
    res.end('reached');
  });
  outside.listen(0, '127.0.0.1');
  await once(outside, 'listening');
  outsidePort = (outside.address() as AddressInfo).port;
  // The "real network": every name resolves to the loopback server above.
  network = new Agent({
    connect: {
      lookup: (_host, opts, cb) =>
        (opts as { all?: boolean }).all ? cb(null, [{ address: '127.0.0.1', family: 4 }] as never) : cb(null, '127.0.0.1', 4),
    },
  });
  previous = getGlobalDispatcher();
  setGlobalDispatcher(network);
  sandbox = await startSandbox({ listen: false });
  server = setupServer(...sandboxHandlers(sandbox));
  server.listen({ onUnhandledRequest: 'error' });
});
beforeEach(() => {
  seen.length = 0;
});
let restore = () => {};
afterEach(() => restore());
afterAll(async () => {
  server?.close();
  setGlobalDispatcher(previous);
  await Promise.all([sandbox?.close(), network?.close(), new Promise((r) => outside?.close(r))]);
});

const unmatched = () => `http://provider-lookalike.test:${outsidePort}/zone/get_active_zones?token=t`;

describe('interceptUndici: nothing unmatched leaves the process unless passing on is chosen', () => {
  it('the harness: with passing on chosen explicitly, the request reaches "outside" (so the refusals below are real)', async () => {
    restore = interceptUndici(server, { onUnhandledRequest: 'bypass' });
    const res = await request(unmatched());
    expect(await res.body.text()).toBe('reached');
    expect(seen).toEqual([`GET provider-lookalike.test:${outsidePort}/zone/get_active_zones?token=t`]);
  });

  it("by default (the server listening with 'error'): refused with a network error, nothing sent", async () => {
    restore = interceptUndici(server);
    const error = await request(unmatched()).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(error?.message).toMatch(/Refused, not sent/);
    expect(seen).toEqual([]);
  });

  it("onUnhandledRequest: 'error', and the testing guide's throwing callback: refused, nothing sent", async () => {
    restore = interceptUndici(server, { onUnhandledRequest: 'error' });
    await expect(request(unmatched(), { method: 'POST', body: '{"a":1}' })).rejects.toThrow(/Refused, not sent/);
    restore();
    const guide = (req: Request) => {
      if (new URL(req.url).hostname !== '127.0.0.1') throw new Error(`not sent: ${req.method} ${req.url}`);
    };
    restore = interceptUndici(server, { onUnhandledRequest: guide });
    await expect(request(unmatched())).rejects.toThrow(/not sent: GET http:\/\/provider-lookalike\.test/);
    expect(seen).toEqual([]);
    // The guide's callback lets loopback pass: the sandbox's neighbours on 127.0.0.1 stay reachable.
    const res = await request(`http://127.0.0.1:${outsidePort}/local`);
    expect(await res.body.text()).toBe('reached');
    expect(seen).toEqual([`GET 127.0.0.1:${outsidePort}/local`]);
  });

  it("what the handlers answer is still answered: the provider's host reaches the sandbox, not outside", async () => {
    restore = interceptUndici(server);
    const before = sandbox.calls({ operationId: 'listActiveZones' }).length;
    const res = await request('https://api.brightdata.com/zone/get_active_zones', {
      headers: { authorization: `Bearer ${sandbox.credentials.token}` },
    });
    expect(res.statusCode).toBe(200);
    await res.body.dump();
    expect(sandbox.calls({ operationId: 'listActiveZones' })).toHaveLength(before + 1);
    expect(seen).toEqual([]);
  });
});
