import { describe, expect, it } from 'vitest';
import { createTypedClient, headerAuth, querySerializer } from '../src/index.js';

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
const ops = { getThing: { method: 'GET', path: '/api/thing' } } as const;

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
    const client = createTypedClient<Paths, typeof ops>({ baseUrl: 'http://x.test/', fetch: r.fetch }, ops, [], []);
    const { data, response } = await client.getThing();
    expect(data).toBe('hello');
    expect(response.headers.get('Content-Type')).toBe('text/plain');
    expect(r.seen[0]?.url).toBe('http://x.test/api/thing');
  });

  it('returns text/html and text error bodies as strings, redacted', async () => {
    const r = recorder(() => new Response('No proxy for key K3Y', { status: 400, headers: { 'Content-Type': 'text/html' } }));
    const client = createTypedClient<Paths, typeof ops>({ baseUrl: 'http://x.test', fetch: r.fetch }, ops, [], ['K3Y']);
    const { data, error, response } = await client.getThing();
    expect(data).toBeUndefined();
    expect(response.status).toBe(400);
    expect(error).toBe('No proxy for key [REDACTED]');
  });

  it('runs auth middleware only on the paths it names', async () => {
    const r = recorder(() => new Response(null, { status: 204 }));
    const client = createTypedClient<Paths, typeof ops>(
      { baseUrl: 'http://x.test', fetch: r.fetch },
      ops,
      [headerAuth('Authorization', 'tok', ['/api/other'])],
      [],
    );
    await client.getThing();
    expect(r.seen[0]?.headers.get('Authorization')).toBeNull();
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
