import { describe, expect, it } from 'vitest';
import { createTransport, PlainRequest } from '../src/index.js';

// The rules of the transport's own redirect following, over a recording fetch (nothing leaves the
// process: the hosts below are never resolved). redirects.test.ts holds the same rules over loopback servers.

interface Sent {
  url: string;
  method: string;
  headers: Headers;
  body: string | undefined;
}

/** A fetch that answers `answer(n)` to its n-th request (from 0) and records each. */
function recording(answer: (n: number, sent: Sent) => Response) {
  const sent: Sent[] = [];
  const fetch = async (input: Parameters<typeof globalThis.fetch>[0], init?: RequestInit) => {
    const req = input instanceof Request ? input : undefined;
    const s: Sent = {
      url: req ? req.url : String(input),
      method: init?.method ?? req?.method ?? 'GET',
      headers: new Headers(init?.headers ?? req?.headers),
      body: init?.body !== undefined ? String(init.body) : req?.body ? await req.text() : undefined,
    };
    sent.push(s);
    return answer(sent.length - 1, s);
  };
  return { fetch: fetch as typeof globalThis.fetch, sent };
}
const to = (status: number, location?: string) => new Response(null, { status, headers: location === undefined ? {} : { location } });
const ok = () => new Response('{}', { status: 200, headers: { 'content-type': 'application/json' } });
const plain = (url: string, init: RequestInit = {}) => new PlainRequest(url, init) as unknown as Request;

describe('which redirects are followed', () => {
  it('a redirect without a Location, or with one that is not a URL, is the answer', async () => {
    for (const location of [undefined, 'http://[::1']) {
      const { fetch, sent } = recording((n) => (n === 0 ? to(302, location) : ok()));
      const res = await createTransport({ fetch, retry: false }, [])(plain('http://x.test/a'));
      expect(res.status, String(location)).toBe(302);
      expect(sent, String(location)).toHaveLength(1);
    }
  });

  it('a redirect to a scheme other than http(s) is the answer; to https it is followed', async () => {
    for (const location of ['ftp://x.test/file', 'data:,hello', 'file:///etc/passwd']) {
      const { fetch, sent } = recording((n) => (n === 0 ? to(302, location) : ok()));
      const res = await createTransport({ fetch, retry: false }, [])(plain('http://x.test/a'));
      expect(res.status, location).toBe(302);
      expect(sent, location).toHaveLength(1);
    }
    const { fetch, sent } = recording((n) => (n === 0 ? to(302, 'https://x.test/secure') : ok()));
    expect((await createTransport({ fetch, retry: false }, [])(plain('http://x.test/a'))).status).toBe(200);
    expect(sent.map((s) => s.url)).toEqual(['http://x.test/a', 'https://x.test/secure']);
  });

  it('at most 20 redirects are followed: the 21st is the answer', async () => {
    const { fetch, sent } = recording((n) => to(302, `/hop/${n + 1}`));
    const res = await createTransport({ fetch, retry: false }, [])(plain('http://x.test/hop/0'));
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe('/hop/21');
    expect(sent).toHaveLength(21);
    expect(sent.at(-1)?.url).toBe('http://x.test/hop/20');
  });

  it('a redirect with no body (null) is followed like any other', async () => {
    const { fetch, sent } = recording((n) => (n === 0 ? new Response(null, { status: 301, headers: { location: '/b' } }) : ok()));
    expect((await createTransport({ fetch, retry: false }, [])(plain('http://x.test/a'))).status).toBe(200);
    expect(sent).toHaveLength(2);
  });
});

