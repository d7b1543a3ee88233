import { describe, expect, it } from 'vitest';
import { createTypedClient, querySerializer, ZoneApiError } from '../src/index.js';

type Paths = {
  '/api/thing': {
    parameters: { query?: never; header?: never; path?: never; cookie?: never };
    get: {
      parameters: { query?: { plan?: { a: number }; 'status.code'?: number; tag?: string[] } };
      requestBody?: never;
      responses: {
        200: { headers: Record<string, unknown>; content: { 'text/plain': string } };
        400: { headers: Record<string, unknown>; content: { 'text/plain': string } };
      };
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
type AllPaths = Paths & { '/api/pm_thing': Paths['/api/thing'] };
const ops = {
  getThing: { method: 'GET', path: '/api/thing', idempotent: true, changesState: false, success: { '200': ['text/plain'] } },
  rotateThing: { method: 'GET', path: '/api/thing', idempotent: false, changesState: true, success: { '200': ['text/plain'] } },
  getBranded: { method: 'GET', path: '/api/pm_thing', idempotent: true, changesState: false, brandPrefix: 'pm', success: { '200': [] } },
} as const;
const parts = (secrets: string[] = []) => ({ secrets });

function recorder(response: () => Response) {
  const seen: Request[] = [];
  const fetch = (async (input: Parameters<typeof globalThis.fetch>[0], init?: RequestInit) => {
    seen.push(new Request(input, init));
    return response();
  }) as typeof globalThis.fetch;
  return { fetch, seen };
}

describe('createTypedClient', () => {
  it('exposes one method per operationId that calls its path', async () => {
    const r = recorder(() => new Response('hello', { headers: { 'Content-Type': 'text/plain' } }));
    const client = createTypedClient<AllPaths, typeof ops>({ baseUrl: 'http://x.test/', fetch: r.fetch }, ops, parts());
    const { data, response } = await client.getThing();
    expect(data).toBe('hello');
    expect(response.headers.get('Content-Type')).toBe('text/plain');
    expect(r.seen[0]?.url).toBe('http://x.test/api/thing');
  });

  it('returns a text error as a truthy ResponseError, redacted', async () => {
    const r = recorder(() => new Response('No proxy for key K3Y', { status: 400, headers: { 'Content-Type': 'text/html' } }));
    const client = createTypedClient<AllPaths, typeof ops>({ baseUrl: 'http://x.test', fetch: r.fetch }, ops, parts(['K3Y']));
    const { data, error, response } = await client.getThing();
    expect(data).toBeUndefined();
    expect(response.status).toBe(400);
    expect(error).toEqual({
      kind: 'text',
      status: 400,
      contentType: 'text/html',
      error: 'No proxy for key [REDACTED]',
      message: 'GET /api/thing answered 400: No proxy for key [REDACTED]',
    });
  });

  describe('every error carries a one-line message', () => {
    const call = async (response: () => Response, secrets: string[] = []) => {
      const r = recorder(response);
      const client = createTypedClient<AllPaths, typeof ops>({ baseUrl: 'http://x.test', fetch: r.fetch }, ops, parts(secrets));
      return (await client.getThing()).error;
    };
    const json =
      (body: unknown, status = 400) =>
      () =>
        Response.json(body, { status });

    it("the account API's error, with the fields at fault, redacted, and the body still as sent", async () => {
      const body = { error: 'Invalid zone S3CRET', details: [{ field: 'body.zone', reason: 'unknown' }] };
      const error = await call(json(body), ['S3CRET']);
      expect(error?.message).toBe('GET /api/thing answered 400: Invalid zone [REDACTED] (body.zone: unknown)');
      // Not enumerable: the error serializes and compares as the server's body.
      expect(JSON.parse(JSON.stringify(error))).toEqual({ ...body, error: 'Invalid zone [REDACTED]' });
      expect(Object.keys(error ?? {})).toEqual(['error', 'details']);
    });

    it("the manager's errors list, each with its field", async () => {
      const error = await call(json({ errors: [{ msg: 'port 24000 in use', field: 'port' }, { msg: 'no zone' }] }));
      expect(error?.message).toBe('GET /api/thing answered 400: port: port 24000 in use; no zone');
    });

    it("a body's own message is kept; any other object is quoted", async () => {
      expect((await call(json({ message: 'Their own words' }, 503)))?.message).toBe('Their own words');
      expect((await call(json({ code: 7 }, 500)))?.message).toBe('GET /api/thing answered 500: {"code":7}');
    });

    it('a JSON body that is not an object, an empty answer and a long page', async () => {
      expect(await call(json([1, 2], 500))).toMatchObject({ kind: 'text', message: 'GET /api/thing answered 500: [1,2]' });
      expect((await call(() => new Response(null, { status: 502 })))?.message).toBe('GET /api/thing answered 502 with no body');
      const page = `<html>${'x'.repeat(5000)}</html>`;
      const long = await call(() => new Response(page, { status: 404, headers: { 'Content-Type': 'text/html' } }));
      expect(long?.error).toBe(page);
      expect(long?.message.length).toBeLessThan(600);
      expect(long?.message.endsWith('…')).toBe(true);
    });
  });

  it('an error status with no body is a truthy ResponseError, with or without Content-Length', async () => {
    for (const make of [
      () => new Response(null, { status: 400 }),
      () => new Response('', { status: 400, headers: { 'Content-Length': '0' } }),
    ]) {
      const r = recorder(make);
      const { error, response } = await createTypedClient<AllPaths, typeof ops>(
        { baseUrl: 'http://x.test', fetch: r.fetch },
        ops,
        parts(),
      ).getThing();
      expect(response.status).toBe(400);
      expect(error).toMatchObject({ kind: 'empty', status: 400, contentType: response.headers.get('Content-Type') });
      expect(error ? 'failed' : 'ok').toBe('failed');
    }
  });

  it('a 2xx in a media type the operation does not declare is an error, not data; the real Content-Type stays on the response', async () => {
    const page = '<!doctype html><html><body>Proxy Manager</body></html>';
    const r = recorder(() => new Response(page, { status: 200, headers: { 'Content-Type': 'text/html; charset=utf-8' } }));
    const { data, error, response } = await createTypedClient<AllPaths, typeof ops>(
      { baseUrl: 'http://x.test', fetch: r.fetch },
      ops,
      parts(),
    ).getThing();
    expect(data).toBeUndefined();
    expect(error).toMatchObject({ kind: 'media-type', status: 200, contentType: 'text/html; charset=utf-8' });
    expect(error?.error).toContain('does not declare');
    expect(response.headers.get('Content-Type')).toBe('text/html; charset=utf-8');
  });

  it('retries what the spec marks safe to repeat and sends the rest once', async () => {
    const r = recorder(() => new Response('busy', { status: 503, headers: { 'Content-Type': 'text/plain' } }));
    const client = createTypedClient<AllPaths, typeof ops>(
      { baseUrl: 'http://x.test', fetch: r.fetch, retry: { retries: 2, baseDelayMs: 1 } },
      ops,
      parts(),
    );
    await client.getThing();
    expect(r.seen).toHaveLength(3);
    r.seen.length = 0;
    await client.rotateThing();
    expect(r.seen).toHaveLength(1);
  });

  it('replaces the brand prefix of a branded path', async () => {
    const r = recorder(() => new Response(null, { status: 200 }));
    await createTypedClient<AllPaths, typeof ops>({ baseUrl: 'http://x.test', fetch: r.fetch }, ops, {
      ...parts(),
      brand: 'lpm',
    }).getBranded();
    await createTypedClient<AllPaths, typeof ops>({ baseUrl: 'http://x.test', fetch: r.fetch }, ops, parts()).getBranded();
    expect(r.seen.map((q) => new URL(q.url).pathname)).toEqual(['/api/lpm_thing', '/api/pm_thing']);
  });

  it('sends the credential headers of each path, only where given', async () => {
    const r = recorder(() => new Response(null, { status: 204 }));
    const client = createTypedClient<AllPaths, typeof ops>({ baseUrl: 'http://x.test', fetch: r.fetch }, ops, {
      auth: (path) => (path === '/api/pm_thing' ? { Authorization: 'tok' } : undefined),
      secrets: [],
      brand: 'lpm',
    });
    await client.getThing();
    await client.getBranded();
    await client.GET('/api/pm_thing');
    expect(r.seen.map((q) => q.headers.get('Authorization'))).toEqual([null, 'tok', 'tok']);
  });

  it('a header the caller sets wins over the credential; the credential still fills a gap', async () => {
    const r = recorder(() => new Response(null, { status: 204 }));
    const auth = () => ({ Authorization: 'tok' });
    const client = createTypedClient<AllPaths, typeof ops>({ baseUrl: 'http://x.test', fetch: r.fetch }, ops, { auth, secrets: [] });
    await client.getThing({ headers: { authorization: 'mine' } });
    await client.getThing({ headers: { 'X-Other': '1' } });
    const withOwn = createTypedClient<AllPaths, typeof ops>(
      { baseUrl: 'http://x.test', fetch: r.fetch, headers: { AUTHORIZATION: 'client-wide' } },
      ops,
      { auth, secrets: [] },
    );
    await withOwn.getThing();
    expect(r.seen.map((q) => [q.headers.get('Authorization'), q.headers.get('X-Other')])).toEqual([
      ['mine', null],
      ['tok', '1'],
      ['client-wide', null],
    ]);
  });
});

describe('middleware a user adds', () => {
  it('runs on operations sent once and on those that may be retried, and stops after eject', async () => {
    const r = recorder(() => new Response('hello', { headers: { 'Content-Type': 'text/plain' } }));
    const client = createTypedClient<AllPaths, typeof ops>({ baseUrl: 'http://x.test', fetch: r.fetch }, ops, parts());
    const seen: string[] = [];
    const mw = {
      onRequest({ request }: { request: Request }) {
        request.headers.set('X-Seen', '1');
        return request;
      },
      async onResponse({ response }: { response: Response }) {
        // The text body is already a string for openapi-fetch's parse when a user's middleware sees it.
        seen.push(await response.clone().text());
        return undefined;
      },
    };
    client.use(mw);
    await client.getThing();
    await client.rotateThing();
    const { data } = await client.GET('/api/thing');
    client.eject(mw);
    await client.getThing();
    await client.rotateThing();
    expect(r.seen.map((q) => q.headers.get('X-Seen'))).toEqual(['1', '1', '1', null, null]);
    expect(seen).toEqual(['"hello"', '"hello"', '"hello"']);
    expect(data).toBe('hello');
  });
});

describe('querySerializer', () => {
  it('JSON-encodes objects, repeats arrays and keeps dotted names', () => {
    const q = querySerializer({
      plan: { ips_type: 'shared', geo_db: { maxmind: true } },
      'status.code': 200,
      tag: ['a', 'b'],
      skip: undefined,
    });
    const p = new URLSearchParams(q);
    expect(JSON.parse(p.get('plan') ?? '')).toEqual({ ips_type: 'shared', geo_db: { maxmind: true } });
    expect(p.get('status.code')).toBe('200');
    expect(p.getAll('tag')).toEqual(['a', 'b']);
    expect(p.has('skip')).toBe(false);
  });
});

describe('answers that do not parse', () => {
  it('a 2xx JSON body that is not JSON throws a ZoneApiError (kind parse) that does not quote the body', async () => {
    const r = recorder(() => new Response('{"token":"sandbox-token-0001"', { headers: { 'Content-Type': 'application/json' } }));
    const ops2 = {
      getThing: { method: 'GET', path: '/api/thing', idempotent: true, changesState: false, success: { '200': ['application/json'] } },
    } as const;
    const err = await createTypedClient<AllPaths, typeof ops2>(
      { baseUrl: 'http://x.test', fetch: r.fetch },
      ops2,
      parts(['sandbox-token-0001']),
    )
      .getThing()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ZoneApiError);
    expect(err).toMatchObject({ kind: 'parse', method: 'GET', path: '/api/thing' });
    expect(String((err as Error).message)).not.toContain('sandbox-token-0001');
    expect(String((err as Error).message)).not.toContain('{"token"');
  });
});

describe('credentials never reach the caller in clear', () => {
  it('a JSON error body is redacted after parsing: JSON escapes do not hide a secret', async () => {
    const secret = 'sandbox-token/0001';
    // `\u0073` is "s" and `\/` is "/": the raw text holds neither the secret nor its encoded forms.
    const raw = '{"error":"bad token \\u0073andbox-token\\/0001","details":[{"field":"\\u0073andbox-token\\/0001","reason":"x"}]}';
    expect(raw).not.toContain(secret);
    expect(JSON.parse(raw).error).toContain(secret);
    const r = recorder(() => new Response(raw, { status: 401, headers: { 'Content-Type': 'application/json' } }));
    const client = createTypedClient<AllPaths, typeof ops>({ baseUrl: 'http://x.test', fetch: r.fetch }, ops, parts([secret]));
    const { error } = await client.getThing();
    expect(JSON.stringify(error)).not.toContain('sandbox-token');
    expect(error).toEqual({ error: 'bad token [REDACTED]', details: [{ field: '[REDACTED]', reason: 'x' }] });
  });

  it('a __proto__ key of a JSON error body stays a key of the redacted body', async () => {
    const raw = '{"error":"x","__proto__":{"token":"K3Y"}}';
    const r = recorder(() => new Response(raw, { status: 400, headers: { 'Content-Type': 'application/json' } }));
    const client = createTypedClient<AllPaths, typeof ops>({ baseUrl: 'http://x.test', fetch: r.fetch }, ops, parts(['K3Y']));
    const { error } = await client.getThing();
    expect(Object.hasOwn(error as object, '__proto__')).toBe(true);
    expect(JSON.stringify(error)).toBe('{"error":"x","__proto__":{"token":"[REDACTED]"}}');
  });

  it.each([
    ['a trailing newline', 'sandbox-token-0001\n'],
    ['a CR/LF inside', 'sandbox\r\nX-Injected: 1'],
    ['a NUL', 'sandbox\u0000token'],
  ])('a credential with %s is refused when the client is created, without quoting it', (_, secret) => {
    let thrown: unknown;
    try {
      createTypedClient<AllPaths, typeof ops>({ baseUrl: 'http://x.test' }, ops, parts([secret]));
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(TypeError);
    expect(String((thrown as Error).message)).toMatch(/line break or a NUL/);
    expect(String((thrown as Error).message)).not.toContain('sandbox');
  });
});
