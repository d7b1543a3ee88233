import { describe, expect, it } from 'vitest';
import { type CallInit, createTypedClient, querySerializer, redact, ZoneApiError } from '../src/index.js';

// The client's calls as a caller makes them: query strings, credentials beside the caller's own
// headers, `request`, `paginate`, which operations may be repeated (over a recording fetch).

type Op = { get: { parameters: { query?: Record<string, unknown> }; responses: Record<number, unknown> } };
type Paths = { '/api/thing': Op; '/api/pm_things': Op };
const ops = {
  getThing: { method: 'GET', path: '/api/thing', idempotent: true, changesState: false, success: { '200': ['application/json'] } },
  rotateThing: { method: 'GET', path: '/api/thing', idempotent: false, changesState: true, success: { '200': ['application/json'] } },
  listThings: {
    method: 'GET',
    path: '/api/pm_things',
    idempotent: true,
    changesState: false,
    brandPrefix: 'pm',
    pagination: { style: 'page', page: 'page', size: 'size' },
    success: { '200': ['application/json'] },
  },
} as const;
type Client = ReturnType<typeof createTypedClient<Paths, typeof ops>> & Record<string, unknown>;
type Call = (init?: CallInit) => Promise<{ data?: unknown; error?: unknown; response: Response }>;

function recording(answer: (req: Request) => Response = () => Response.json({})) {
  const seen: Request[] = [];
  const fetch = (async (input: Parameters<typeof globalThis.fetch>[0], init?: RequestInit) => {
    const req = new Request(input, init);
    seen.push(req);
    return answer(req);
  }) as typeof globalThis.fetch;
  return { fetch, seen };
}
const make = (
  fetch: typeof globalThis.fetch,
  options: Record<string, unknown> = {},
  parts: Parameters<typeof createTypedClient>[2] = { secrets: [] },
) => createTypedClient<Paths, typeof ops>({ baseUrl: 'http://x.test', fetch, ...options }, ops, parts) as unknown as Client;
const op = (client: Client, name: string) => client[name] as Call;
const busy = () => new Response('busy', { status: 503, headers: { 'Content-Type': 'text/plain' } });

describe('querySerializer', () => {
  it('leaves out null and undefined, sends strings, numbers and booleans as they are, JSON-encodes objects', () => {
    const p = new URLSearchParams(querySerializer({ a: null, u: undefined, s: 'x y', n: 0, b: false, o: { k: 'v' } }));
    expect([...p.keys()]).toEqual(['s', 'n', 'b', 'o']);
    expect(p.get('s')).toBe('x y');
    expect(p.get('n')).toBe('0');
    expect(p.get('b')).toBe('false');
    expect(p.get('o')).toBe('{"k":"v"}');
  });
});

describe('which operations may be repeated', () => {
  it('retryNonIdempotent repeats what the spec marks not safe to repeat; false (or retry: false) sends it once', async () => {
    const r = recording(busy);
    await op(make(r.fetch, { retry: { retries: 2, baseDelayMs: 1, retryNonIdempotent: true } }), 'rotateThing')();
    expect(r.seen).toHaveLength(3);
    r.seen.length = 0;
    await op(make(r.fetch, { retry: { retries: 2, baseDelayMs: 1, retryNonIdempotent: false } }), 'rotateThing')();
    expect(r.seen).toHaveLength(1);
    r.seen.length = 0;
    await op(make(r.fetch, { retry: false }), 'getThing')();
    expect(r.seen).toHaveLength(1);
  });
});

describe('credentials and the caller’s own options', () => {
  const auth = () => ({ Authorization: 'tok' });

  it('with no credential for a path, the caller’s headers go as given', async () => {
    const r = recording();
    await op(make(r.fetch), 'getThing')({ headers: { 'X-Other': '1' } });
    expect(r.seen[0]?.headers.get('X-Other')).toBe('1');
    expect(r.seen[0]?.headers.get('Authorization')).toBeNull();
  });

  it('the credential goes with a call whose options have no headers, and its query is kept', async () => {
    const r = recording();
    const client = make(r.fetch, {}, { auth, secrets: [] });
    await op(client, 'getThing')({});
    await op(client, 'getThing')({ params: { query: { tag: 'a' } } });
    expect(r.seen.map((q) => [q.url, q.headers.get('Authorization')])).toEqual([
      ['http://x.test/api/thing', 'tok'],
      ['http://x.test/api/thing?tag=a', 'tok'],
    ]);
  });

  it('a header the caller sets in params.header wins over the credential', async () => {
    const r = recording();
    await op(make(r.fetch, {}, { auth, secrets: [] }), 'getThing')({ params: { header: { authorization: 'mine' } } });
    expect(r.seen[0]?.headers.get('Authorization')).toBe('mine');
  });

  it('a failed connection is a network error, not a parse error; a broken JSON body is a parse error that names the call', async () => {
    const down = make(
      (async () => {
        throw new TypeError('fetch failed');
      }) as typeof globalThis.fetch,
      { retry: false },
    );
    expect(await op(down, 'getThing')().catch((e: unknown) => e)).toMatchObject({ kind: 'network' });
    const broken = make(
      (async () => new Response('{"a":', { headers: { 'Content-Type': 'application/json' } })) as typeof globalThis.fetch,
    );
    const err = await op(broken, 'getThing')().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ZoneApiError);
    expect(err).toMatchObject({ kind: 'parse', message: 'GET /api/thing answered a JSON body that does not parse' });
  });
});

