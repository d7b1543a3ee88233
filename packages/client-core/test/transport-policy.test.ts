import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createTransport, PlainRequest, parseRetryAfter, ZoneApiError } from '../src/index.js';

// The transport's retry policy, deadline, aborts and errors, as a caller sees them: what goes out (a
// recording fetch; nothing leaves the process, or only to a loopback server), what comes back, what
// `onRetry` is told. Full jitter draws from Math.random: where a delay is asserted, the draw is fixed.

interface Sent {
  url: string;
  method: string;
  headers: Headers;
  body: string | undefined;
  signal: AbortSignal | undefined;
}
type Answer = Response | ((sent: Sent) => Response | Promise<Response>);

/** A fetch that answers from a script and records each request it was handed (a Request or a URL and init). */
function scripted(...answers: Answer[]) {
  const sent: Sent[] = [];
  const fetch = async (input: Parameters<typeof globalThis.fetch>[0], init?: RequestInit) => {
    const req = input instanceof Request ? input : undefined;
    const body = init?.body !== undefined ? String(init.body) : req?.body ? await req.text() : undefined;
    const s: Sent = {
      url: req ? req.url : String(input),
      method: init?.method ?? req?.method ?? 'GET',
      headers: new Headers(init?.headers ?? req?.headers),
      body,
      signal: init?.signal ?? req?.signal,
    };
    sent.push(s);
    const next = answers.shift();
    if (!next) throw new Error('no more scripted answers');
    return typeof next === 'function' ? next(s) : next;
  };
  return { fetch: fetch as typeof globalThis.fetch, sent };
}

/** An answer that never comes: the attempt ends only when its signal aborts (as fetch does, at once if already aborted). */
const hang = (s: Sent) =>
  new Promise<Response>((_, reject) => {
    if (s.signal?.aborted) reject(s.signal.reason);
    s.signal?.addEventListener('abort', () => reject(s.signal?.reason));
  });
/** An answer after `ms`, unless the attempt's signal aborts first (as fetch does). */
const after = (ms: number, make: () => Response) => (s: Sent) =>
  new Promise<Response>((resolve, reject) => {
    const timer = setTimeout(() => resolve(make()), ms);
    s.signal?.addEventListener('abort', () => {
      clearTimeout(timer);
      reject(s.signal?.reason);
    });
  });
/** A failure after `ms` (fetch's TypeError). */
const failAfter = (ms: number) => () => new Promise<Response>((_, reject) => setTimeout(() => reject(new TypeError('fetch failed')), ms));
const status = (n: number, headers: Record<string, string> = {}) => new Response(null, { status: n, headers });
const fast = { baseDelayMs: 1, maxDelayMs: 2 };
const plain = (url: string, init: RequestInit = {}) => new PlainRequest(url, init) as unknown as Request;
const fails = (p: Promise<unknown>) =>
  p.then(
    () => {
      throw new Error('the call did not fail');
    },
    (e: unknown) => e as ZoneApiError,
  );

afterEach(() => {
  vi.restoreAllMocks();
});

describe('which methods are retried', () => {
  it.each(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE', 'TRACE'])('%s, idempotent: retried on 503', async (method) => {
    const { fetch, sent } = scripted(status(503), status(200));
    const res = await createTransport({ fetch, retry: fast }, [])(plain('http://x.test/a', { method }));
    expect(res.status).toBe(200);
    expect(sent.map((s) => s.method)).toEqual([method, method]);
  });

  it.each(['POST', 'PATCH'])('%s: sent once', async (method) => {
    const { fetch, sent } = scripted(status(503), status(200));
    const res = await createTransport({ fetch, retry: fast }, [])(plain('http://x.test/a', { method, body: '{}' }));
    expect(res.status).toBe(503);
    expect(sent).toHaveLength(1);
  });

  it('a PlainRequest without a method is a GET (and retried); a lower-case method is upper-cased', async () => {
    expect(new PlainRequest('http://x.test/a', {}).method).toBe('GET');
    expect(new PlainRequest('http://x.test/a', { method: 'put' }).method).toBe('PUT');
    const { fetch, sent } = scripted(status(503), status(200));
    expect((await createTransport({ fetch, retry: fast }, [])(plain('http://x.test/a'))).status).toBe(200);
    expect(sent).toHaveLength(2);
  });

  it('retries: 0 sends once whatever the method', async () => {
    const { fetch, sent } = scripted(status(503), status(200));
    expect((await createTransport({ fetch, retry: { retries: 0 } }, [])('http://x.test/a')).status).toBe(503);
    expect(sent).toHaveLength(1);
  });
});

