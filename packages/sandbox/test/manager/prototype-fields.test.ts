import { afterEach, describe, expect, it } from 'vitest';
import { raw, useSandbox } from '../helpers.js';

// Manager bodies whose fields are named as Object.prototype's. The real manager reads JSON with JSON.parse
// (`__proto__` is a field) and accepts them (compared with it in the real-manager suite, body-fields.test.ts);
// the sandbox, which runs in this process here, answers them and nothing of them reaches Object.prototype.
// `--strict` still refuses them.

const t = useSandbox();
const strictT = useSandbox({ strict: true });
const json = { 'content-type': 'application/json' };

const PROTOTYPE_NAMES = Object.getOwnPropertyNames(Object.prototype).sort();

afterEach(async () => {
  await t.sandbox.reset();
});

/** Every manager operation that takes a body, each given `__proto__`, `constructor` and `prototype` fields holding what a pollution would add. */
const HOSTILE =
  '{"__proto__":{"polluted":1,"logs":7},"constructor":{"prototype":{"polluted":2}},"proxy":{"__proto__":{"polluted":3,"country":"de"},"constructor":{"prototype":{"polluted":4}},"port":25555,"zone":"res_zone"},"ip":"1.2.3.4","ips":["1.2.3.5"],"port":24000}';
const WITH_BODY: Array<[string, string]> = [
  ['POST', '/api/proxies'],
  ['PUT', '/api/proxies/24000'],
  ['PUT', '/api/settings'],
  ['POST', '/api/proxies/delete'],
  ['POST', '/api/banip'],
  ['POST', '/api/proxies/24000/banip'],
  ['POST', '/api/proxies/24000/banips'],
  ['POST', '/api/proxies/24000/unbanip'],
  ['POST', '/api/proxies/24000/unbanips'],
  ['POST', '/api/enable_ssl'],
  ['POST', '/api/add_whitelist_ip'],
  ['POST', '/api/perr'],
  ['POST', '/api/lpm_user'],
  ['POST', '/api/refresh_ips'],
  ['POST', '/api/update_ips'],
  ['POST', '/api/refresh_sessions/24000'],
];

describe('fields named __proto__, constructor, prototype', () => {
  it('on every manager operation with a body: answered below 500 (as the real one reads it), Object.prototype untouched', async () => {
    for (const [method, path] of WITH_BODY) {
      const r = await raw(t.sandbox.managerUrl, method, path, { text: HOSTILE, headers: json });
      expect(r.status, `${method} ${path}: ${r.text.slice(0, 200)}`).toBeLessThan(500);
    }
    expect(Object.getOwnPropertyNames(Object.prototype).sort()).toEqual(PROTOTYPE_NAMES);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("a created port stores no `__proto__` and reads nothing through one; the settings take none of its fields; the record of calls keeps the body's field", async () => {
    const created = await raw(t.sandbox.managerUrl, 'POST', '/api/proxies', { text: HOSTILE, headers: json });
    expect(created.status).toBe(200);
    const port = (await raw(t.sandbox.managerUrl, 'GET', '/api/proxies')).json().find((c: { port: number }) => c.port === 25555);
    expect(Object.hasOwn(port, '__proto__')).toBe(false);
    expect(port).not.toHaveProperty('country');
    expect(port.constructor).toEqual({ prototype: { polluted: 4 } });
    const settings = await raw(t.sandbox.managerUrl, 'PUT', '/api/settings', { text: HOSTILE, headers: json });
    expect(settings.json().logs).not.toBe(7);
    const calls = (await raw(t.sandbox.managerUrl, 'GET', '/__sandbox/calls?operationId=createProxy')).json().calls;
    expect(Object.hasOwn(calls.at(-1).body, '__proto__')).toBe(true);
    expect(Object.getOwnPropertyNames(Object.prototype).sort()).toEqual(PROTOTYPE_NAMES);
  });

  it('--strict refuses them (400), as before', async () => {
    const r = await raw(strictT.sandbox.managerUrl, 'POST', '/api/proxies', { text: HOSTILE, headers: json });
    expect(r.status).toBe(400);
  });
});
