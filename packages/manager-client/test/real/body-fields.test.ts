import { describe, expect, it } from 'vitest';
import { call, type Reply, SHIFT, usePair } from './pair.js';

// Bodies whose fields are named as Object.prototype's (`__proto__`, `constructor`, `toString`), and JSON
// arrays where an object is expected, played against the real local proxy manager 1.570.247 and the
// sandbox (default, not strict), answers and the state read back compared value by value. The real one's
// body-parser reads JSON with JSON.parse, which makes `__proto__` a field like any other; its handlers
// then read the fields they name. The sandbox runs in this process: nothing it reads may reach
// Object.prototype. Bodies are written as JSON text: an object literal would make `__proto__` the
// prototype, not a field. Each case uses ports of its own (the sandbox's are + SHIFT).

const s = usePair();

type Config = Record<string, unknown>;

/** The stored configurations of these ports (GET /api/proxies) on each side, the sandbox's numbers taken back to the real one's. */
async function stored(ports: number[]): Promise<[Config[], Config[]]> {
  const [real, sbx] = await s.both(() => ['GET', '/api/proxies']);
  const of = (r: Reply, shift: number) =>
    (r.body as Config[]).filter((c) => ports.includes((c.port as number) - shift)).map((c) => ({ ...c, port: (c.port as number) - shift }));
  return [of(real, 0), of(sbx, SHIFT)];
}

const status = (r: Reply) => ({ status: r.status, media: r.media });

describe('fields named as those of Object.prototype', () => {
  it('a port created with `__proto__` at its top stores it nowhere; inside a field it is data, stored and answered; `constructor`, `toString`, `hasOwnProperty`, `valueOf` are fields', async () => {
    const port = 26100;
    const bodies = [
      (p: number) => `{"proxy":{"port":${p},"zone":"res_zone","__proto__":{"country":"de","ssl":true,"polluted":1},"city":"x"}}`,
      (p: number) => `{"proxy":{"port":${p},"zone":"res_zone","__proto__":"text"}}`,
      (p: number) => `{"proxy":{"port":${p},"zone":"res_zone","__proto__":null}}`,
      (p: number) =>
        `{"proxy":{"port":${p},"zone":"res_zone","x":{"__proto__":{"a":1},"b":2},"rules":[{"__proto__":{"z":1},"action":{"ban_ip":"1m"},"status":"403"}]}}`,
      (p: number) =>
        `{"proxy":{"port":${p},"zone":"res_zone","constructor":{"prototype":{"p":1}},"toString":"ts","hasOwnProperty":"h","valueOf":1}}`,
      (p: number) => `{"__proto__":{"x":1},"proxy":{"port":${p},"zone":"res_zone"}}`,
    ];
    for (const [i, body] of bodies.entries()) {
      const [real, sbx] = await s.both((at) => ['POST', '/api/proxies', body(at(port + i)), 'application/json']);
      expect(status(real), body(port + i)).toEqual({ status: 200, media: 'application/json' });
      expect(status(sbx), body(port + i)).toEqual(status(real));
    }
    const [real, sbx] = await stored(bodies.map((_, i) => port + i));
    expect(real).toHaveLength(bodies.length);
    for (const c of real) expect(Object.hasOwn(c, '__proto__'), JSON.stringify(c)).toBe(false);
    expect(real[0]).toMatchObject({ city: 'x' });
    expect(real[0]).not.toHaveProperty('country');
    expect(real[3]).toMatchObject({ x: JSON.parse('{"__proto__":{"a":1},"b":2}') });
    expect(real[4]).toMatchObject({ constructor: { prototype: { p: 1 } }, toString: 'ts', hasOwnProperty: 'h', valueOf: 1 });
    expect(sbx).toEqual(real);
    // What the port runs with too.
    const [realRun, sbxRun] = await s.both(() => ['GET', '/api/proxies_running']);
    const run = (r: Reply, shift: number) =>
      (r.body as Config[])
        .filter((c) => (c.port as number) - shift >= port && (c.port as number) - shift < port + bodies.length)
        .map((c) => JSON.stringify({ ...c, port: (c.port as number) - shift }));
    expect(run(sbxRun, SHIFT)).toEqual(run(realRun, 0));
  });

  it('`__proto__` with no `proxy` beside it: the create crashes on both (500), the update is the observed 400 that echoes the body', async () => {
    await s.same(() => ['POST', '/api/proxies', '{"__proto__":{"proxy":{"port":26120,"zone":"res_zone"}}}', 'application/json'], {
      status: 500,
      body: "Server error: Cannot read properties of undefined (reading 'port')",
    });
    await s.createBoth(26121);
    await s.same((at) => ['PUT', `/api/proxies/${at(26121)}`, '{"__proto__":{"proxy":{"country":"fr"}}}', 'application/json'], {
      status: 400,
      body: { errors: [{ msg: "Request body should contain 'proxy' field", body: '{"__proto__":{"proxy":{"country":"fr"}}}' }] },
    });
  });

  it('an update with `__proto__` at its top stores it nowhere; `constructor` and `toString` are stored as given', async () => {
    const port = 26130;
    await s.createBoth(port, { country: 'us' });
    for (const body of [
      '{"proxy":{"__proto__":{"country":"de"},"city":"x"}}',
      '{"proxy":{"constructor":"c2","toString":{"a":1},"__proto__":"y"}}',
    ]) {
      const [real, sbx] = await s.both((at) => ['PUT', `/api/proxies/${at(port)}`, body, 'application/json']);
      expect(status(real), body).toEqual({ status: 200, media: 'application/json' });
      expect(status(sbx), body).toEqual(status(real));
    }
    const [real, sbx] = await stored([port]);
    expect(real[0]).toMatchObject({ country: 'us', city: 'x', constructor: 'c2', toString: { a: 1 } });
    expect(Object.hasOwn(real[0] as Config, '__proto__')).toBe(false);
    expect(sbx).toEqual(real);
  });

  it('settings: `__proto__` at the top is ignored (what it holds changes nothing), as are `constructor` and `toString`', async () => {
    const pick = (r: Reply) => {
      const b = r.body as Config;
      return { status: r.status, logs: b.logs, har_limit: b.har_limit, whitelist_ips: b.whitelist_ips, request_stats: b.request_stats };
    };
    const real = await s.same(
      () => [
        'PUT',
        '/api/settings',
        '{"__proto__":{"logs":7,"whitelist_ips":["10.1.1.1"],"request_stats":false},"constructor":{"x":1},"toString":"t","har_limit":500}',
        'application/json',
      ],
      { status: 200 },
      pick,
    );
    expect(pick(real)).toEqual({ status: 200, logs: 1000, har_limit: 500, whitelist_ips: [], request_stats: true });
    await s.same(() => ['PUT', '/api/settings', { har_limit: 1024 }], { status: 200 }, pick);
  });

  it('bans, sessions and error reports read the fields they name, never one under `__proto__`', async () => {
    const port = 26140;
    await s.createBoth(port);
    await s.same(() => ['POST', '/api/banip', '{"__proto__":{"ip":"1.2.3.4"}}', 'application/json'], {
      status: 400,
      body: 'No IP provided',
    });
    await s.same(
      (at) => ['POST', `/api/proxies/${at(port)}/banip`, '{"ip":"1.2.3.5","__proto__":{"domain":"a.com"}}', 'application/json'],
      {
        status: 204,
      },
    );
    await s.same((at) => ['GET', `/api/banlist/${at(port)}`], { status: 200, body: { ips: ['1.2.3.5'] } });
    await s.same(
      (at) => ['POST', `/api/refresh_sessions/${at(port)}`, '{"__proto__":{"a":1}}', 'application/json'],
      { status: 200 },
      (r) => JSON.stringify(r.body).replace(/\d{5}/, 'N'),
    );
    await s.same(() => ['POST', '/api/perr', '{"__proto__":{"type":"x"}}', 'application/json'], { status: 200, body: 'OK' });
  });

  it('nothing of it reached Object.prototype in the process that runs the sandbox', () => {
    expect(Object.getOwnPropertyNames(Object.prototype).sort()).toEqual(
      [
        '__defineGetter__',
        '__defineSetter__',
        '__lookupGetter__',
        '__lookupSetter__',
        '__proto__',
        'constructor',
        'hasOwnProperty',
        'isPrototypeOf',
        'propertyIsEnumerable',
        'toLocaleString',
        'toString',
        'valueOf',
      ].sort(),
    );
    expect(({} as Config).polluted).toBeUndefined();
    expect(({} as Config).country).toBeUndefined();
  });

  it('what the real manager reads through such a prototype before it drops it, the sandbox does not read (its own choice, sandbox README)', async () => {
    // The real one copies the port with Object.assign (web_api.js 372), so `__proto__` becomes the copy's
    // prototype: its `bw_limit` is then read as the port's (web_api.js 373-374, mgr_proxy.js 358-370) and
    // stored; the sandbox takes no field from it.
    const port = 26150;
    const body = (p: number) => `{"proxy":{"port":${p},"zone":"res_zone","__proto__":{"bw_limit":{"days":1,"bytes":100}}}}`;
    await s.same((at) => ['POST', '/api/proxies', body(at(port)), 'application/json'], { status: 200 }, status);
    const [real, sbx] = await stored([port]);
    expect(real[0]).toMatchObject({ bw_limit: { days: 1, bytes: 100, renewable: false } });
    expect(sbx[0]).not.toHaveProperty('bw_limit');
  });
});