describe('the init given with a request is not lost', () => {
  it('a PlainRequest with an init: the init applies', async () => {
    const { fetch, sent } = scripted(status(200));
    await createTransport({ fetch, retry: false }, [])(plain('http://x.test/a', { method: 'PUT' }), { headers: { 'X-Added': '1' } });
    expect(sent[0]?.method).toBe('PUT');
    expect(sent[0]?.headers.get('X-Added')).toBe('1');
  });

  it('a Request with an init: the init applies', async () => {
    const { fetch, sent } = scripted(status(200));
    await createTransport({ fetch, retry: false }, [])(new Request('http://x.test/a'), { headers: { 'X-Added': '1' } });
    expect(sent[0]?.headers.get('X-Added')).toBe('1');
  });
});

describe('backoff', () => {
  it('full jitter over an exponential backoff capped at maxDelayMs', async () => {
    vi.spyOn(Math, 'random').mockReturnValue(0.5);
    const delays: number[] = [];
    const { fetch } = scripted(status(503), status(503), status(503), status(200));
    const retry = { retries: 3, baseDelayMs: 4, maxDelayMs: 10, onRetry: (i: { delayMs: number }) => delays.push(i.delayMs) };
    expect((await createTransport({ fetch, retry }, [])('http://x.test/a')).status).toBe(200);
    // Half of 4, 8 and min(10, 16).
    expect(delays).toEqual([2, 4, 5]);
  });

  it('the defaults: 2 retries, a base of 200 ms', async () => {
    vi.spyOn(Math, 'random').mockReturnValue(0.5);
    const delays: number[] = [];
    const { fetch, sent } = scripted(status(503), status(503), status(503), status(200));
    const res = await createTransport({ fetch, retry: { onRetry: (i) => delays.push(i.delayMs) } }, [])('http://x.test/a');
    expect(res.status).toBe(503);
    expect(sent).toHaveLength(3);
    expect(delays).toEqual([100, 200]);
  });

  it('the default cap of one delay is 5 s', async () => {
    vi.spyOn(Math, 'random').mockReturnValue(0.001);
    const delays: number[] = [];
    const { fetch } = scripted(status(503), status(200));
    await createTransport({ fetch, retry: { baseDelayMs: 1_000_000, onRetry: (i) => delays.push(i.delayMs) } }, [])('http://x.test/a');
    expect(delays).toEqual([5]);
  });

  it('onRetry is told the attempt, the delay, the reason, the method and the path (no query)', async () => {
    vi.spyOn(Math, 'random').mockReturnValue(0.5);
    const infos: unknown[] = [];
    const withCode = new TypeError('fetch failed', { cause: Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }) });
    const { fetch } = scripted(
      status(503),
      hang,
      () => Promise.reject(withCode),
      () => Promise.reject(new TypeError('fetch failed')),
      status(200),
    );
    const retry = { retries: 4, baseDelayMs: 2, maxDelayMs: 2, onRetry: (i: unknown) => infos.push(i) };
    const res = await createTransport({ fetch, timeoutMs: 50, retry }, [])('http://x.test/api/zone?customer=c1');
    expect(res.status).toBe(200);
    const common = { delayMs: 1, method: 'GET', path: '/api/zone' };
    expect(infos).toEqual([
      { ...common, attempt: 1, reason: 'status 503' },
      { ...common, attempt: 2, reason: 'timeout' },
      { ...common, attempt: 3, reason: 'network error (ECONNRESET)' },
      { ...common, attempt: 4, reason: 'network error' },
    ]);
  });
});

