import type { LookupAddress } from 'node:dns';
import { request as httpRequest } from 'node:http';
import { freePort, viaProxy } from '@zone-api/testkit';
import { describe, expect, it, vi } from 'vitest';
import { loopbackLookup } from '../../src/traffic/lookup.js';
import { C, RES, RES_PW, useTrafficSandbox } from '../helpers.js';

// Names a hostile client or a hostile machine plays with: a Host header that names loopback before a
// userinfo `@` (once served as localhost), `localhost` resolving elsewhere (egress trusted the name),
// and a port's header with a line break (once a misleading 502 about the upstream).
const t = useTrafficSandbox();

// What `localhost` resolves to for the sandbox's connections, when a test says (the hosts file may say
// anything): every other name, and `localhost` otherwise, goes to the system's resolver.
const dns = vi.hoisted(() => ({ localhostAt: undefined as string | undefined }));
vi.mock('node:dns', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:dns')>();
  const lookup = ((host: string, options: unknown, done: unknown) => {
    if (dns.localhostAt && host.toLowerCase() === 'localhost' && typeof done === 'function')
      return (done as (err: null, a: LookupAddress[]) => void)(null, [{ address: dns.localhostAt, family: 4 }]);
    return (real.lookup as (...a: unknown[]) => void)(host, options, done);
  }) as typeof real.lookup;
  return { ...real, default: { ...real, lookup }, lookup };
});

/** GET /api/version on the manager with a Host header as given: the status. */
const withHost = (host: string) =>
  new Promise<number>((resolve, reject) => {
    const url = new URL(t.sandbox.managerUrl as string);
    const req = httpRequest({ host: url.hostname, port: url.port, path: '/api/version', headers: { host }, agent: false }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end();
  });

describe('the Host header', () => {
  it('localhost:80@evil.com and other trailers are refused (421); plain loopback names are served', async () => {
    const port = new URL(t.sandbox.managerUrl as string).port;
    for (const bad of ['localhost:80@evil.com', `localhost:${port}/x`, 'localhost evil.com', '127.0.0.1:80#frag', 'localhost:80:90'])
      expect(await withHost(bad), bad).toBe(421);
    for (const good of ['localhost', `localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`])
      expect(await withHost(good), good).toBe(200);
  });
});

describe('localhost is checked where it resolves', () => {
  const fake =
    (...addresses: string[]) =>
    (_h: string, _o: unknown, done: (err: Error | null, a: LookupAddress[]) => void) =>
      done(
        null,
        addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })),
      );
  const run = (lookup: ReturnType<typeof loopbackLookup>, all = false) =>
    new Promise<{ err: NodeJS.ErrnoException | null; address: unknown }>((resolve) =>
      lookup('localhost', { all }, (err, address) => resolve({ err, address })),
    );

  it('a name resolving outside loopback fails with EGRESS_REFUSED, naming the address; loopback passes', async () => {
    const outside = await run(loopbackLookup(fake('127.0.0.1', '10.1.2.3')));
    expect(outside.err?.code).toBe('EGRESS_REFUSED');
    expect(outside.err?.message).toBe('localhost resolves to 10.1.2.3, which is not loopback');
    expect((await run(loopbackLookup(fake('::1', '127.0.0.1')))).address).toBe('::1');
    expect((await run(loopbackLookup(fake('127.0.0.1')), true)).address).toEqual([{ address: '127.0.0.1', family: 4 }]);
  });

  it('the network and a port look localhost up when they connect: resolving elsewhere, it is refused naming the address', async () => {
    const port = await freePort();
    expect((await t.manager.createProxy({ body: { proxy: { port, zone: RES } } })).response.status).toBe(200);
    const closed = await freePort();
    const auth = `Basic ${Buffer.from(`lum-customer-${C}-zone-${RES}:${RES_PW}`).toString('base64')}`;
    dns.localhostAt = '192.0.2.7';
    try {
      for (const [label, via, options] of [
        ['network', t.sandbox.networkUrl as string, { auth }],
        ['port', `http://127.0.0.1:${port}`, {}],
      ] as const) {
        const r = await viaProxy(via, `http://localhost:${closed}/x`, options);
        expect(r.status, label).toBe(403);
        expect(r.text, label).toContain('localhost resolves to 192.0.2.7, which is not loopback');
      }
    } finally {
      dns.localhostAt = undefined;
    }
  });

  it('traffic to localhost through a port still arrives (it resolves to loopback here)', async () => {
    const port = await freePort();
    expect((await t.manager.createProxy({ body: { proxy: { port, zone: RES } } })).response.status).toBe(200);
    const closed = await freePort();
    // Nothing listens: the network's own refusal, after the lookup let it through.
    const r = await viaProxy(`http://127.0.0.1:${port}`, `http://localhost:${closed}/x`);
    expect(r.status).toBe(502);
    expect(r.headers['x-brd-err-code']).toBe('target_unreachable');
  });
});

describe("a port's header that no HTTP message can carry", () => {
  it('a line break in its value: 502 naming the header (not its value), and the upstream is not blamed', async () => {
    const port = await freePort();
    const created = await t.manager.createProxy({
      body: { proxy: { port, zone: RES, headers: [{ name: 'x-token', value: 'secret-value\r\nx-injected: 1' }] } },
    });
    expect(created.response.status).toBe(200);
    const r = await viaProxy(`http://127.0.0.1:${port}`, 'http://127.0.0.1:9/x');
    expect(r.status).toBe(502);
    expect(r.text).toBe(
      `The header "x-token" of port ${port} cannot be sent: a name or value holds a line break or a character no header may carry; fix the port's headers`,
    );
    expect(r.text).not.toContain('secret-value');
  });
});