describe('the methods a client has', () => {
  it('every operation, every path method and request are enumerable methods', () => {
    const keys = Object.keys(make(recording().fetch));
    for (const name of [
      'getThing',
      'rotateThing',
      'listThings',
      'GET',
      'PUT',
      'POST',
      'DELETE',
      'OPTIONS',
      'HEAD',
      'PATCH',
      'TRACE',
      'request',
    ]) {
      expect(keys, name).toContain(name);
    }
  });

  it('request(method, path): any case of method, the path’s credential, filled-in fields, retried like its method', async () => {
    const r = recording(() => (r.seen.length === 1 ? busy() : Response.json({ ok: true })));
    const filled: string[] = [];
    const client = make(
      r.fetch,
      { retry: { retries: 2, baseDelayMs: 1 } },
      {
        auth: (path) => (path === '/api/thing' ? { Authorization: 'tok' } : undefined),
        fill: (method, init) => {
          filled.push(method);
          return init;
        },
        secrets: [],
      },
    );
    const result = await (client.request as (m: string, u: string, i?: CallInit) => Promise<{ data?: unknown }>)('get', '/api/thing');
    expect(result.data).toEqual({ ok: true });
    expect(filled).toEqual(['GET']);
    expect(r.seen.map((q) => [q.method, q.headers.get('Authorization')])).toEqual([
      ['GET', 'tok'],
      ['GET', 'tok'],
    ]);
  });
});

describe('path-based calls', () => {
  it('a path-based GET is retried like any GET', async () => {
    const r = recording(busy);
    await (make(r.fetch, { retry: { retries: 2, baseDelayMs: 1 } }).GET as (u: string) => Promise<unknown>)('/api/thing');
    expect(r.seen).toHaveLength(3);
  });
});

describe('paginate on a client', () => {
  it('without a brand, the path is walked as the spec writes it', async () => {
    const r = recording(() => Response.json([]));
    const client = make(r.fetch);
    for await (const _ of (client.paginate as (id: string) => AsyncGenerator<unknown>)('listThings'));
    expect(r.seen.map((q) => new URL(q.url).pathname)).toEqual(['/api/pm_things']);
  });

  it('an operation that is not paged, or not there, is a TypeError', () => {
    const client = make(recording().fetch);
    const paginate = client.paginate as (id: string) => unknown;
    expect(() => paginate('getThing')).toThrow(new TypeError('getThing is not a paged operation'));
    expect(() => paginate('noSuchThing')).toThrow(new TypeError('noSuchThing is not a paged operation'));
  });

  it('a paged operation is walked on its branded path with its credential', async () => {
    const r = recording((req) => Response.json(new URL(req.url).searchParams.get('page') === '0' ? [1, 2] : [3]));
    const client = make(
      r.fetch,
      {},
      { auth: (path) => (path === '/api/pm_things' ? { 'X-Key': 'k' } : undefined), secrets: [], brand: 'lpm' },
    );
    const items: unknown[] = [];
    for await (const item of (client.paginate as (id: string, init: unknown) => AsyncGenerator<unknown>)('listThings', {
      params: { query: { size: 2 } },
    }))
      items.push(item);
    expect(items).toEqual([1, 2, 3]);
    expect(r.seen.map((q) => `${new URL(q.url).pathname}${new URL(q.url).search} ${q.headers.get('X-Key')}`)).toEqual([
      '/api/lpm_things?size=2&page=0 k',
      '/api/lpm_things?size=2&page=1 k',
    ]);
  });
});

describe('redact', () => {
  it('an empty secret redacts nothing', () => {
    expect(redact('a b, c', ['', 'zz'])).toBe('a b, c');
  });

  it('a longer secret goes before a shorter one inside it', () => {
    expect(redact('key user-pw; pw', ['pw', 'user-pw'])).toBe('key [REDACTED]; [REDACTED]');
    expect(redact('key user-pw; pw', ['user-pw', 'pw'])).toBe('key [REDACTED]; [REDACTED]');
  });

  it('characters of a pattern in a secret are taken as they are', () => {
    expect(redact('t=a.b+c* u=axb+c*', ['a.b+c*'])).toBe('t=[REDACTED] u=axb+c*');
    expect(redact('(x) [y]', ['(x)', '[y]'])).toBe('[REDACTED] [REDACTED]');
  });
});
