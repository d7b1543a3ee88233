import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { createTransport, PlainRequest, parseRetryAfter, redact, ZoneApiError } from '../src/index.js';

/** A fetch that answers from a script and records what it was sent (nothing is mocked: it is a real fetch signature). */
function scripted(...answers: Array<Response | Error | ((req: Request) => Promise<Response>)>) {
  const seen: Request[] = [];
  const fetch = async (input: Parameters<typeof globalThis.fetch>[0], init?: RequestInit) => {
    const req = new Request(input, init);
    seen.push(req);
    const next = answers.shift();
    if (!next) throw new Error('no more scripted answers');
    if (next instanceof Error) throw next;
    if (typeof next === 'function') return next(req);
    return next;
  };
  return { fetch: fetch as typeof globalThis.fetch, seen };
}

const fast = { baseDelayMs: 1, maxDelayMs: 2 };

describe('transport retries', () => {
  it('retries an idempotent GET on 503 and returns the later success', async () => {
    const { fetch, seen } = scripted(new Response('busy', { status: 503 }), new Response('{}', { status: 200 }));
    const t = createTransport({ fetch, retry: fast }, []);
    const res = await t('http://x.test/api/zone');
    expect(res.status).toBe(200);
    expect(seen).toHaveLength(2);
  });

  it('gives up after `retries` and returns the last response', async () => {
    const { fetch, seen } = scripted(...[1, 2, 3].map(() => new Response('', { status: 502 })));
    const res = await createTransport({ fetch, retry: { ...fast, retries: 2 } }, [])('http://x.test/a');
    expect(res.status).toBe(502);
    expect(seen).toHaveLength(3);
  });

  it('never retries a POST unless asked', async () => {
    const once = scripted(new Response('', { status: 503 }), new Response('', { status: 200 }));
    const res = await createTransport({ fetch: once.fetch, retry: fast }, [])('http://x.test/a', { method: 'POST', body: '{}' });
    expect(res.status).toBe(503);
    expect(once.seen).toHaveLength(1);

    const asked = scripted(new Response('', { status: 503 }), new Response('', { status: 200 }));
    const res2 = await createTransport({ fetch: asked.fetch, retry: { ...fast, retryNonIdempotent: true } }, [])('http://x.test/a', {
      method: 'POST',
      body: '{"a":1}',
    });
    expect(res2.status).toBe(200);
    expect(await asked.seen[1]?.text()).toBe('{"a":1}');
  });

  it('resends the same body on each retry of a DELETE', async () => {
    const { fetch, seen } = scripted(new Response('', { status: 429 }), new Response('', { status: 200 }));
    await createTransport({ fetch, retry: fast }, [])('http://x.test/api/zone', { method: 'DELETE', body: '{"zone":"z"}' });
    expect(await Promise.all(seen.map((r) => r.text()))).toEqual(['{"zone":"z"}', '{"zone":"z"}']);
  });

  it('sends the body of a PlainRequest (what openapi-fetch builds for the clients) on every attempt, signal and all', async () => {
    const { fetch, seen } = scripted(new Response('', { status: 503 }), new Response('', { status: 200 }));
    const headers = new Headers({ 'Content-Type': 'application/json' });
    const plain = new PlainRequest('http://x.test/api/zone', { method: 'delete', body: '{"zone":"z"}', headers });
    const res = await createTransport({ fetch, retry: fast }, [])(plain as unknown as Request);
    expect(res.status).toBe(200);
    expect(seen.map((r) => r.method)).toEqual(['DELETE', 'DELETE']);
    expect(await Promise.all(seen.map((r) => r.text()))).toEqual(['{"zone":"z"}', '{"zone":"z"}']);
    expect(seen.every((r) => r.headers.get('Content-Type') === 'application/json')).toBe(true);
  });

  it('a PlainRequest that cannot be built fails at once with a TypeError, not retried, without the secret', async () => {
    const { fetch, seen } = scripted(new Response('', { status: 200 }));
    const plain = new PlainRequest('http://x.test/a', { headers: { 'X-Key': 'K3Y\nbad' } });
    const err = await createTransport({ fetch: (i, init) => fetch(i, init), retry: fast }, ['K3Y'])(plain as unknown as Request).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(TypeError);
    expect(err).not.toBeInstanceOf(ZoneApiError);
    expect(String((err as Error).message)).not.toContain('K3Y');
    expect(seen).toHaveLength(0);
  });

  it('waits for Retry-After on 429', async () => {
    const delays: number[] = [];
    const { fetch } = scripted(new Response('', { status: 429, headers: { 'Retry-After': '1' } }), new Response('', { status: 200 }));
    const res = await createTransport({ fetch, retry: { ...fast, onRetry: (i) => delays.push(i.delayMs) } }, [])('http://x.test/a');
    expect(res.status).toBe(200);
    expect(delays).toEqual([1000]);
  });

  it('returns a 429 at once when Retry-After exceeds the cap', async () => {
    const { fetch, seen } = scripted(new Response('', { status: 429, headers: { 'Retry-After': '3600' } }));
    const res = await createTransport({ fetch, retry: fast }, [])('http://x.test/a');
    expect(res.status).toBe(429);
    expect(seen).toHaveLength(1);
  });

  it('does not retry a 400 or 404', async () => {
    const { fetch, seen } = scripted(new Response('', { status: 404 }));
    expect((await createTransport({ fetch, retry: fast }, [])('http://x.test/a')).status).toBe(404);
    expect(seen).toHaveLength(1);
  });

  it('retries network errors of idempotent methods, then throws a ZoneApiError', async () => {
    const { fetch, seen } = scripted(new TypeError('fetch failed'), new TypeError('fetch failed'));
    const err = await createTransport({ fetch, retry: { ...fast, retries: 1 } }, [])('http://x.test/api/status').catch((e) => e);
    expect(err).toBeInstanceOf(ZoneApiError);
    expect(err.kind).toBe('network');
    expect(err.attempts).toBe(2);
    expect(err.message).toBe('GET /api/status failed: fetch failed (after 2 attempts)');
    expect(seen).toHaveLength(2);
  });
});

