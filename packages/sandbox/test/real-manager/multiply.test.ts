import { loadBundle, schemaValidator } from '@zone-api/testkit';
import { describe, expect, it } from 'vitest';
import { type Reply, SHIFT, usePair } from './pair.js';

// `multiply` and `users` as the real manager 1.570.247 runs them, played against it and the sandbox
// side by side (pair.ts; a sandbox port is the real one's number + SHIFT): one stored configuration,
// duplicates on the next ports, a duplicate neither deleted nor updated; users as lower-case names.

const doc = loadBundle('manager');
const validator = schemaValidator(doc);
const RUNNING = '#/paths/~1api~1proxies_running/get/responses/200/content/application~1json/schema';

const pair = usePair();

type Cfg = { port: number; proxy_type?: string; master_port?: number; multiply?: number; users?: unknown; user?: string };
/** The configs of the ports from `port` to `port + 9`, renumbered from 0, with the fields multiply decides. */
function around(r: Reply, port: number, shift: number) {
  return (r.body as Cfg[])
    .filter((c) => c.port >= port + shift && c.port < port + shift + 10)
    .sort((a, b) => a.port - b.port)
    .map((c) => ({
      port: c.port - shift - port,
      proxy_type: c.proxy_type,
      ...(c.master_port !== undefined ? { master_port: c.master_port - shift - port } : {}),
      ...(c.multiply !== undefined ? { multiply: c.multiply } : {}),
      ...(c.users !== undefined ? { users: c.users } : {}),
      ...(c.user !== undefined ? { user: c.user } : {}),
    }));
}

async function listed(path: string, port: number) {
  const [real, sbx] = await pair.both(() => ['GET', path]);
  expect(real.status).toBe(200);
  if (path === '/api/proxies_running') expect(validator.validate(RUNNING, real.body)).toBeNull();
  expect(around(sbx, port, SHIFT), `sandbox ${path} as the real manager`).toEqual(around(real, port, 0));
  return around(real, port, 0);
}

describe('multiply as the real manager runs it', () => {
  it('one stored configuration, its duplicates running on the next ports; a duplicate is neither deleted nor updated', async () => {
    const port = 25400;
    await pair.createBoth(port, { proxy_type: 'persist', multiply: 3 });
    expect(await listed('/api/proxies', port)).toEqual([{ port: 0, proxy_type: 'persist', multiply: 3 }]);
    expect(await listed('/api/proxies_running', port)).toEqual([
      { port: 0, proxy_type: 'persist', multiply: 3 },
      { port: 1, proxy_type: 'duplicate', master_port: 0, multiply: 3 },
      { port: 2, proxy_type: 'duplicate', master_port: 0, multiply: 3 },
    ]);
    await pair.same((at) => ['DELETE', `/api/proxies/${at(port + 1)}`], {
      status: 500,
      media: 'text/html',
      body: 'Server error: cannot delete this port',
    });
    const [realPut, sbxPut] = await pair.both((at) => ['PUT', `/api/proxies/${at(port + 2)}`, { proxy: { ssl: true } }]);
    expect(realPut).toMatchObject({ status: 400, body: { errors: [{ msg: `No proxy at port ${port + 2}` }] } });
    expect(sbxPut).toMatchObject({ status: 400, body: { errors: [{ msg: `No proxy at port ${port + 2 + SHIFT}` }] } });
    // Updating the master rebuilds its duplicates.
    await pair.same(
      (at) => ['PUT', `/api/proxies/${at(port)}`, { proxy: { multiply: 2 } }],
      { status: 200 },
      (r) => r.status,
    );
    expect(await listed('/api/proxies_running', port)).toEqual([
      { port: 0, proxy_type: 'persist', multiply: 2 },
      { port: 1, proxy_type: 'duplicate', master_port: 0, multiply: 2 },
    ]);
    // A delete naming the master and a duplicate deletes the master (and so its duplicate) and answers the 500.
    await pair.same((at) => ['POST', '/api/proxies/delete', { ports: [at(port), at(port + 1)] }], {
      status: 500,
      body: 'Server error: cannot delete this port',
    });
    expect(await listed('/api/proxies_running', port)).toEqual([]);
  });

  it('a port a duplicate runs on is in use', async () => {
    const port = 25420;
    await pair.createBoth(port, { multiply: 2 });
    const [real, sbx] = await pair.both((at) => ['POST', '/api/proxies', { proxy: { port: at(port + 1) } }]);
    expect(real).toMatchObject({ status: 400, body: { errors: [{ msg: `port ${port + 1} in use by another proxy`, field: 'port' }] } });
    expect(sbx).toMatchObject({
      status: 400,
      body: { errors: [{ msg: `port ${port + 1 + SHIFT} in use by another proxy`, field: 'port' }] },
    });
  });
});

describe('users as the real manager reads them', () => {
  it('names stored in lower case, each port of a multiply running as the next; the documented {user} form is its 500', async () => {
    const port = 25440;
    await pair.createBoth(port, { proxy_type: 'persist', multiply: 3, multiply_users: true, users: ['Ann', 'bob'] });
    expect(await listed('/api/proxies', port)).toEqual([{ port: 0, proxy_type: 'persist', multiply: 3, users: ['ann', 'bob'] }]);
    expect(await listed('/api/proxies_running', port)).toEqual([
      { port: 0, proxy_type: 'persist', multiply: 3, users: ['ann', 'bob'], user: 'ann' },
      { port: 1, proxy_type: 'duplicate', master_port: 0, multiply: 3, user: 'bob' },
      { port: 2, proxy_type: 'duplicate', master_port: 0, multiply: 3, user: 'ann' },
    ]);
    await pair.same((at) => ['POST', '/api/proxies', { proxy: { port: at(port + 5), users: [{ user: 'carl' }] } }], {
      status: 500,
      media: 'text/html',
      body: 'Server error: x.toLowerCase is not a function',
    });
  });
});
