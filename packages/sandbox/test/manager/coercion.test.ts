import { describe, expect, it } from 'vitest';
import { Conformance, docs, raw, useSandbox } from '../helpers.js';

// The manager reads request bodies and keeps port configurations as the real local proxy manager
// 1.570.247 does (the default; `strict` checks them against the spec: validation.test.ts). Every answer
// here is the real manager's, played against it side by side in
// packages/sandbox/test/real-manager/coercion.test.ts; this file holds the sandbox to it in `pnpm test`,
// and checks that each answer is one the spec declares.
const t = useSandbox();
const strict = useSandbox({ strict: true });
const conformance = new Conformance(docs.manager);
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const JSON_TYPE = { 'content-type': 'application/json' };

async function send(method: string, path: string, options: Parameters<typeof raw>[3] = {}, sbx = t.sandbox) {
  const r = await raw(sbx.managerUrl, method, path, options);
  expect(conformance.check(method, path, r.status, r.headers.get('content-type'), r.text), `${method} ${path}: ${r.text}`).toEqual([]);
  return r;
}
const storedPort = (port: number) => t.sandbox.state().manager.ports.find((p) => p.port === port) as Record<string, unknown> | undefined;

describe('createProxy', () => {
  it('stores the fields as given, unknown ones too, leaves out empty ones and runs proxy_type "" as persist', async () => {
    await t.sandbox.reset();
    const proxy = {
      ssl: 'false',
      proxy_retry: '3',
      dns: true,
      debug: 'not-in-enum',
      max_ban_retries: -1,
      country: ['us'],
      unknown_field: 1,
    };
    const r = await send('POST', '/api/proxies', { body: { proxy: { port: 25300, asn: '', proxy_type: '', ...proxy } } });
    expect(r.status, r.text).toBe(200);
    const stored = storedPort(25300);
    expect(stored).toMatchObject({ ...proxy, port: 25300, proxy_type: 'persist', gb_cost: 0.6, password: 'z8x7c6v5b4n3' });
    expect(stored).not.toHaveProperty('asn');
    const strictly = await send('POST', '/api/proxies', { body: { proxy: { port: 25301, ...proxy } } }, strict.sandbox);
    expect(strictly.status).toBe(400);
  });

  it('a form body is read as its JSON; a port given as a string is stored as its number', async () => {
    const r = await send('POST', '/api/proxies', { text: 'proxy[port]=25310&proxy[ssl]=true', headers: FORM });
    expect(r.status, r.text).toBe(200);
    expect(storedPort(25310)).toMatchObject({ port: 25310, ssl: 'true' });
    expect((await send('POST', '/api/proxies', { text: 'proxy[port]=25311', headers: FORM }, strict.sandbox)).status).toBe(400);
  });

  it('multiply as text reaches past the API port by its digits: "Proxy port conflict UI port", nothing created', async () => {
    // The real manager's port+(multiply||1)-1 (mgr_proxy.js 151-160): 24000+"0"-1 is 239999. The API's port is above 25400.
    expect(Number(new URL(t.sandbox.managerUrl).port)).toBeGreaterThan(25400);
    const before = t.sandbox.state().manager.ports.length;
    for (const options of [
      { text: 'proxy[multiply]=0', headers: FORM },
      { text: 'proxy[port]=25400&proxy[multiply]=1', headers: FORM },
      { body: { proxy: { port: 25400, multiply: '2' } } },
    ]) {
      const r = await send('POST', '/api/proxies', options);
      expect([r.status, r.json()]).toEqual([400, { errors: [{ msg: 'Proxy port conflict UI port' }] }]);
    }
    expect(t.sandbox.state().manager.ports.length).toBe(before);
    const counted = await send('POST', '/api/proxies', { body: { proxy: { port: 25400, multiply: 2 } } });
    expect(counted.status, counted.text).toBe(200);
    await send('DELETE', '/api/proxies/25400');
  });

  it('crashes as the real manager does: no body, no proxy, a text body, users that is no list; bad JSON is its 500', async () => {
    const before = t.sandbox.state();
    const crash = "Server error: Cannot read properties of undefined (reading 'port')";
    for (const options of [{}, { body: {} }, { text: '{"proxy":{}}', headers: { 'content-type': 'text/plain' } }]) {
      const r = await send('POST', '/api/proxies', options);
      expect([r.status, r.text]).toEqual([500, crash]);
    }
    const users = await send('POST', '/api/proxies', { body: { proxy: { users: 'x' } } });
    expect([users.status, users.text]).toEqual([500, 'Server error: req.body.proxy.users.map is not a function']);
    const bad = await send('POST', '/api/proxies', { text: '{"proxy": {', headers: JSON_TYPE });
    expect([bad.status, bad.headers.get('content-type'), bad.text]).toEqual([500, 'text/html; charset=utf-8', 'Server Error']);
    const port = await send('POST', '/api/proxies', { body: { proxy: { port: 'abc' } } });
    expect(port.json()).toEqual({ errors: [{ msg: 'Invalid port. It must be a number >= 1000', field: 'port' }] });
    expect(t.sandbox.state()).toEqual(before);
  });

  it("JSON its body parser refuses (strict: no object or array; a charset but utf-8) is its 500 on any route, without the API's headers", async () => {
    const before = t.sandbox.state();
    const refused: [string, string, string, Record<string, string>][] = [
      ['PUT', '/api/settings', '7', JSON_TYPE],
      ['PUT', '/api/settings', ' null\n', JSON_TYPE],
      ['POST', '/api/proxies', '"x"', JSON_TYPE],
      ['POST', '/api/perr', '\t ', JSON_TYPE],
      ['PUT', '/api/logs_reset', '{}', { 'content-type': 'application/json; charset=latin1' }],
      ['DELETE', '/api/proxies/25999', '{}', { 'content-type': 'application/json; charset=utf8' }],
    ];
    for (const [method, path, text, headers] of refused) {
      const r = await send(method, path, { text, headers });
      expect([r.status, r.headers.get('content-type'), r.text, r.headers.get('deprecation')], `${method} ${path} ${text}`).toEqual([
        500,
        'text/html; charset=utf-8',
        'Server Error',
        null,
      ]);
    }
    expect(t.sandbox.state()).toEqual(before);
    // An array passes it (a handler then reads it as an object without fields); a byte order mark is read.
    expect((await send('PUT', '/api/settings', { text: '[]', headers: JSON_TYPE })).status).toBe(200);
    expect((await send('PUT', '/api/settings', { text: '\uFEFF{}', headers: JSON_TYPE })).status).toBe(200);
  });
});

