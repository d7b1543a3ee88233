import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTransport, PlainRequest } from '../src/index.js';

// Credentials stay home: a redirect to another origin (another port, another host name; all on
// loopback) gets no credential header and no body. The transport follows redirects itself (fetch
// would keep X-…-Auth and re-send a body on 307/308).

interface Seen {
  server: string;
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}
const seen: Seen[] = [];

function recorder(name: string, redirectTo: () => string) {
  return createServer((req, res) => {
    let body = '';
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => {
      seen.push({ server: name, method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      const m = /^\/redirect\/(\d{3})$/.exec(req.url ?? '');
      if (m) {
        res.writeHead(Number(m[1]), { location: `${redirectTo()}/landed` });
        res.end();
        return;
      }
      res.setHeader('content-type', 'application/json');
      res.end('{"ok":true}');
    });
  });
}

let home: Server;
let away: Server;
let homePort = 0;
let awayPort = 0;
/** Where the home server redirects to, set by each test. */
let target = '';

const listen = (s: Server) => new Promise<number>((resolve) => s.listen(0, '127.0.0.1', () => resolve((s.address() as AddressInfo).port)));
beforeAll(async () => {
  home = recorder('home', () => target);
  away = recorder('away', () => target);
  homePort = await listen(home);
  awayPort = await listen(away);
});
afterAll(async () => {
  await Promise.all([home, away].map((s) => new Promise((r) => s.close(r))));
});

const credentials = {
  Authorization: 'Bearer sandbox-token-0001',
  'X-Service-Auth': 'service-customer-c1-zone-z1:secret-password',
  'X-Lum-Auth': 'lum-customer-c1-zone-z1:secret-password',
  'Proxy-Authorization': 'Basic dXNlcjpwYXNz',
};
const CREDENTIAL_NAMES = Object.keys(credentials).map((n) => n.toLowerCase());
const transport = createTransport({ retry: false }, []);

async function call(status: number, method: string, body?: string, asRequest = false) {
  seen.length = 0;
  const url = `http://127.0.0.1:${homePort}/redirect/${status}`;
  const init: RequestInit = {
    method,
    headers: { ...credentials, 'Content-Type': 'application/json', Accept: 'application/json' },
    ...(body !== undefined ? { body } : {}),
  };
  const res = asRequest ? await transport(new Request(url, init)) : await transport(new PlainRequest(url, init) as unknown as Request);
  await res.arrayBuffer();
  return res;
}

const STATUSES = [301, 302, 303, 307, 308] as const;
const elsewhere = () => [
  ['another port', `http://127.0.0.1:${awayPort}`, 'away'],
  ['another host name', `http://localhost:${homePort}`, 'home'],
];

describe('a redirect to another origin: no credential header, no body', () => {
  it.each(STATUSES)('%i GET: followed, every credential header dropped (another port and another host name)', async (status) => {
    for (const [label, to, server] of elsewhere()) {
      target = to as string;
      const res = await call(status, 'GET');
      expect(res.status, label).toBe(200);
      expect(
        seen.map((s) => `${s.server} ${s.url}`),
        label,
      ).toEqual([`home /redirect/${status}`, `${server} /landed`]);
      const landed = seen[1] as Seen;
      for (const name of CREDENTIAL_NAMES) expect(landed.headers[name], `${label}: ${name}`).toBeUndefined();
      expect(landed.headers.accept).toBe('application/json');
      // The first hop had them all.
      for (const name of CREDENTIAL_NAMES) expect((seen[0] as Seen).headers[name], name).toBeDefined();
    }
  });

  it.each(STATUSES)('%i POST with a body, plain and as a Request: the body is never sent to the other origin', async (status) => {
    for (const asRequest of [false, true]) {
      for (const [label, to] of elsewhere()) {
        target = to as string;
        const res = await call(status, 'POST', '{"zone":"secret"}', asRequest);
        const where = `${label}${asRequest ? ' (Request)' : ''}`;
        const landed = seen.slice(1);
        for (const s of landed) {
          expect(s.body, where).toBe('');
          for (const name of CREDENTIAL_NAMES) expect(s.headers[name], `${where}: ${name}`).toBeUndefined();
        }
        if (status === 307 || status === 308) {
          // The method and body would have to go with it: the redirect is the answer.
          expect(res.status, where).toBe(status);
          expect(landed, where).toHaveLength(0);
        } else {
          // 301, 302 and 303 turn a POST into a GET without a body, as fetch does.
          expect(res.status, where).toBe(200);
          expect(
            landed.map((s) => s.method),
            where,
          ).toEqual(['GET']);
          expect(landed[0]?.headers['content-type'], where).toBeUndefined();
        }
      }
    }
  });

  it('DELETE with a body on 307 to another origin is not re-sent; the caller gets the 307', async () => {
    target = `http://127.0.0.1:${awayPort}`;
    const res = await call(307, 'DELETE', '{"zone":"z1"}');
    expect(res.status).toBe(307);
    expect(seen.map((s) => s.server)).toEqual(['home']);
  });
});

describe('a redirect within the origin keeps what fetch keeps', () => {
  it.each([307, 308] as const)('%i POST: the same method, body and credentials', async (status) => {
    target = `http://127.0.0.1:${homePort}`;
    const res = await call(status, 'POST', '{"zone":"z1"}');
    expect(res.status).toBe(200);
    expect(seen.map((s) => `${s.server} ${s.method} ${s.url}`)).toEqual([`home POST /redirect/${status}`, 'home POST /landed']);
    expect(seen[1]?.body).toBe('{"zone":"z1"}');
    expect(seen[1]?.headers['x-service-auth']).toBe(credentials['X-Service-Auth']);
    expect(seen[1]?.headers.authorization).toBe(credentials.Authorization);
  });

  it('a caller that asks for redirect: manual gets the redirect itself', async () => {
    target = `http://127.0.0.1:${awayPort}`;
    seen.length = 0;
    const res = await transport(
      new PlainRequest(`http://127.0.0.1:${homePort}/redirect/302`, { redirect: 'manual' }) as unknown as Request,
    );
    expect(res.status).toBe(302);
    expect(seen).toHaveLength(1);
  });
});

describe('a baseUrl with credentials', () => {
  it('the TypeError fetch throws for it does not print them', async () => {
    const err = await transport(new PlainRequest('http://user:s3cret-pw@127.0.0.1:9/api/status', {}) as unknown as Request).catch(
      (e: Error) => e,
    );
    expect(err).toBeInstanceOf(TypeError);
    expect(String((err as Error).message)).toMatch(/includes credentials: http:\/\/\[REDACTED\]@127\.0\.0\.1:9/);
    expect(String((err as Error).message)).not.toContain('s3cret-pw');
  });
});
