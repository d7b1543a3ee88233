import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { brotliCompressSync, deflateRawSync, deflateSync, gzipSync } from 'node:zlib';
import { freePort, viaProxy } from '@zone-api/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listenOnLoopback, RES, useTrafficSandbox } from '../helpers.js';

// HAR bodies of encoded answers, as the real manager keeps them (lib/util.js 253-290, decode_body): the
// first har_limit bytes decoded, trimmed and cut to har_limit characters; a br answer longer than what
// was kept is not decoded. Decoding stops at DECODED_CAP bytes: a megabyte of gzip through a port once
// could be a gibibyte in the sandbox's memory (test/attack/memory.test.ts).
const t = useTrafficSandbox();

// 1,200 words that compress to about 3 kB, blanks around.
const text = `  ${Array.from({ length: 1200 }, (_, i) => `w${(i * 7919) % 10007}`).join(' ')}\n`;
const bodies: Record<string, { encoding: string; body: Buffer }> = {
  gzip: { encoding: 'gzip', body: gzipSync(text) },
  br: { encoding: 'br', body: brotliCompressSync(text) },
  deflate: { encoding: 'deflate', body: deflateSync(text) },
  'deflate-raw': { encoding: 'deflate', body: deflateRawSync(text) },
  'br-long': { encoding: 'br', body: brotliCompressSync(randomBytes(20_000)) },
  'deflate-broken': { encoding: 'deflate', body: Buffer.from('not deflate at all') },
  identity: { encoding: 'GZIP', body: Buffer.from(text) },
  plain: { encoding: '', body: Buffer.from(text) },
};

let target: Server;
let base: string;
beforeAll(async () => {
  target = createServer((req, res) => {
    const b = bodies[(req.url ?? '').slice(1)];
    if (!b) return res.writeHead(404).end();
    const encoding = b.encoding ? { 'content-encoding': b.encoding } : {};
    res.writeHead(200, { 'content-type': 'text/plain', ...encoding, 'content-length': b.body.length });
    res.end(b.body);
  });
  base = `http://127.0.0.1:${await listenOnLoopback(target)}`;
});
afterAll(() => new Promise<void>((resolve) => target.close(() => resolve())));

async function logged(harLimit: number, name: string) {
  const settings = await fetch(`${t.sandbox.managerUrl}/api/settings`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ har_limit: harLimit }),
  });
  expect(settings.status).toBe(200);
  const port = await freePort();
  expect((await t.manager.createProxy({ body: { proxy: { port, zone: RES } } })).response.status).toBe(200);
  const url = `${base}/${name}`;
  const r = await viaProxy(`http://127.0.0.1:${port}`, url);
  expect(r.status).toBe(200);
  const entry = () => t.sandbox.state().manager.har.find((e) => e.details?.port === port && e.request.url === url);
  await expect.poll(() => entry() !== undefined, { timeout: 10_000 }).toBe(true);
  return entry()?.response.content as { text?: string; comment?: string; size: number };
}

describe('HAR bodies of encoded answers are decoded as the real manager decodes them', () => {
  it('gzip, br, deflate (zlib and raw): decoded, trimmed, cut to har_limit characters', async () => {
    for (const name of ['gzip', 'br', 'deflate', 'deflate-raw']) {
      const whole = await logged(0, name);
      expect(whole.text, name).toBe(text.trim());
      // The real manager writes no comment on a decoded answer (lib/manager.js 476-484).
      expect(whole.comment, name).toBeUndefined();
      expect(whole.size).toBe(bodies[name]?.body.length);
    }
    // 100 bytes of the gzip answer kept: decoded as far as they go, then cut to 100 characters.
    const cut = await logged(100, 'gzip');
    expect(cut.text).toBe(text.trim().slice(0, cut.text?.length));
    expect(cut.text?.length).toBeGreaterThan(0);
    expect(cut.text?.length).toBeLessThanOrEqual(100);
    expect(cut.comment).toBeUndefined();
  });

  it('a br answer longer than har_limit is not decoded (empty text); a broken deflate says why; another encoding is kept undecoded, trimmed', async () => {
    const br = await logged(1024, 'br-long');
    expect(br.size).toBeGreaterThan(1024);
    expect(br.text).toBe('');
    expect(br.comment).toBeUndefined();
    const broken = await logged(0, 'deflate-broken');
    expect(broken.text).toBe('');
    expect(broken.comment).toMatch(/^decoded from deflate; decoding body failed with encoding deflate: /);
    // The real manager compares the encoding as it came: `GZIP` is no encoding it decodes. It still
    // trims the text (decode_body's default case), as it trims an answer with no encoding at all.
    const other = await logged(0, 'identity');
    expect(other.text).toBe(text.trim());
    expect(other.comment).toBeUndefined();
  });

  it('an answer with no encoding is trimmed as decode_body trims it, whole or cut to har_limit bytes', async () => {
    const whole = await logged(0, 'plain');
    expect(text).not.toBe(text.trim());
    expect(whole.text).toBe(text.trim());
    expect(whole.comment).toBeUndefined();
    expect(whole.size).toBe(Buffer.byteLength(text));
    // The first 100 bytes kept, then trimmed: the two leading blanks go.
    const cut = await logged(100, 'plain');
    expect(cut.text).toBe(text.slice(0, 100).trim());
    expect(cut.text?.length).toBeGreaterThan(90);
    expect(cut.text?.startsWith('w')).toBe(true);
    expect(cut.comment).toBeUndefined();
  });
});