describe('updateProxy converts the fields to their types', () => {
  it('"true", "5", "0" become true, 5, false; other values stay; no proxy is the observed 400', async () => {
    await send('POST', '/api/proxies', { body: { proxy: { port: 25330 } } });
    const update = { ssl: 'true', proxy_retry: '5', dns: 'not-in-enum', sticky_ip: '0', country: 'de' };
    expect((await send('PUT', '/api/proxies/25330', { body: { proxy: update } })).status).toBe(200);
    expect(storedPort(25330)).toMatchObject({ ssl: true, proxy_retry: 5, dns: 'not-in-enum', sticky_ip: false, country: 'de' });
    expect((await send('PUT', '/api/proxies/25330', { text: 'proxy[rotate_session]=true', headers: FORM })).status).toBe(200);
    expect(storedPort(25330)?.rotate_session).toBe(true);
    const none = await send('PUT', '/api/proxies/25330', { body: {} });
    expect([none.status, none.json()]).toEqual([400, { errors: [{ msg: "Request body should contain 'proxy' field", body: '{}' }] }]);
  });
});

describe('deleting and banning', () => {
  it('deleteProxies without ports deletes nothing (204); a form body names ports', async () => {
    await send('POST', '/api/proxies', { body: { proxy: { port: 25340 } } });
    expect((await send('POST', '/api/proxies/delete', { body: {} })).status).toBe(204);
    expect(storedPort(25340)).toBeDefined();
    expect((await send('POST', '/api/proxies/delete', { text: 'ports[0]=25340', headers: FORM })).status).toBe(204);
    expect(storedPort(25340)).toBeUndefined();
  });

  it('the port is read before the body: a port that does not exist, or is no number, is answered first', async () => {
    const cases: Array<[string, Parameters<typeof raw>[3], number, string]> = [
      ['/api/proxies/25999/unbanips', { body: {} }, 500, 'Server error: No proxy at port 25999'],
      ['/api/proxies/25999/unbanip', {}, 500, 'Server error: No proxy at port 25999'],
      ['/api/proxies/25999/banip', { body: { ips: 'x' } }, 400, 'No proxy at port 25999'],
      ['/api/proxies/abc/banips', { body: {} }, 400, 'No proxy at port abc'],
      ['/api/proxies/0/banip', { text: 'ip=10.1.1.1', headers: FORM }, 400, 'No proxy at port 0'],
    ];
    for (const [path, options, status, text] of cases) {
      const r = await send('POST', path, options);
      expect([path, r.status, r.text]).toEqual([path, status, text]);
    }
    expect((await send('POST', '/api/proxies/abc/banips', { body: {} }, strict.sandbox)).text).toMatch(/path\.port/);
  });

  it('a port created with a proxy_type other than persist runs without being stored', async () => {
    expect((await send('POST', '/api/proxies', { body: { proxy: { port: 25360, proxy_type: 'x1', country: 'us' } } })).status).toBe(200);
    // (raw: the ports earlier cases stored hold values outside the spec's types, as the real manager stores them)
    const listed = (await raw(t.sandbox.managerUrl, 'GET', '/api/proxies')).json() as Array<{ port: number }>;
    expect(listed.map((p) => p.port)).not.toContain(25360);
    const running = ((await raw(t.sandbox.managerUrl, 'GET', '/api/proxies_running')).json() as Array<Record<string, unknown>>).find(
      (p) => p.port === 25360,
    );
    // Only what the running port says of itself: no stored fields (country, password, whitelist).
    expect(running).toEqual({
      proxy_type: 'x1',
      port: 25360,
      dns: 'local',
      zone: t.sandbox.state().manager.settings.zone,
      tls_lib: 'open_ssl',
      route_err: 'pass_dyn',
      proxy_connection_type: 'http',
    });
    const update = await send('PUT', '/api/proxies/25360', { body: { proxy: { country: 'de' } } });
    expect([update.status, update.json()]).toEqual([400, { errors: [{ msg: 'No proxy at port 25360' }] }]);
    expect((await send('DELETE', '/api/proxies/25360')).status).toBe(204);
    // One running as a duplicate cannot be deleted, as a multiplied port's duplicate.
    expect((await send('POST', '/api/proxies', { body: { proxy: { port: 25361, proxy_type: 'duplicate' } } })).status).toBe(200);
    const del = await send('DELETE', '/api/proxies/25361');
    expect([del.status, del.text]).toEqual([500, 'Server error: cannot delete this port']);
  });

  it('a change of the default whitelist reaches every port: old default entries out, new ones first, its own kept', async () => {
    await send('POST', '/api/proxies', { body: { proxy: { port: 25370, whitelist_ips: ['10.2.2.2'] } } });
    const defaults = () => {
      const st = t.sandbox.state().manager.settings;
      return [...new Set([...(st.fixed_whitelist_ips ?? []), ...(st.www_whitelist_ips ?? []), ...(st.whitelist_ips ?? [])])];
    };
    expect(storedPort(25370)?.whitelist_ips).toEqual([...defaults(), '10.2.2.2']);
    expect((await send('POST', '/api/add_whitelist_ip', { body: { ip: '192.0.2.7' } })).status).toBe(200);
    expect(defaults()).toContain('192.0.2.7');
    expect(storedPort(25370)?.whitelist_ips).toEqual([...defaults(), '10.2.2.2']);
    expect((await send('PUT', '/api/settings', { body: { whitelist_ips: ['10.3.3.3'] } })).status).toBe(200);
    expect(storedPort(25370)?.whitelist_ips).toEqual([...defaults(), '10.2.2.2']);
    expect(storedPort(25370)?.whitelist_ips).toContain('10.3.3.3');
  });

  it('reverse_lookup_values that the real manager cannot start a port with are refused, naming the field; an unknown iface listens on loopback', async () => {
    const refused = await send('POST', '/api/proxies', { body: { proxy: { port: 25390, reverse_lookup_values: [true] } } });
    expect(refused.status).toBe(400);
    expect(refused.json()).toMatchObject({
      errors: [{ field: 'reverse_lookup_values', msg: expect.stringMatching(/^reverse_lookup_values\[0\] is no text line/) }],
    });
    expect(storedPort(25390)).toBeUndefined();
    // Read as DNS instead, or as text lines, they are stored as given.
    expect(
      (await send('POST', '/api/proxies', { body: { proxy: { port: 25390, reverse_lookup_values: [7], reverse_lookup_dns: true } } }))
        .status,
    ).toBe(200);
    expect(
      (await send('POST', '/api/proxies', { body: { proxy: { port: 25391, reverse_lookup_values: ['10.1.1.1 a.example'] } } })).status,
    ).toBe(200);
    const update = await send('PUT', '/api/proxies/25391', { body: { proxy: { reverse_lookup_values: 7 } } });
    expect([update.status, update.json()]).toMatchObject([400, { errors: [{ field: 'reverse_lookup_values' }] }]);
    // An iface that names no address nor interface: the real manager listens on every interface, the sandbox on loopback.
    expect((await send('POST', '/api/proxies', { body: { proxy: { port: 25392, iface: 'x1' } } })).status).toBe(200);
    expect(storedPort(25392)).toMatchObject({ iface: 'x1' });
  });

  it('deleteProxy and getSessions read a port that is no number as an unknown port (500 and 400 text); strict refuses it', async () => {
    const del = await send('DELETE', '/api/proxies/abc');
    expect([del.status, del.text]).toEqual([500, 'Server error: this proxy does not exist']);
    const sessions = await send('GET', '/api/sessions/abc');
    expect([sessions.status, sessions.headers.get('content-type')?.split(';')[0], sessions.text]).toEqual([
      400,
      'text/html',
      'server does not exist',
    ]);
    expect((await send('DELETE', '/api/proxies/abc', {}, strict.sandbox)).text).toMatch(/path\.port/);
    // deleteProxy reads the port as a number (`+port`: hexadecimal names it too).
    await send('POST', '/api/proxies', { body: { proxy: { port: 25396 } } });
    expect((await send('GET', '/api/sessions/25396')).json()).toEqual({});
    expect((await send('DELETE', `/api/proxies/0x${(25396).toString(16)}`)).status).toBe(204);
    expect(storedPort(25396)).toBeUndefined();
  });

  it('a port with a leading zero: looked up as a key (none) by most, found by updateProxy (==); strict reads it as the number', async () => {
    await send('POST', '/api/proxies', { body: { proxy: { port: 25397 } } });
    const text = async (method: string, path: string, o: Parameters<typeof raw>[3] = {}) => {
      const r = await send(method, path, o);
      return [r.status, r.text];
    };
    expect(await text('GET', '/api/sessions/025397')).toEqual([400, 'server does not exist']);
    expect(await text('GET', '/api/banlist/025397')).toEqual([400, 'server does not exist']);
    expect(await text('GET', '/api/proxy_status/025397')).toEqual([200, '{"status":"Unknown proxy"}']);
    expect(await text('POST', '/api/refresh_sessions/025397')).toEqual([400, '']);
    expect(await text('POST', '/api/proxies/025397/banip', { body: { ip: '10.1.1.1' } })).toEqual([400, 'No proxy at port 025397']);
    expect(await text('POST', '/api/proxies/025397/unbanips')).toEqual([500, 'Server error: No proxy at port 025397']);
    expect((await send('PUT', '/api/proxies/025397', { body: { proxy: { country: 'us' } } })).status).toBe(200);
    expect(storedPort(25397)).toMatchObject({ country: 'us' });
    expect((await send('GET', '/api/sessions/25397')).json()).toEqual({});
    await send('POST', '/api/proxies', { body: { proxy: { port: 25397 } } }, strict.sandbox);
    expect((await send('GET', '/api/sessions/025397', {}, strict.sandbox)).json()).toEqual({});
  });

  it('proxies_running shows the running port: a number field given as no number runs as NaN (null)', async () => {
    await send('POST', '/api/proxies', { body: { proxy: { port: 25398, vip: 'abc' } } });
    expect(storedPort(25398)).toMatchObject({ vip: 'abc' });
    const running = (await raw(t.sandbox.managerUrl, 'GET', '/api/proxies_running')).json() as unknown as Array<Record<string, unknown>>;
    expect(running.find((p) => p.port === 25398)).toHaveProperty('vip', null);
  });

  it('on a port: form bans, a subnet is no IP, unbanips ignores its body, an all-ports ban needs an ip', async () => {
    await send('POST', '/api/proxies', { body: { proxy: { port: 25350 } } });
    expect((await send('POST', '/api/proxies/25350/banip', { text: 'ip=10.1.1.1', headers: FORM })).status).toBe(204);
    expect((await send('GET', '/api/banlist/25350')).json()).toEqual({ ips: ['10.1.1.1'] });
    expect((await send('POST', '/api/proxies/25350/unbanip', { body: { ip: '10.9.0.0/16' } })).text).toBe('No IP provided');
    expect((await send('POST', '/api/banip', { body: { domain: 'x1', ports: [] } })).text).toBe('No IP provided');
    expect((await send('POST', '/api/banip', { text: 'domain=x1', headers: FORM })).text).toBe('No IP provided');
    expect((await send('POST', '/api/proxies/25350/unbanips', { body: { ip: 'not-an-ip' } })).text).toBe('OK');
    expect((await send('GET', '/api/banlist/25350')).json()).toEqual({ ips: [] });
    const bad = await send('POST', '/api/proxies/25350/banips', { text: '{bad', headers: JSON_TYPE });
    expect([bad.status, bad.text]).toEqual([500, 'Server Error']);
  });
});