describe('Retry-After', () => {
  it('a Retry-After equal to maxRetryAfterMs is waited for', async () => {
    const delays: number[] = [];
    const { fetch, sent } = scripted(status(429, { 'Retry-After': '1' }), status(200));
    const retry = { maxRetryAfterMs: 1000, onRetry: (i: { delayMs: number }) => delays.push(i.delayMs) };
    expect((await createTransport({ fetch, retry }, [])('http://x.test/a')).status).toBe(200);
    expect(delays).toEqual([1000]);
    expect(sent).toHaveLength(2);
  });

  it('a Retry-After above the default cap (60 s) is not waited for, even with no deadline: the 429 is the answer', async () => {
    const { fetch, sent } = scripted(status(429, { 'Retry-After': '61' }), status(200));
    const res = await createTransport({ fetch, deadlineMs: 0, retry: fast }, [])('http://x.test/a');
    expect(res.status).toBe(429);
    expect(res.headers.get('Retry-After')).toBe('61');
    expect(sent).toHaveLength(1);
  });

  it("only 429 and 503 wait for Retry-After: a 502's is ignored and the backoff applies", async () => {
    const delays: number[] = [];
    const { fetch, sent } = scripted(status(502, { 'Retry-After': '3600' }), status(200));
    const res = await createTransport({ fetch, retry: { ...fast, onRetry: (i) => delays.push(i.delayMs) } }, [])('http://x.test/a');
    expect(res.status).toBe(200);
    expect(sent).toHaveLength(2);
    expect(delays[0]).toBeLessThanOrEqual(2);
  });

  it('parseRetryAfter: delta-seconds of any length, spaces around, and nothing from a malformed value', () => {
    expect(parseRetryAfter('120')).toBe(120_000);
    expect(parseRetryAfter(' 7 ')).toBe(7000);
    expect(parseRetryAfter('0')).toBe(0);
    expect(parseRetryAfter('5 seconds')).toBeUndefined();
    expect(parseRetryAfter('   ')).toBeUndefined();
    // Not delta-seconds: whatever it is read as, never a negative wait.
    expect(parseRetryAfter('-5')).not.toBeLessThan(0);
  });
});

describe("a call's deadline", () => {
  it('deadlineMs 0: no deadline, retries go on', async () => {
    const { fetch, sent } = scripted(status(503), status(503), status(200));
    expect((await createTransport({ fetch, deadlineMs: 0, retry: fast }, [])('http://x.test/a')).status).toBe(200);
    expect(sent).toHaveLength(3);
  });

  it('a Retry-After longer than what is left of the deadline is not waited for', async () => {
    // 1.2 s of the 3 s are gone when the 503 asks for 2 s more.
    const { fetch, sent } = scripted(
      after(1200, () => status(503, { 'Retry-After': '2' })),
      status(200),
    );
    const res = await createTransport({ fetch, deadlineMs: 3000, retry: fast }, [])('http://x.test/a');
    expect(res.status).toBe(503);
    expect(sent).toHaveLength(1);
  });

  it('a later attempt gets only what is left of the deadline', async () => {
    // The first attempt fails after 300 ms of the 600; the second would answer after 500 ms more.
    const { fetch, sent } = scripted(
      failAfter(300),
      after(500, () => status(200)),
    );
    const err = await fails(createTransport({ fetch, timeoutMs: 60_000, deadlineMs: 600, retry: fast }, [])('http://x.test/a'));
    expect(err).toBeInstanceOf(ZoneApiError);
    expect(err).toMatchObject({ kind: 'timeout' });
    expect(err.message).toContain("the call's deadline of 600 ms passed");
    expect(sent.length).toBeGreaterThanOrEqual(1);
  });

  it('no retry after a network error when the backoff would pass the deadline', async () => {
    vi.spyOn(Math, 'random').mockReturnValue(0.5);
    const { fetch, sent } = scripted(() => Promise.reject(new TypeError('fetch failed')), status(200));
    const err = await fails(
      createTransport({ fetch, deadlineMs: 1000, retry: { baseDelayMs: 5000, maxDelayMs: 5000 } }, [])('http://x.test/a'),
    );
    expect(err).toMatchObject({ kind: 'network', attempts: 1, message: 'GET /a failed: fetch failed' });
    expect(sent).toHaveLength(1);
  });

  it('timeoutMs 0 with a deadline: the attempt has the whole deadline', async () => {
    const { fetch } = scripted(after(30, () => status(200)));
    expect((await createTransport({ fetch, timeoutMs: 0, deadlineMs: 10_000, retry: false }, [])('http://x.test/a')).status).toBe(200);
  });

  it('neither timeout nor deadline: an answer that takes its time is waited for, and a failure is still a ZoneApiError', async () => {
    const { fetch } = scripted(
      after(30, () => status(200)),
      () => Promise.reject(new TypeError('fetch failed')),
    );
    const t = createTransport({ fetch, timeoutMs: 0, deadlineMs: 0, retry: false }, []);
    expect((await t('http://x.test/a')).status).toBe(200);
    const err = await fails(t('http://x.test/a'));
    expect(err).toBeInstanceOf(ZoneApiError);
    expect(err).toMatchObject({ kind: 'network', message: 'GET /a failed: fetch failed' });
  });
});

