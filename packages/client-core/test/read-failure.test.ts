import { describe, expect, it } from 'vitest';
import { ZoneApiError } from '../src/errors.js';
import { limited, readFailure } from '../src/read.js';

// read.ts in isolation: what each failure while a body is read becomes, and the size bound met exactly
// (read.test.ts drives the same code through loopback servers).

const terminated = (cause?: unknown) => Object.assign(new TypeError('terminated'), cause === undefined ? {} : { cause });
const named = (name: string) => Object.assign(new Error('x'), { name });

describe('readFailure', () => {
  it('leaves alone what is already a ZoneApiError, what is not an Error, and any other error', () => {
    expect(readFailure(new ZoneApiError('m', 'http', 'GET', '/p', 1), 'GET', '/p')).toBeUndefined();
    expect(readFailure('terminated', 'GET', '/p')).toBeUndefined();
    expect(readFailure({ name: 'AbortError' }, 'GET', '/p')).toBeUndefined();
    expect(readFailure(new Error('terminated'), 'GET', '/p')).toBeUndefined();
    expect(readFailure(new TypeError('other'), 'GET', '/p')).toBeUndefined();
  });

  it('a timeout and an abort, each with its kind and message', () => {
    const t = readFailure(named('TimeoutError'), 'GET', '/api/zone');
    expect([t?.kind, t?.message, t?.attempts]).toEqual(['timeout', 'GET /api/zone timed out while its answer was read', 1]);
    const a = readFailure(named('AbortError'), 'POST', '/api/zone');
    expect([a?.kind, a?.message, a?.method, a?.path]).toEqual(['aborted', 'POST /api/zone was aborted', 'POST', '/api/zone']);
  });

  it('a body cut short: network, the cause code when it is a well-formed one, ECONNRESET otherwise', () => {
    const cases: [unknown, string][] = [
      [{ code: 'UND_ERR_SOCKET' }, 'UND_ERR_SOCKET'],
      [{ code: 'E1' }, 'E1'],
      [{ code: 'E' }, 'ECONNRESET'],
      [{ code: 'A'.repeat(40) }, 'A'.repeat(40)],
      [{ code: 'A'.repeat(41) }, 'ECONNRESET'],
      [{ code: 'econnreset' }, 'ECONNRESET'],
      [{ code: 'x ECONNRESET' }, 'ECONNRESET'],
      [{ code: 'ECONNRESET x' }, 'ECONNRESET'],
      [{ code: 42 }, 'ECONNRESET'],
      [undefined, 'ECONNRESET'],
    ];
    for (const [cause, code] of cases) {
      const e = readFailure(terminated(cause), 'GET', '/api/logs');
      expect(e?.kind, JSON.stringify(cause)).toBe('network');
      expect(e?.code, JSON.stringify(cause)).toBe(code);
      expect(e?.message).toBe(`GET /api/logs failed: its answer was cut short (${code})`);
      const inner = e?.cause as Error & { code?: string };
      expect(inner.message).toBe('the connection closed before the answer ended');
      expect(inner.code).toBe(code);
    }
  });

  it('past the bound: network, ERR_RESPONSE_TOO_LARGE, naming the bound', () => {
    const e = readFailure(Object.assign(new Error('big'), { code: 'ERR_RESPONSE_TOO_LARGE', max: 10 }), 'GET', '/p');
    expect([e?.kind, e?.code, e?.message]).toEqual([
      'network',
      'ERR_RESPONSE_TOO_LARGE',
      'GET /p answered more than 10 bytes (maxResponseBytes)',
    ]);
  });
});

describe('limited', () => {
  const answer = (body: string, headers: Record<string, string> = {}) => new Response(body, { status: 201, headers });

  it('an answer whose Content-Length is the bound exactly is handed on as it is; one byte over is bounded', async () => {
    const exact = answer('12345', { 'Content-Length': '5' });
    expect(limited(exact, 5)).toBe(exact);
    const over = answer('123456', { 'Content-Length': '6' });
    expect(limited(over, 5)).not.toBe(over);
  });

  it('reads a body of exactly the bound; one byte more fails with the bound in its message and code', async () => {
    expect(await limited(answer('12345', { 'Content-Encoding': 'identity' }), 5).text()).toBe('12345');
    const err = await limited(answer('123456', { 'Content-Encoding': 'identity' }), 5)
      .text()
      .then(
        () => undefined,
        (e: Error & { code?: string; max?: number }) => e,
      );
    expect([err?.message, err?.code, err?.max]).toEqual(['the answer is larger than 5 bytes', 'ERR_RESPONSE_TOO_LARGE', 5]);
  });

  it('the bounded answer keeps status, headers and url; no bound or no body hands it on', async () => {
    const res = answer('abc', { 'Content-Encoding': 'identity', 'X-Kept': '1' });
    Object.defineProperty(res, 'url', { value: 'http://127.0.0.1:9/api/x' });
    const b = limited(res, 100);
    expect(b).not.toBe(res);
    expect([b.status, b.headers.get('x-kept'), b.url]).toEqual([201, '1', 'http://127.0.0.1:9/api/x']);
    const none = new Response(null, { status: 204 });
    expect(limited(none, 5)).toBe(none);
    const unbounded = answer('abc');
    expect(limited(unbounded, 0)).toBe(unbounded);
    expect(limited(unbounded, Number.NaN)).toBe(unbounded);
  });
});