describe('settings', () => {
  it('converted as the real manager converts them, form and text bodies read, invalid whitelist entries dropped; values it would answer outside the spec refused', async () => {
    const settings = () => t.sandbox.state().manager.settings as unknown as Record<string, unknown>;
    expect(
      (await send('PUT', '/api/settings', { body: { request_stats: 'false', logs: '5', har_limit: '100', unknown_field: 1 } })).status,
    ).toBe(200);
    expect(settings()).toMatchObject({ request_stats: false, logs: 5, har_limit: 100 });
    expect((await send('PUT', '/api/settings', { text: 'har_limit=200&logs=3&request_stats=true', headers: FORM })).status).toBe(200);
    expect(settings()).toMatchObject({ request_stats: true, logs: 3, har_limit: 200 });
    expect((await send('PUT', '/api/settings', { body: { logs: true } })).json()).toMatchObject({ logs: 1 });
    expect((await send('PUT', '/api/settings', { text: 'hello', headers: { 'content-type': 'text/plain' } })).status).toBe(200);
    expect(settings()).toMatchObject({ logs: 1, har_limit: 200 });
    const wl = await send('PUT', '/api/settings', { body: { whitelist_ips: ['300.1.1.1', '10.1.1.1', '127.0.0.1', '10.9.1.5/16'] } });
    expect(wl.json()).toMatchObject({ whitelist_ips: ['10.1.1.1', '10.9.0.0/16'] });
    expect((await send('PUT', '/api/settings', { body: { www_whitelist_ips: ['not-an-ip'] } })).json()).toMatchObject({
      www_whitelist_ips: ['not-an-ip'],
    });
    for (const body of [{ zone: 7 }, { logs: 'abc' }, { har_limit: 'abc' }, { request_stats: 7 }]) {
      const r = await send('PUT', '/api/settings', { body });
      expect([r.status, r.text], JSON.stringify(body)).toEqual([400, expect.stringContaining(`body.${Object.keys(body)[0]}`)]);
    }
    // A `zone` that is text is stored as given, empty or unknown, as the real manager stores it (running-ports.test.ts).
    const zone = settings().zone;
    // listZones answers it as its `def`, of any length (lib/zones.js 67-76): send checks it against the spec.
    for (const given of ['', 'no_such_zone', 'z'.repeat(300)]) {
      const r = await send('PUT', '/api/settings', { body: { zone: given } });
      expect([r.status, r.json().zone], given).toEqual([200, given]);
      expect(settings().zone).toBe(given);
      const zones = await send('GET', '/api/zones');
      expect([zones.status, zones.json().def]).toEqual([200, given]);
    }
    await send('PUT', '/api/settings', { body: { zone } });
    await send('PUT', '/api/settings', { body: { www_whitelist_ips: [], whitelist_ips: [] } });
  });
});

