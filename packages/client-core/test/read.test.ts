import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTypedClient, MAX_RESPONSE_BYTES, ZoneApiError } from '../src/index.js';

// An answer's body read by the client, from a loopback server that misbehaves on purpose: cut short,
// dripped past the timeout, larger than the client reads, or a gzip bomb. Each ends in a ZoneApiError
// naming the method and path (once fetch's raw `TypeError: terminated` / `TimeoutError`), bounded in
// memory by maxResponseBytes.
type Paths = {
  '/api/thing': {
    parameters: { query?: never; header?: never; path?: never; cookie?: never };
    get: {
      parameters: { query?: { how?: string } };
      requestBody?: never;
      responses: { 200: { headers: Record<string, unknown>; content: { 'application/json': { v: string } } } };
    };
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
};
const ops = {
  getThing: { method: 'GET', path: '/api/thing', idempotent: true, changesState: false, success: { '200': ['application/json'] } },
} as const;

const MB = 1024 * 1024;
let server: Server;
let baseUrl: string;
const open = new Set<ServerResponse>();
const behaviours: Record<string, (res: ServerResponse) => void> = {
  cut: (res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
    res.write('{"v":"');
    setTimeout(() => res.socket?.destroy(), 50);
  },
  drip: (res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
    res.write('{"v":"');
    // A byte every 50 ms, for at most 2 s (the client gives up long before).
    let n = 0;
    const timer = setInterval(() => {
      if (++n > 40 || res.destroyed) return clearInterval(timer);
      res.write('a');
    }, 50);
  },
  large: (res) => {
    // 3 MB, chunked (no Content-Length), as JSON.
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(`{"v":"${'a'.repeat(3 * MB)}"}`);
  },
  announced: (res) => {
    const body = `{"v":"${'a'.repeat(3 * MB)}"}`;
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) });
    res.end(body);
  },
  bomb: (res) => {
    // 1 MB of space before a JSON value, times 64, gzipped to about 64 kB.
    const body = gzipSync(Buffer.concat([Buffer.alloc(64 * MB, 32), Buffer.from('{"v":"x"}')]));
    res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip', 'content-length': String(body.length) });
    res.end(body);
  },
  small: (res) => {
    const body = gzipSync('{"v":"fine"}');
    res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
    res.end(body);
  },
};
beforeAll(async () => {
  server = createServer((req, res) => {
    open.add(res);
    res.on('close', () => open.delete(res));
    const how = new URL(req.url ?? '/', 'http://x').searchParams.get('how') ?? 'small';
    behaviours[how]?.(res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});
afterAll(() => {
  for (const res of open) res.destroy();
  return new Promise<void>((resolve) => server.close(() => resolve()));
});

const client = (o: { timeoutMs?: number; maxResponseBytes?: number } = {}) =>
  createTypedClient<Paths, typeof ops>({ baseUrl, retry: false, ...o }, ops, { secrets: [] });
const failure = async (p: Promise<unknown>) => {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ZoneApiError);
  return err as ZoneApiError;
};

describe('an answer body that fails while it is read', () => {
  it('cut short: a ZoneApiError (network, with a code), not TypeError: terminated', async () => {
    const err = await failure(client().getThing({ params: { query: { how: 'cut' } } }));
    expect(err.kind).toBe('network');
    expect(err.message).toMatch(/^GET \/api\/thing failed: its answer was cut short \([A-Z_]+\)$/);
    expect(err.code).toMatch(/^[A-Z_]+$/);
  });

  it('dripped past the timeout: a ZoneApiError (timeout), not a raw TimeoutError', async () => {
    const started = Date.now();
    const err = await failure(client({ timeoutMs: 300 }).getThing({ params: { query: { how: 'drip' } } }));
    expect(err.kind).toBe('timeout');
    expect(err.message).toBe('GET /api/thing timed out while its answer was read');
    expect(Date.now() - started).toBeLessThan(1900);
  });

  it('the path-based methods too', async () => {
    const err = await failure(client().GET('/api/thing', { params: { query: { how: 'cut' } } }));
    expect(err.kind).toBe('network');
  });
});

describe('maxResponseBytes', () => {
  it('an answer larger than it, chunked or announced: a ZoneApiError naming the bound', async () => {
    for (const how of ['large', 'announced']) {
      const err = await failure(client({ maxResponseBytes: MB }).getThing({ params: { query: { how } } }));
      expect(err.kind).toBe('network');
      expect(err.code).toBe('ERR_RESPONSE_TOO_LARGE');
      expect(err.message).toBe(`GET /api/thing answered more than ${MB} bytes (maxResponseBytes)`);
    }
  });

  it('a gzip bomb (64 kB inflating to 64 MB) stops at the bound; the default bound is 64 MiB', async () => {
    expect(MAX_RESPONSE_BYTES).toBe(64 * MB);
    const err = await failure(client({ maxResponseBytes: MB }).getThing({ params: { query: { how: 'bomb' } } }));
    expect(err.code).toBe('ERR_RESPONSE_TOO_LARGE');
  });

  it('within it, compressed or not, the answer reads as before; 0 turns the bound off', async () => {
    expect((await client({ maxResponseBytes: MB }).getThing({ params: { query: { how: 'small' } } })).data).toEqual({ v: 'fine' });
    const big = await client({ maxResponseBytes: 0 }).getThing({ params: { query: { how: 'large' } } });
    expect(big.data?.v).toHaveLength(3 * MB);
  });
});
