import { describe, expect, it } from 'vitest';
import { IGNORED_FIELDS_HEADER } from '../../src/router/lenient.js';
import { raw, STATIC, useSandbox } from '../helpers.js';

// Inputs that once held the event loop for seconds. Each is answered; how fast is measured in `pnpm bench`
// (the event loop's longest delay while it runs), not asserted here: a quadratic implementation fails these
// tests by running far past the test timeout (minutes where linear work takes about a second).
const t = useSandbox();

describe('lenient mode is linear in unknown fields', () => {
  it('a 700 kB port config of 60,000 unknown fields is accepted, the fields ignored and counted in the header', async () => {
    const n = 60_000;
    const proxy: Record<string, unknown> = { zone: STATIC };
    for (let i = 0; i < n; i++) proxy[`f${i}`] = i;
    const r = await raw(t.sandbox.managerUrl, 'POST', '/api/proxies', { body: { proxy } });
    expect(r.status, r.text.slice(0, 200)).toBe(200);
    const header = r.headers.get(IGNORED_FIELDS_HEADER) ?? '';
    expect(header.startsWith('body.proxy.f0, body.proxy.f1,')).toBe(true);
    expect(header.endsWith(`(${n - 20} more)`)).toBe(true);
    const port = r.json().data.port;
    expect(Object.keys(r.json().data).filter((k) => /^f\d+$/.test(k))).toEqual([]);
    const stored = (await raw(t.sandbox.managerUrl, 'GET', '/api/proxies')).json() as Array<Record<string, unknown>>;
    expect(stored.find((p) => p.port === port)).toBeDefined();
    expect(JSON.stringify(stored)).not.toContain('"f59999"');
  });
});
