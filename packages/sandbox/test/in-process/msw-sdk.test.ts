import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { bdclient } from '@brightdata/sdk';
import { PRELOAD } from '@zone-api/testkit/real-clients';
import { HttpResponse, http, passthrough } from 'msw';
import { setupServer } from 'msw/node';
import { request } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { interceptUndici, mswDispatcher, sandboxHandlers, type UndiciDispatcher } from '../../src/in-process/msw.js';
import { type Sandbox, startSandbox } from '../../src/index.js';

// The provider's JS SDK (`@brightdata/sdk` 0.2.0), unmodified, answered in process by the sandbox
// through MSW: its zone calls go to `undici.request` with undici's global dispatcher (the SDK's
// dist/esm/utils/net.mjs 29-32, api/zones.mjs 18 and 91), which MSW 2 does not see on Node 20
// (mswjs/msw#2165); `interceptUndici(server)` has the same handlers answer them. The real-clients
// guard is loaded into this process first: a DNS lookup or a connection that is not loopback is
// refused and written to a log this file reads, so the SDK cannot reach the provider.
const guardLog = join(tmpdir(), `zone-api-msw-sdk-guard-${process.pid}.jsonl`);
writeFileSync(guardLog, '');
process.env.ZONE_API_GUARD_LOG = guardLog;
delete process.env.HTTPS_PROXY;
createRequire(import.meta.url)(PRELOAD);
const guarded = () =>
  readFileSync(guardLog, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => (JSON.parse(l) as { what: string }).what);

let s: Sandbox;
let server: ReturnType<typeof setupServer>;
beforeAll(async () => {
  s = await startSandbox({ listen: false });
  server = setupServer(...sandboxHandlers(s));
  server.listen({ onUnhandledRequest: 'error' });
});
beforeEach(() => writeFileSync(guardLog, ''));
afterAll(async () => {
  server?.close();
  await s?.close();
  rmSync(guardLog, { force: true });
});

type ZonesApi = { createZone(name: string, opts?: Record<string, unknown>): Promise<unknown> };
const zonesOf = (client: bdclient) => (client as unknown as { zonesAPI: ZonesApi }).zonesAPI;

describe('the provider SDK through the MSW adapter, no port and no base URL changed', () => {
  it('without interceptUndici, MSW alone does not see the SDK: its call goes for the real host and the guard refuses it', async () => {
    const before = s.calls().length;
    const error = await new bdclient({ apiKey: s.credentials.token }).listZones().then(
      () => undefined,
      (e: Error) => e,
    );
    expect(error?.message).toMatch(/failed to list zones/);
    expect(guarded()).toEqual(['a connection to api.brightdata.com:443']);
    expect(s.calls()).toHaveLength(before);
  });

  it('with it: lists the Zones and creates one, every call answered and recorded by the sandbox, nothing sent', async () => {
    const restore = interceptUndici(server);
    try {
      const client = new bdclient({ apiKey: s.credentials.token });
      const zones = await client.listZones();
      expect(zones.map((z: { name: string }) => z.name)).toEqual(['static_zone', 'res_zone', 'dc_zone_2', 'mob_zone']);
      expect(await zonesOf(client).createZone('msw_sdk_zone')).toMatchObject({ zone: { name: 'msw_sdk_zone' } });
      expect((await client.listZones()).map((z: { name: string }) => z.name)).toContain('msw_sdk_zone');
    } finally {
      restore();
    }
    const calls = s.calls().slice(-3);
    expect(calls.map((c) => `${c.operationId} ${c.method} ${c.path} ${c.status}`)).toEqual([
      'listActiveZones GET /zone/get_active_zones 200',
      'createZone POST /zone 201',
      'listActiveZones GET /zone/get_active_zones 200',
    ]);
    expect(calls[1]?.body).toMatchObject({ zone: { name: 'msw_sdk_zone' } });
    expect(s.state().account.zones.map((z) => z.name)).toContain('msw_sdk_zone');
    expect(guarded()).toEqual([]);
  });

  it("the sandbox's faults reach the SDK: a 401 is its AuthenticationError, a dropped connection its network error", async () => {
    const restore = interceptUndici(server);
    try {
      const client = new bdclient({ apiKey: s.credentials.token });
      s.faults.account.arm({ operationId: 'listActiveZones', status: 401, count: 1 });
      await expect(client.listZones()).rejects.toThrow(/invalid API key/);
      s.faults.account.arm({ operationId: 'listActiveZones', drop: true, count: 1 });
      await expect(client.listZones()).rejects.toThrow(/failed to list zones/);
      expect((await client.listZones()).length).toBeGreaterThan(0);
    } finally {
      restore();
    }
    expect(guarded()).toEqual([]);
  });

  it('restore() puts the previous dispatcher back: the SDK goes for the real host again, and is refused', async () => {
    const restore = interceptUndici(server);
    restore();
    await expect(new bdclient({ apiKey: s.credentials.token }).listZones()).rejects.toThrow(/failed to list zones/);
    expect(guarded()).toEqual(['a connection to api.brightdata.com:443']);
  });
});

/** A dispatcher that only records what it was handed (and its body, which must still be there to send). */
function recordingFallback(): UndiciDispatcher & { seen: string[] } {
  const seen: string[] = [];
  return {
    seen,
    dispatch(opts, handler) {
      const body = opts.body instanceof Uint8Array ? ` ${Buffer.from(opts.body).toString()}` : '';
      seen.push(`${opts.method} ${String(opts.origin)}${opts.path}${body}`);
      handler.onError?.(new Error('fallback: not sent'));
      return true;
    },
    close: () => Promise.resolve(),
    destroy: () => Promise.resolve(),
  };
}