describe('aborts', () => {
  it("a caller's abort while waiting for a Retry-After ends the wait: kind aborted, nothing more sent", async () => {
    const { fetch, sent } = scripted(status(503, { 'Retry-After': '1' }), status(200));
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 50);
    const err = await fails(createTransport({ fetch, retry: fast }, [])('http://x.test/api/zone?x=1', { signal: ac.signal }));
    expect(err).toBeInstanceOf(ZoneApiError);
    expect(err).toMatchObject({ kind: 'aborted', message: 'GET /api/zone was aborted', attempts: 1 });
    expect(sent).toHaveLength(1);
  });

  it('an abort before the wait starts (in onRetry): no further attempt', async () => {
    const { fetch, sent } = scripted(status(503), status(200));
    const ac = new AbortController();
    const retry = { ...fast, onRetry: () => ac.abort() };
    const err = await fails(createTransport({ fetch, retry }, [])('http://x.test/a', { signal: ac.signal }));
    expect(err).toMatchObject({ kind: 'aborted', message: 'GET /a was aborted' });
    expect(sent).toHaveLength(1);
  });

  it('an abort during an attempt, with retries off: kind aborted, not timeout, at once under a long timeout', async () => {
    const { fetch } = scripted(hang);
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 20);
    const err = await fails(
      createTransport({ fetch, timeoutMs: 60_000, deadlineMs: 0, retry: false }, [])('http://x.test/a', { signal: ac.signal }),
    );
    expect(err).toBeInstanceOf(ZoneApiError);
    expect(err).toMatchObject({ kind: 'aborted', message: 'GET /a was aborted', attempts: 1 });
  });

  it("a PlainRequest's own signal is followed", async () => {
    const { fetch } = scripted(hang);
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 20);
    const err = await fails(
      createTransport({ fetch, timeoutMs: 60_000, retry: false }, [])(plain('http://x.test/a', { signal: ac.signal })),
    );
    expect(err).toMatchObject({ kind: 'aborted' });
  });

  it('a signal already aborted: nothing reaches the server', async () => {
    let requests = 0;
    const server = createServer((_req, res) => {
      requests++;
      res.end('{}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/status`;
    try {
      for (const options of [{ retry: fast }, { timeoutMs: 0, deadlineMs: 0, retry: fast }]) {
        const err = await fails(createTransport(options, [])(url, { signal: AbortSignal.abort() }));
        expect(err).toMatchObject({ kind: 'aborted', attempts: 1 });
      }
      // The server does answer a call that is not aborted.
      expect((await createTransport({ retry: false }, [])(url)).status).toBe(200);
      expect(requests).toBe(1);
    } finally {
      await new Promise((r) => server.close(r));
    }
  });
});

describe('timeouts', () => {
  it('a PlainRequest attempt is timed out too', async () => {
    const { fetch } = scripted(hang);
    const err = await fails(createTransport({ fetch, timeoutMs: 30, retry: false }, [])(plain('http://x.test/a')));
    expect(err).toMatchObject({ kind: 'timeout', message: 'GET /a timed out after 30 ms' });
  });

  it('a redirect that hangs is timed out by the same limit', async () => {
    const { fetch, sent } = scripted(status(302, { Location: '/next' }), hang);
    const err = await fails(createTransport({ fetch, timeoutMs: 50, retry: false }, [])(plain('http://x.test/a')));
    expect(err).toMatchObject({ kind: 'timeout' });
    expect(sent.map((s) => s.url)).toEqual(['http://x.test/a', 'http://x.test/next']);
  });

  it('a body that stalls fails with a TimeoutError that says so', async () => {
    const stalled = (s: Sent) => {
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(new TextEncoder().encode('{"a":'));
          s.signal?.addEventListener('abort', () => controller.error(s.signal?.reason));
        },
      });
      return new Response(body, { status: 200 });
    };
    const { fetch } = scripted(stalled);
    const res = await createTransport({ fetch, timeoutMs: 30, retry: false }, [])('http://x.test/a');
    expect(await res.text().catch((e: unknown) => e)).toMatchObject({ name: 'TimeoutError', message: 'The operation timed out' });
  });
});