describe('the whitelist routes', () => {
  const NEED = 'You need to pass an IP to add\n';
  const TEXT = { 'content-type': 'text/plain' };
  const noIp: Array<Parameters<typeof raw>[3]> = [
    {},
    { text: 'ip=192.0.2.9', headers: TEXT },
    { text: 'x=1', headers: FORM },
    { body: {} },
    { body: { ip: '' } },
    { body: { ip: 0 } },
    { body: [] },
  ];

  it('read `ip` of any body unchecked: none, a text, a form without it or a false one is 400 with the real text; no text or no IP 422', async () => {
    const admin = () => [...(t.sandbox.state().manager.settings.www_whitelist_ips ?? [])];
    const before = admin();
    for (const options of noIp) {
      const r = await send('POST', '/api/add_whitelist_ip', options);
      expect([r.status, r.headers.get('content-type')?.split(';')[0], r.text], JSON.stringify(options)).toEqual([400, 'text/html', NEED]);
    }
    for (const ip of [7, true, ['192.0.2.9'], { ip: '192.0.2.9' }, 'any', 'nope']) {
      const r = await send('POST', '/api/add_whitelist_ip', { body: { ip } });
      expect([r.status, r.text], JSON.stringify(ip)).toEqual([422, 'Wrong format\n']);
    }
    expect(admin()).toEqual(before);
    // A form body with `ip` is read as the real manager reads it (its urlencoded parser).
    expect((await send('POST', '/api/add_whitelist_ip', { text: 'ip=192.0.2.9', headers: FORM })).status).toBe(200);
    expect(admin()).toEqual([...before, '192.0.2.9']);
    await send('PUT', '/api/settings', { body: { www_whitelist_ips: before } });
  });

  it('add_wip checks the token first, then reads `ip` as add_whitelist_ip does', async () => {
    const token = (await send('GET', '/api/gen_token')).json().token as string;
    expect((await send('POST', '/api/add_wip', {})).status).toBe(403);
    for (const options of noIp) {
      const r = await send('POST', '/api/add_wip', { ...options, headers: { ...options?.headers, Authorization: token } });
      expect([r.status, r.text], JSON.stringify(options)).toEqual([400, NEED]);
    }
    const bad = await send('POST', '/api/add_wip', { body: { ip: 7 }, headers: { Authorization: token } });
    expect([bad.status, bad.text]).toEqual([422, 'Wrong format\n']);
  });

  it('--strict refuses a body without `ip` with the validation answer, naming the field', async () => {
    const r = await send('POST', '/api/add_whitelist_ip', { body: {} }, strict.sandbox);
    expect([r.status, r.text]).toEqual([400, expect.stringContaining('body.ip')]);
  });
});

