import { request as httpRequest } from 'node:http';
import { brotliCompressSync, deflateRawSync, deflateSync, gzipSync } from 'node:zlib';
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

  it('what the real manager reads through such a prototype before it drops it, the sandbox does not read (its own choice, docs/fidelity.md)', async () => {
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

describe('bodies compressed, in UTF-16, or with many parameters, as body-parser reads them', () => {
  // body-parser 1.20.3 (lib/read.js 147-186, types/json.js 126-135, types/urlencoded.js 107-125, 158-166):
  // gzip and deflate inflated, any other coding refused; JSON in any `utf-…` charset it knows, UTF-8 when
  // none is named; a form in UTF-8 only, and at most `api_parameter_limit` (10,000) parameters. What it
  // cannot read is the app's 500 `Server Error`.
  interface Sent {
    label: string;
    bytes: Buffer;
    headers: Record<string, string>;
  }
  function send(base: string, method: string, path: string, sent: Sent): Promise<Reply> {
    return new Promise((resolve, reject) => {
      const u = new URL(path, base);
      const headers = { ...sent.headers, 'content-length': String(sent.bytes.length) };
      const req = httpRequest({ host: u.hostname, port: u.port, path: u.pathname, method, headers, agent: false }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          body += c;
        });
        res.on('end', () => {
          const media = res.headers['content-type']?.split(';')[0]?.trim() ?? null;
          resolve({ status: res.statusCode ?? 0, media, body: media === 'application/json' ? JSON.parse(body) : body });
        });
      });
      req.setTimeout(10_000, () => req.destroy(new Error(`no answer to ${method} ${path} (${sent.label})`)));
      req.once('error', reject);
      req.end(sent.bytes);
    });
  }
  const JSON_TYPE = 'application/json';
  const FORM_TYPE = 'application/x-www-form-urlencoded';
  const utf16 = (text: string, order: 'le' | 'be', bom: boolean) => {
    const b = Buffer.from(`${bom ? '\uFEFF' : ''}${text}`, 'utf16le');
    if (order === 'be') b.swap16();
    return b;
  };
  /** What is compared of a settings answer: status, media type, and the setting each body sets. */
  const seen = (r: Reply) => ({
    status: r.status,
    media: r.media,
    har_limit: (r.body as Config).har_limit,
    body: r.status === 200 ? '' : r.body,
  });

  async function compare(sent: Sent[], method = 'PUT'): Promise<Map<string, Reply>> {
    const reals = new Map<string, Reply>();
    for (const one of sent) {
      const real = await send(s.manager.url, method, '/api/settings', one);
      const sbx = await send(s.sandbox.managerUrl, method, '/api/settings', one);
      expect(seen(sbx), `sandbox answers ${one.label} as the real manager`).toEqual(seen(real));
      reals.set(one.label, real);
    }
    await s.same(() => ['PUT', '/api/settings', { har_limit: 1024 }], { status: 200 }, seen);
    return reals;
  }

  it('gzip and deflate are inflated, JSON and forms alike; another coding, or bytes that do not inflate: 500', async () => {
    const sent: Sent[] = [
      { label: 'gzip JSON', bytes: gzipSync('{"har_limit":601}'), headers: { 'content-type': JSON_TYPE, 'content-encoding': 'gzip' } },
      {
        label: 'deflate JSON',
        bytes: deflateSync('{"har_limit":602}'),
        headers: { 'content-type': JSON_TYPE, 'content-encoding': 'deflate' },
      },
      { label: 'gzip form', bytes: gzipSync('har_limit=603'), headers: { 'content-type': FORM_TYPE, 'content-encoding': 'GZIP' } },
      {
        label: 'identity',
        bytes: Buffer.from('{"har_limit":604}'),
        headers: { 'content-type': JSON_TYPE, 'content-encoding': 'identity' },
      },
      { label: 'br', bytes: brotliCompressSync('{"har_limit":605}'), headers: { 'content-type': JSON_TYPE, 'content-encoding': 'br' } },
      { label: 'not gzip', bytes: Buffer.from('{"har_limit":606}'), headers: { 'content-type': JSON_TYPE, 'content-encoding': 'gzip' } },
      {
        label: 'raw deflate',
        bytes: deflateRawSync('{"har_limit":607}'),
        headers: { 'content-type': JSON_TYPE, 'content-encoding': 'deflate' },
      },
    ];
    const real = await compare(sent);
    expect([...real.values()].map((r) => r.status)).toEqual([200, 200, 200, 200, 500, 500, 500]);
    expect(real.get('gzip form')?.body).toMatchObject({ har_limit: 603 });
    expect(real.get('br')).toEqual({ status: 500, media: 'text/html', body: 'Server Error' });
  });

  it('UTF-16 with and without a byte order mark, in each byte order, under each charset name: read where body-parser reads it, else 500', async () => {
    const sent: Sent[] = [];
    for (const order of ['le', 'be'] as const)
      for (const bom of [true, false])
        for (const charset of ['utf-16', 'utf-16le', 'utf-16be', undefined])
          sent.push({
            label: `UTF-16${order.toUpperCase()}${bom ? ' with BOM' : ''}, charset ${charset ?? 'none'}`,
            bytes: utf16('{"har_limit":700}', order, bom),
            headers: { 'content-type': charset ? `${JSON_TYPE}; charset=${charset}` : JSON_TYPE },
          });
    sent.push({
      label: 'a UTF-16 form',
      bytes: utf16('har_limit=701', 'le', true),
      headers: { 'content-type': `${FORM_TYPE}; charset=utf-16le` },
    });
    const real = await compare(sent);
    const read = [...real].filter(([, r]) => r.status === 200).map(([label]) => label);
    // Its own order named, or `utf-16` (iconv-lite tells the order by the mark, or by the bytes without one).
    expect(read).toEqual([
      'UTF-16LE with BOM, charset utf-16',
      'UTF-16LE with BOM, charset utf-16le',
      'UTF-16LE, charset utf-16',
      'UTF-16LE, charset utf-16le',
      'UTF-16BE with BOM, charset utf-16',
      'UTF-16BE with BOM, charset utf-16be',
      'UTF-16BE, charset utf-16',
      'UTF-16BE, charset utf-16be',
    ]);
  });

  it('a form of 10,000 parameters is read; one more is 500, whatever the route (a GET too)', async () => {
    const form = (n: number) => Buffer.from(Array.from({ length: n }, (_, i) => (i ? `k${i}=1` : 'har_limit=800')).join('&'));
    const sent = (n: number): Sent => ({ label: `${n} parameters`, bytes: form(n), headers: { 'content-type': FORM_TYPE } });
    const real = await compare([sent(10_000), sent(10_001)]);
    expect([...real.values()].map((r) => r.status)).toEqual([200, 500]);
    await compare([sent(10_001)], 'GET');
  });

  it('a form nested up to 32 levels is read, deeper is 500; a list index past the number of parameters (at least 100) names a field', async () => {
    const port = 26160;
    const statuses: number[] = [];
    for (const [i, levels] of [30, 31, 32, 33].entries()) {
      const form = (at: (p: number) => number) => `proxy[port]=${at(port + i)}&proxy[zone]=res_zone&proxy[d]${'[a]'.repeat(levels)}=x`;
      const [real, sbx] = await s.both((at) => ['POST', '/api/proxies', form(at), FORM_TYPE]);
      expect(status(sbx), `${levels} levels`).toEqual(status(real));
      statuses.push(real.status);
    }
    expect(statuses).toEqual([200, 200, 500, 500]);
    const lists = (at: (p: number) => number) => `proxy[port]=${at(port + 9)}&proxy[zone]=res_zone&proxy[l][150]=x&proxy[m][3]=y`;
    await s.same((at) => ['POST', '/api/proxies', lists(at), FORM_TYPE], { status: 200 }, status);
    const [real, sbx] = await stored([port + 9]);
    expect(real[0]).toMatchObject({ l: { 150: 'x' }, m: ['y'] });
    expect(sbx).toEqual(real);
  });

  it("forms where qs 6.13.0 (the real one's) and later versions part read as 6.13.0 reads them: a value after fields names a field, index 100 is a list's, a bracket inside brackets is dropped", async () => {
    // qs 6.16 would store l as [{a: '1'}, '2'], m as {100: 'x'} and n as {'a[b]': '1'} (router/form.ts reads forms as 6.13.0).
    const port = 26170;
    const form = (at: (p: number) => number) =>
      `proxy[port]=${at(port)}&proxy[zone]=res_zone&proxy[l][a]=1&proxy[l]=2&proxy[m][100]=x&proxy[n][a[b]]=1`;
    await s.same((at) => ['POST', '/api/proxies', form(at), FORM_TYPE], { status: 200 }, status);
    const [real, sbx] = await stored([port]);
    expect(real[0]).toMatchObject({ l: { a: '1', 2: true }, m: ['x'], n: { b: '1' } });
    expect(sbx).toEqual(real);
  });
});