describe('a JSON array where an object is expected', () => {
  // The real manager's handlers read the fields they name of the body (`req.body.email`, …): an array has none.
  it('an error report: `OK`, as with no fields', async () => {
    await s.same(() => ['POST', '/api/perr', [{ type: 'x', message: 'y' }]], { status: 200, media: 'text/html', body: 'OK' });
    await s.same(() => ['POST', '/api/perr', []], { status: 200, media: 'text/html', body: 'OK' });
  });

  it('a user, a refresh of IPs, a port given IPs: each answered as the same call with `{}` (offline the real one fails on its cloud, parity.yaml)', async () => {
    const sandboxOnly = (path: string, body: unknown) => call(s.sandbox.managerUrl, 'POST', path, body);
    for (const path of ['/api/lpm_user', '/api/refresh_ips', '/api/update_ips']) {
      const asArray = await sandboxOnly(path, [{ email: 'a@example.com', zone: 'res_zone', port: 24000 }]);
      const asNone = await sandboxOnly(path, {});
      expect(asArray, path).toEqual(asNone);
      expect(asArray.status, path).toBe(400);
      expect(String(asArray.body), path).not.toMatch(/must be object/);
    }
    // The real one reads the array as it reads `{}`: the same 500 of its unreachable cloud.
    for (const path of ['/api/lpm_user', '/api/refresh_ips']) {
      const [asArray] = await s.both(() => ['POST', path, [{ email: 'a@example.com' }]]);
      const [asNone] = await s.both(() => ['POST', path, {}]);
      expect(asArray, path).toEqual(asNone);
      expect(asArray.status, path).toBe(500);
    }
  });
});
