import { createServer, request as httpRequest, type Server } from 'node:http';
import { createGzip } from 'node:zlib';
import { freePort, viaProxy } from '@zone-api/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RULE_BODY_LIMIT } from '../../src/traffic/rule-body.js';
import { listenOnLoopback, RES, useTrafficSandbox } from '../helpers.js';

// A port's rules against hostile answers and patterns (issue 39): a body rule read the answer whole and
// decoded it whole (a 1 MB gzip answer of 1 GiB: the event loop held 3.1 s, RSS +1 GB); a URL rule
// `(a+)+b` on 24-28 `a`s stalled 0.5-1.9 s and a body rule `(x+x+)+y` on 1,000 `x`s froze the sandbox
// for good (JavaScript's backtracking engine). Patterns now run in RE2 (linear), one RE2 cannot run is an
// unusable rule as an invalid one is, and a body rule reads RULE_BODY_LIMIT decoded bytes at most.

const t = useTrafficSandbox();
const MB = 1024 * 1024;

let target: Server;
let targetUrl: string;
/** A gzip answer of 256 MiB of zeros, in about 260 kB. */
let bomb: Buffer;
beforeAll(async () => {
  const parts: Buffer[] = [];
  const gz = createGzip({ level: 9 });
  gz.on('data', (c: Buffer) => parts.push(c));
  const done = new Promise((resolve) => gz.once('end', resolve));
  const zeros = Buffer.alloc(MB);
  for (let i = 0; i < 256; i++) if (!gz.write(zeros)) await new Promise((r) => gz.once('drain', r));
  gz.end();
  await done;
  bomb = Buffer.concat(parts);
  target = createServer((req, res) => {
    if (req.url === '/bomb') {
      res.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'gzip', 'content-length': String(bomb.length) });
      res.end(bomb);
    } else if (req.url === '/xs') res.end('x'.repeat(1000));
    else res.end(`hello ${req.url}`);
  });
  targetUrl = `http://127.0.0.1:${await listenOnLoopback(target)}`;
}, 120_000);
afterAll(() => new Promise<void>((resolve) => target.close(() => resolve())));

async function portWith(rules: unknown[]): Promise<string> {
  const at = await freePort();
  const created = await t.manager.createProxy({ body: { proxy: { port: at, zone: RES, rules } } });
  expect(created.response.status).toBe(200);
  return `http://127.0.0.1:${at}`;
}

/** The bytes of an answer through `proxy` as sent (not decoded), and the largest growth of this process's RSS seen meanwhile. */
function rawThrough(proxy: string, url: string): Promise<{ status: number; bytes: number; grew: number }> {
  const p = new URL(proxy);
  const start = process.memoryUsage().rss;
  let grew = 0;
  const look = setInterval(() => {
    grew = Math.max(grew, process.memoryUsage().rss - start);
  }, 20);
  return new Promise((resolve) => {
    const req = httpRequest({ host: p.hostname, port: p.port, path: url, headers: { host: new URL(url).host }, agent: false }, (res) => {
      let bytes = 0;
      res.on('data', (c: Buffer) => {
        bytes += c.length;
      });
      res.on('end', () => {
        clearInterval(look);
        grew = Math.max(grew, process.memoryUsage().rss - start);
        resolve({ status: res.statusCode ?? 0, bytes, grew });
      });
    });
    req.on('error', () => {
      clearInterval(look);
      resolve({ status: 0, bytes: 0, grew });
    });
    req.end();
  });
}

const ban = (body: string) => ({ action: { ban_ip: 0 }, action_type: 'ban_ip', trigger_type: 'body', body });

describe('rules that cannot freeze the sandbox', () => {
  it('a body rule (x+x+)+y on 1,000 x: tested in linear time, the answer handed on, the manager API answers', async () => {
    const proxy = await portWith([ban('(x+x+)+y')]);
    const got = await viaProxy(proxy, `${targetUrl}/xs`);
    expect(got.status).toBe(200);
    expect(got.text).toBe('x'.repeat(1000));
    expect((await t.manager.getVersion()).response.status).toBe(200);
  }, 30_000);

  it('a URL rule (a+)+b on 28 a: tested in linear time; a pattern that matches still acts', async () => {
    const proxy = await portWith([{ action: { null_response: true }, action_type: 'null_response', trigger_type: 'url', url: '(a+)+b' }]);
    const passed = await viaProxy(proxy, `${targetUrl}/${'a'.repeat(28)}`);
    expect(passed.status).toBe(200);
    expect(passed.text).toBe(`hello /${'a'.repeat(28)}`);
    const matched = await viaProxy(proxy, `${targetUrl}/${'a'.repeat(28)}b`);
    expect(matched.status).toBe(200);
    expect(matched.text).toBe('');
  }, 30_000);

  it('a URL pattern RE2 cannot run (a backreference) is unusable as an invalid one: the port’s own 502 naming why', async () => {
    const proxy = await portWith([{ action: { retry: true }, action_type: 'retry', trigger_type: 'url', url: '(a)\\1' }]);
    const got = await viaProxy(proxy, `${targetUrl}/aa`);
    expect(got.status).toBe(502);
    expect(got.headers['x-lpm-error']).toMatch(
      /^Invalid regular expression: \/\(a\)\\1\/: this sandbox runs rule patterns in linear time \(RE2 syntax\) and cannot run this one/,
    );
  }, 30_000);

  it(`a body rule on a gzip bomb (256 MiB in ${'~260 kB'}): at most ${RULE_BODY_LIMIT} bytes decoded, the answer handed on whole as sent`, async () => {
    const proxy = await portWith([ban('never-there')]);
    const got = await rawThrough(proxy, `${targetUrl}/bomb`);
    expect(got.status).toBe(200);
    expect(got.bytes).toBe(bomb.length);
    expect(got.grew).toBeLessThan(64 * MB);
  }, 60_000);
});