describe('the method and body after a redirect (as fetch does it)', () => {
  it('303 turns a GET or a POST into a GET, but keeps a HEAD', async () => {
    for (const [method, then] of [
      ['GET', 'GET'],
      ['POST', 'GET'],
      ['HEAD', 'HEAD'],
    ] as const) {
      const { fetch, sent } = recording((n) => (n === 0 ? to(303, '/b') : ok()));
      await createTransport(
        { fetch, retry: false },
        [],
      )(plain('http://x.test/a', { method, ...(method === 'POST' ? { body: '{}' } : {}) }));
      expect(sent.map((s) => s.method)).toEqual([method, then]);
    }
  });

  it('301 and 302 turn only a POST into a GET: a PUT keeps its method, body and Content-Type', async () => {
    for (const status of [301, 302]) {
      const { fetch, sent } = recording((n) => (n === 0 ? to(status, '/b') : ok()));
      const init = { method: 'PUT', body: '{"a":1}', headers: { 'Content-Type': 'application/json' } };
      expect((await createTransport({ fetch, retry: false }, [])(plain('http://x.test/a', init))).status).toBe(200);
      expect(sent[1]).toMatchObject({ url: 'http://x.test/b', method: 'PUT', body: '{"a":1}' });
      expect(sent[1]?.headers.get('content-type')).toBe('application/json');

      const post = recording((n) => (n === 0 ? to(status, '/b') : ok()));
      const postInit = { method: 'POST', body: '{"a":1}', headers: { 'Content-Type': 'application/json' } };
      await createTransport({ fetch: post.fetch, retry: false }, [])(plain('http://x.test/a', postInit));
      expect(post.sent[1]).toMatchObject({ method: 'GET', body: undefined });
      expect(post.sent[1]?.headers.get('content-type')).toBeNull();
    }
  });

  it('a Request (not a PlainRequest) without a body is followed', async () => {
    const { fetch, sent } = recording((n) => (n === 0 ? to(302, '/b') : ok()));
    expect((await createTransport({ fetch, retry: false }, [])(new Request('http://x.test/a'))).status).toBe(200);
    expect(sent.map((s) => s.url)).toEqual(['http://x.test/a', 'http://x.test/b']);
  });

  it("a Request's body is read once: a 307 that would need it again, even to the same origin, is the answer", async () => {
    const { fetch, sent } = recording((n) => (n === 0 ? to(307, '/b') : ok()));
    const res = await createTransport({ fetch, retry: false }, [])(new Request('http://x.test/a', { method: 'POST', body: '{"a":1}' }));
    expect(res.status).toBe(307);
    expect(sent).toHaveLength(1);
  });
});

describe('credential headers on a redirect to another origin', () => {
  const credentials = {
    Authorization: 'Bearer t0ken',
    'Proxy-Authorization': 'Basic dXNlcjpwYXNz',
    Cookie: 'session=s3ss10n',
    'X-Auth': 'k1',
    'X-Authorization': 'k2',
    'X-Lum-Auth': 'k3',
    'X-Service-Auth': 'k4',
    'X-Auth-Token': 'k5',
    'X-Auth-User': 'u1',
    'X-Api-Key': 'k6',
    'X-ApiKey': 'k7',
    'X-Access-Token': 'k8',
    'X-Client-Secret': 'k9',
    'X-Password': 'k10',
  };
  const ordinary = {
    Accept: 'application/json',
    'X-Request-Id': 'r1',
    'X-Author': 'a',
    'User-Agent': 'zone-api',
    'X-Cookie-Consent': 'no',
  };

  it('every credential header is dropped, every other header kept', async () => {
    const { fetch, sent } = recording((n) => (n === 0 ? to(302, 'http://elsewhere.test/b') : ok()));
    await createTransport({ fetch, retry: false }, [])(plain('http://x.test/a', { headers: { ...credentials, ...ordinary } }));
    expect(sent).toHaveLength(2);
    for (const name of Object.keys(credentials)) {
      expect(sent[0]?.headers.has(name), name).toBe(true);
      expect(sent[1]?.headers.has(name), name).toBe(false);
    }
    for (const [name, value] of Object.entries(ordinary)) expect(sent[1]?.headers.get(name), name).toBe(value);
  });

  it('to the same origin, all of them go along', async () => {
    const { fetch, sent } = recording((n) => (n === 0 ? to(302, '/b') : ok()));
    await createTransport({ fetch, retry: false }, [])(plain('http://x.test/a', { headers: credentials }));
    for (const [name, value] of Object.entries(credentials)) expect(sent[1]?.headers.get(name), name).toBe(value);
  });
});