describe('transport timeouts and aborts', () => {
  const hang = (req: Request) =>
    new Promise<Response>((_, reject) => req.signal.addEventListener('abort', () => reject(req.signal.reason)));

  it('times out one attempt and says so', async () => {
    const { fetch } = scripted(hang);
    const err = await createTransport({ fetch, timeoutMs: 30, retry: false }, [])('http://x.test/api/zone?customer=c').catch((e) => e);
    expect(err).toBeInstanceOf(ZoneApiError);
    expect(err.kind).toBe('timeout');
    expect(err.message).toBe('GET /api/zone timed out after 30 ms');
  });

  it('retries a timed-out GET', async () => {
    const { fetch, seen } = scripted(hang, new Response('ok', { status: 200 }));
    const res = await createTransport({ fetch, timeoutMs: 30, retry: fast }, [])('http://x.test/a');
    expect(res.status).toBe(200);
    expect(seen).toHaveLength(2);
  });

  it('stops at once when the caller aborts', async () => {
    const { fetch, seen } = scripted(hang, hang, hang);
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 20);
    const err = await createTransport({ fetch, timeoutMs: 5000, retry: fast }, [])('http://x.test/a', { signal: ac.signal }).catch(
      (e) => e,
    );
    expect(err.kind).toBe('aborted');
    expect(seen).toHaveLength(1);
  });

  it('with no timeout and no deadline, an abort by the caller still ends the call', async () => {
    const { fetch, seen } = scripted(hang, hang);
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 20);
    const err = await createTransport({ fetch, timeoutMs: 0, deadlineMs: 0, retry: fast }, [])('http://x.test/a', {
      signal: ac.signal,
    }).catch((e) => e);
    expect(err).toBeInstanceOf(ZoneApiError);
    expect(err.kind).toBe('aborted');
    expect(seen).toHaveLength(1);
  });

  it('the timer of an answered attempt keeps running while the body is read: a stalled body times out', async () => {
    const stalled = (req: Request) => {
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(new TextEncoder().encode('{"a":'));
          req.signal.addEventListener('abort', () => controller.error(req.signal.reason));
        },
      });
      return Promise.resolve(new Response(body, { status: 200 }));
    };
    const { fetch } = scripted(stalled);
    const res = await createTransport({ fetch, timeoutMs: 30, retry: false }, [])('http://x.test/a');
    const err = await res.text().catch((e: unknown) => e);
    expect(err).toMatchObject({ name: 'TimeoutError' });
  });
});