describe('update_ips', () => {
  it('the same lists update the port in place (the stored configuration gains the plan’s kind, the running one keeps no Zone); other lists only set them', async () => {
    await t.sandbox.reset();
    expect((await send('POST', '/api/proxies', { body: { proxy: { port: 25400 } } })).status).toBe(200);
    const running = async () => (await send('GET', '/api/proxies_running')).json().find((p: { port: number }) => p.port === 25400);
    expect(await running()).toMatchObject({ zone: expect.any(String) });
    expect(storedPort(25400)).not.toHaveProperty('static');
    expect((await send('POST', '/api/update_ips', { body: { port: 25400, ips: [] } })).text).toBe('ok');
    expect(storedPort(25400)).toMatchObject({
      static: expect.any(Boolean),
      mobile: false,
      unblock: false,
      super_proxy_ports: [],
      ips: [],
      vips: [],
    });
    expect(storedPort(25400)).toHaveProperty('av_server_url');
    expect(await running()).not.toHaveProperty('zone');
    // Other lists restart the port with them, nothing else added.
    await send('POST', '/api/proxies', { body: { proxy: { port: 25401 } } });
    expect((await send('POST', '/api/update_ips', { body: { port: 25401, ips: ['192.0.2.21'] } })).text).toBe('ok');
    expect(storedPort(25401)).toMatchObject({ ips: ['192.0.2.21'], vips: [] });
    expect(storedPort(25401)).not.toHaveProperty('static');
  });
});

describe('smtp', () => {
  it('a list with an entry that is no text is refused, naming the field, at create and update (it stops the real manager)', async () => {
    await t.sandbox.reset();
    for (const smtp of [[1], [true], ['x1', 7]]) {
      const r = await send('POST', '/api/proxies', { body: { proxy: { port: 25410, smtp } } });
      expect([r.status, r.json().errors?.[0]?.field], JSON.stringify(smtp)).toEqual([400, 'smtp']);
    }
    expect(storedPort(25410)).toBeUndefined();
    expect((await send('POST', '/api/proxies', { body: { proxy: { port: 25410, smtp: ['x1'] } } })).status).toBe(200);
    const r = await send('PUT', '/api/proxies/25410', { body: { proxy: { smtp: [1] } } });
    expect([r.status, r.json().errors?.[0]?.field]).toEqual([400, 'smtp']);
    expect(storedPort(25410)?.smtp).toEqual(['x1']);
  });
});