describe('mswDispatcher(): undici requests through MSW handlers', () => {
  const big = Buffer.alloc(3 * 1024 * 1024, 'x');
  const handlers = [
    http.get('https://big.test/', () => new HttpResponse(big, { headers: { 'set-cookie': 'a=1', 'x-two': 'b' } })),
    http.post('https://echo.test/', async ({ request: r }) =>
      HttpResponse.json({ body: await r.text(), type: r.headers.get('content-type') }),
    ),
    http.get('https://pass.test/', () => passthrough()),
    http.get('https://error.test/', () => HttpResponse.error()),
  ];

  it('a large answer arrives whole through undici.request, headers and cookies as sent', async () => {
    const fallback = recordingFallback();
    const res = await request('https://big.test/', { dispatcher: mswDispatcher(handlers, fallback) as never });
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-two']).toBe('b');
    expect(res.headers['set-cookie']).toBe('a=1');
    const body = Buffer.from(await res.body.arrayBuffer());
    expect(body.length).toBe(big.length);
    expect(body.equals(big)).toBe(true);
    expect(fallback.seen).toEqual([]);
  });

  it('a reader that does not read holds the answer back: chunks are pulled as the caller reads (its pauses honoured)', async () => {
    let pulled = 0;
    const CHUNKS = 200;
    const chunk = Buffer.alloc(64 * 1024, 'y');
    const streaming = http.get('https://stream.test/', () => {
      const body = new ReadableStream<Uint8Array>({
        pull(c) {
          if (pulled++ === CHUNKS) c.close();
          else c.enqueue(chunk);
        },
      });
      return new HttpResponse(body);
    });
    const res = await request('https://stream.test/', { dispatcher: mswDispatcher([streaming], recordingFallback()) as never });
    // Everything runs in this process: what pulls unread chunks does so within turns of the event loop,
    // not after some wall-clock time. Once pulling has started, the count must stay put over 50 turns
    // in a row (at most 5,000 turns), however loaded the machine.
    for (let turns = 0, still = 0, last = -1; turns < 5000 && still < 50; turns++) {
      await new Promise((r) => setImmediate(r));
      still = pulled > 0 && pulled === last ? still + 1 : 0;
      last = pulled;
    }
    // Unread: a few chunks at most (undici's body buffer), not all 200.
    expect(pulled).toBeGreaterThan(0);
    expect(pulled).toBeLessThan(CHUNKS / 4);
    expect((await res.body.arrayBuffer()).byteLength).toBe(CHUNKS * chunk.length);
    expect(pulled).toBe(CHUNKS + 1);
  });

  it('a request body (text, or a stream of chunks) reaches the handler whole, with its headers', async () => {
    const dispatcher = mswDispatcher(handlers, recordingFallback()) as never;
    const text = await request('https://echo.test/', {
      method: 'POST',
      body: '{"a":1}',
      headers: { 'content-type': 'application/json' },
      dispatcher,
    });
    expect(await text.body.json()).toEqual({ body: '{"a":1}', type: 'application/json' });
    async function* chunks() {
      yield Buffer.from('one,');
      yield Buffer.from('two');
    }
    const streamed = await request('https://echo.test/', {
      method: 'POST',
      body: Readable.from(chunks()),
      headers: ['content-type', 'text/plain'],
      dispatcher,
    });
    expect(await streamed.body.json()).toEqual({ body: 'one,two', type: 'text/plain' });
  });

  it('no handler: refused by default, nothing handed to the fallback; a passthrough() is handed on', async () => {
    const fallback = recordingFallback();
    const dispatcher = mswDispatcher(handlers, fallback) as never;
    await expect(request('https://other.test/x?y=1', { dispatcher })).rejects.toThrow(/Refused, not sent/);
    expect(fallback.seen).toEqual([]);
    await expect(request('https://pass.test/', { dispatcher })).rejects.toThrow(/fallback: not sent/);
    expect(fallback.seen).toEqual(['GET https://pass.test/']);
  });

  it("what the handlers leave alone (no handler with 'bypass' chosen, passthrough()) goes to the fallback; HttpResponse.error() is a network error", async () => {
    const fallback = recordingFallback();
    const dispatcher = mswDispatcher(handlers, fallback, { onUnhandledRequest: 'bypass' }) as never;
    await expect(request('https://pass.test/', { dispatcher })).rejects.toThrow(/fallback: not sent/);
    await expect(request('https://other.test/x?y=1', { dispatcher })).rejects.toThrow(/fallback: not sent/);
    async function* chunks() {
      yield 'read by the handlers, ';
      yield 'still sent';
    }
    await expect(request('https://other.test/', { method: 'POST', body: Readable.from(chunks()), dispatcher })).rejects.toThrow(
      /fallback: not sent/,
    );
    expect(fallback.seen).toEqual([
      'GET https://pass.test/',
      'GET https://other.test/x?y=1',
      'POST https://other.test/ read by the handlers, still sent',
    ]);
    await expect(request('https://error.test/', { dispatcher })).rejects.toThrow(/Network error/);
    expect(fallback.seen).toHaveLength(3);
  });

  it('a caller that gives up (its signal) gets its abort, mid-answer', async () => {
    const controller = new AbortController();
    const res = await request('https://big.test/', {
      dispatcher: mswDispatcher(handlers, recordingFallback()) as never,
      signal: controller.signal,
    });
    controller.abort(new Error('given up'));
    await expect(res.body.arrayBuffer()).rejects.toThrow(/given up|aborted/);
  });
});