describe('secrets', () => {
  it('never puts a configured secret in an error message', async () => {
    const secret = 's3cr3t-token';
    const { fetch } = scripted(new Error(`connect failed for Authorization: Bearer ${secret} (${encodeURIComponent(secret)})`));
    const err = await createTransport({ fetch, retry: false }, [secret])('http://x.test/a').catch((e) => e);
    expect(err.message).not.toContain(secret);
    expect(err.message).toContain('[REDACTED]');
  });

  it('redacts a short secret only where it stands alone, not inside words', () => {
    expect(redact('token t was refused: not valid', ['t'])).toBe('token [REDACTED] was refused: not valid');
    expect(redact('key-pw;', ['pw'])).toBe('key-[REDACTED];');
  });

  it('redacts raw, URL-encoded and base64 forms', () => {
    const s = 'user:p@ss word';
    const text = `a ${s} b ${encodeURIComponent(s)} c ${Buffer.from(s).toString('base64')}`;
    expect(redact(text, [s])).toBe('a [REDACTED] b [REDACTED] c [REDACTED]');
  });
});

describe('parseRetryAfter', () => {
  it('reads seconds and HTTP dates', () => {
    expect(parseRetryAfter('7')).toBe(7000);
    expect(parseRetryAfter(new Date(10_000 + 5000).toUTCString(), 10_000)).toBe(5000);
    expect(parseRetryAfter('soon')).toBeUndefined();
    expect(parseRetryAfter(null)).toBeUndefined();
  });
});

describe('transport: the cause of a network failure, and the deadline of a whole call', () => {
  it('keeps the system error code (ECONNREFUSED) in the error, without the secret in the URL', async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const err = await createTransport({ retry: false }, ['S3CRET-T0KEN'])(`http://127.0.0.1:${port}/api/status?token=S3CRET-T0KEN`).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ZoneApiError);
    expect(err).toMatchObject({ kind: 'network', code: 'ECONNREFUSED', attempts: 1 });
    expect((err as Error).message).toBe('GET /api/status failed: fetch failed (ECONNREFUSED)');
    expect((err as Error).message).not.toContain('S3CRET');
    expect((err as Error).cause).toBeInstanceOf(Error);
    expect((err as Error).cause).toMatchObject({ code: 'ECONNREFUSED' });
  });

  it('a URL that fetch itself refuses (a blocked port, a scheme not http): a ZoneApiError with a code and a cause', async () => {
    // fetch refuses these before any connection is tried: no traffic leaves the process.
    for (const [url, code, reason] of [
      ['http://127.0.0.1:1/api/status', 'ERR_BAD_PORT', 'bad port'],
      ['ftp://127.0.0.1/api/status', 'ERR_UNKNOWN_SCHEME', 'unknown scheme'],
    ] as const) {
      const err = await createTransport({ retry: false }, [])(url).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ZoneApiError);
      expect(err).toMatchObject({ kind: 'network', code, attempts: 1 });
      expect((err as Error).message).toBe(`GET /api/status failed: fetch failed (${code})`);
      expect((err as Error).cause).toBeInstanceOf(Error);
      expect((err as Error).cause).toMatchObject({ message: reason, code });
    }
  });

  it('a connection reset is told apart from a refusal (ECONNRESET)', async () => {
    const server = createServer((req) => req.socket.destroy());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    try {
      const err = await createTransport({ retry: false }, [])(`http://127.0.0.1:${port}/api/status`).catch((e: unknown) => e);
      expect(err).toMatchObject({ kind: 'network' });
      expect(['ECONNRESET', 'UND_ERR_SOCKET']).toContain((err as ZoneApiError).code);
    } finally {
      server.close();
    }
  });

  it('no retry starts that cannot finish before the deadline: a Retry-After beyond it returns the answer at once', async () => {
    const { fetch, seen } = scripted(
      new Response('busy', { status: 503, headers: { 'Retry-After': '5' } }),
      new Response('{}', { status: 200 }),
    );
    const res = await createTransport({ fetch, deadlineMs: 1000, retry: fast }, [])('http://x.test/api/zone');
    expect(res.status).toBe(503);
    expect(seen).toHaveLength(1);
  });

  it('the last attempt is cut at the deadline, and the error says it was the deadline', async () => {
    const hang = (req: Request) =>
      new Promise<Response>((_, reject) => req.signal.addEventListener('abort', () => reject(req.signal.reason)));
    const { fetch, seen } = scripted(hang, hang, hang);
    const err = await createTransport(
      { fetch, timeoutMs: 60_000, deadlineMs: 150, retry: fast },
      [],
    )('http://x.test/api/zone').catch((e: unknown) => e);
    expect(err).toMatchObject({ kind: 'timeout' });
    expect((err as Error).message).toContain("the call's deadline of 150 ms passed");
    expect(seen.length).toBeGreaterThanOrEqual(1);
  });
});