describe('network errors', () => {
  it('a code is passed on only if it looks like one', async () => {
    for (const code of ['ECONNRESET and more', 'x ECONNRESET', 'E', 'econnreset']) {
      const cause = Object.assign(new Error('reset'), { code });
      const { fetch } = scripted(() => Promise.reject(new TypeError('fetch failed', { cause })));
      const err = await fails(createTransport({ fetch, retry: false }, [])('http://x.test/a'));
      expect(err, code).toMatchObject({ kind: 'network', message: 'GET /a failed: fetch failed', code: undefined });
      expect(Object.hasOwn(err.cause as object, 'code'), code).toBe(false);
    }
    const cause = Object.assign(new Error('reset'), { code: 'UND_ERR_SOCKET' });
    const { fetch } = scripted(() => Promise.reject(new TypeError('fetch failed', { cause })));
    const err = await fails(createTransport({ fetch, retry: false }, [])('http://x.test/a'));
    expect(err).toMatchObject({ code: 'UND_ERR_SOCKET', message: 'GET /a failed: fetch failed (UND_ERR_SOCKET)' });
  });

  it("the cause keeps the failure's name and message; something thrown that is not an Error becomes one", async () => {
    const { fetch } = scripted(
      () => Promise.reject(new TypeError('fetch failed')),
      () => Promise.reject('boom'),
      () => Promise.reject(null),
    );
    const t = createTransport({ fetch, retry: false }, []);
    const first = await fails(t('http://x.test/a'));
    expect(first.cause).toBeInstanceOf(Error);
    expect(first.cause).toMatchObject({ name: 'TypeError', message: 'fetch failed' });
    const second = await fails(t('http://x.test/a'));
    expect(second).toMatchObject({ kind: 'network', message: 'GET /a failed: boom' });
    expect(second.cause).toMatchObject({ name: 'Error', message: 'boom' });
    const third = await fails(t('http://x.test/a'));
    expect(third).toBeInstanceOf(ZoneApiError);
    expect(third).toMatchObject({ kind: 'network', message: 'GET /a failed: null' });
  });

  it('a PlainRequest that cannot be built fails with the TypeError a Request would give, redacted', async () => {
    const init = { headers: { 'X-Key': 'K3Y\nbad' } };
    let expected = '';
    try {
      new Request('http://x.test/a', init);
    } catch (e) {
      expected = (e as Error).message.replace('K3Y', '[REDACTED]');
    }
    expect(expected).toContain('[REDACTED]');
    const err = await fails(createTransport({ fetch: globalThis.fetch, retry: false }, ['K3Y'])(plain('http://x.test/a', init)));
    expect(err).toBeInstanceOf(TypeError);
    expect(err.message).toBe(expected);
  });

  it('a ZoneApiError is named, and carries a cause only when there is one', async () => {
    const { fetch } = scripted(hang, () => Promise.reject(new TypeError('fetch failed')));
    const t = createTransport({ fetch, timeoutMs: 20, retry: false }, []);
    const timeout = await fails(t('http://x.test/a'));
    expect(timeout.name).toBe('ZoneApiError');
    expect(String(timeout)).toBe('ZoneApiError: GET /a timed out after 20 ms');
    expect(Object.hasOwn(timeout, 'cause')).toBe(false);
    const network = await fails(t('http://x.test/a'));
    expect(Object.hasOwn(network, 'cause')).toBe(true);
  });
});
