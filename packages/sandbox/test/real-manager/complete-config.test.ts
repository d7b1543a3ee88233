import { describe, expect, it } from 'vitest';
import { ACCOUNT } from './account.js';
import { type Call, type Reply, SHIFT, usePair } from './pair.js';

// What a create and an update answer as `{data}` on the real local proxy manager 1.570.247: the port's
// complete configuration (`complete_proxy_config`, lib/mixins/mgr_proxy.js 45-63): the manager's
// built-in defaults, its settings and the port's configuration merged, then its upstream port, what the
// port's Zone permits and the upstream's addresses. Played against it and the sandbox side by side
// (pair.ts; a sandbox port is the real one's number + SHIFT) and compared value by value, the real
// answer asserted too. Each case uses ports of its own.

const pair = usePair();

type Config = Record<string, unknown>;

/**
 * A `{data}` with what belongs to where each runs taken out: its API port (`www`), the files it keeps
 * (`config`, `loki`, `session_path`: the real manager's in its work folder, the sandbox's in its store) and
 * the port's number (taken back to the real one's). The cloud's Zones (`zones`) are compared apart (zonesOf).
 */
function comparable(r: Reply, shift: number): Config {
  const { www, config, loki, session_path, zones, ...rest } = (r.body as { data: Config }).data;
  for (const x of [www, config, loki, session_path]) expect(['number', 'string']).toContain(typeof x);
  return { ...rest, port: (rest.port as number) - shift };
}

/**
 * The cloud's Zones in a `{data}`: the real manager's stubbed cloud describes the Zones of ACCOUNT (a
 * simpler plan, permissions and no gIP price), the sandbox's its seed's. Compared: each Zone the stub
 * describes is there, with the same fields, passwords and price per GB.
 */
function zonesOf(r: Reply): Config {
  const zones = (r.body as { data: { zones: Record<string, Config> } }).data.zones;
  return Object.fromEntries(
    Object.keys(ACCOUNT.zones).map((name) => {
      const z = zones[name] as Config;
      return [name, { keys: Object.keys(z).sort(), ips: z.ips, kw: z.kw, cost: z.cost, password: z.password }];
    }),
  );
}

/** The same call to both: each answers 200, with the same complete configuration; the real one's data. */
async function sameData(req: Call): Promise<Config> {
  const [real, sbx] = await pair.both(req);
  expect(real.status, JSON.stringify(real.body)).toBe(200);
  expect(sbx.status, JSON.stringify(sbx.body)).toBe(200);
  expect(comparable(sbx, SHIFT)).toEqual(comparable(real, 0));
  expect(zonesOf(sbx)).toEqual(zonesOf(real));
  return (real.body as { data: Config }).data;
}

/** The stored configurations (GET /api/proxies) of the ports from `from` to `from + 99`, by port, each side's numbers taken back to the real one's. */
async function storedFrom(from: number): Promise<[Config[], Config[]]> {
  const [real, sbx] = await pair.both(() => ['GET', '/api/proxies']);
  const mine = (r: Reply, base: number) =>
    (r.body as Config[])
      .filter((c) => (c.port as number) >= base && (c.port as number) < base + 100)
      .map((c) => ({ ...c, port: (c.port as number) - base + from }))
      .sort((a, b) => (a.port as number) - (b.port as number));
  return [mine(real, from), mine(sbx, from + SHIFT)];
}

describe("a create's {data}: the port's complete configuration", () => {
  it("the built-in defaults, the settings and the port's fields, as given, with what the manager adds", async () => {
    const data = await sameData((at) => [
      'POST',
      '/api/proxies',
      { proxy: { port: at(25800), zone: 'res_zone', proxy_retry: '4', foo: 1 } },
    ]);
    expect(data).toMatchObject({
      port: 25800,
      zone: 'res_zone',
      foo: 1,
      // A number field given as a string runs as its number (update_proxy_fields, mgr_proxy.js 176-179).
      proxy_retry: 4,
      // Built-in defaults (util/lpm_config.js, lpm_config_static.js) and the provider's domain.
      multiply: 0,
      new_proxy_port: 33335,
      cluster: true,
      api_domain: 'brightdata.com',
      www_help: 'https://help.brightdata.com',
      num_workers: 1,
      // The settings.
      customer: ACCOUNT.customer,
      sync_config: false,
      // What the manager adds: the Zone's password, price and plan kind, its permissions, the upstream.
      password: 'r3s1d3nt9x7w',
      proxy_type: 'persist',
      static: false,
      mobile: false,
      ssl_perm: false,
      state_perm: false,
      zip_perm: false,
      hosts: ['127.0.0.1'],
    });
    expect(data).not.toHaveProperty('status');
  });

  it('a port without a Zone: the default Zone (static) and its permissions; an unknown Zone: no state_perm or zip_perm', async () => {
    const bare = await sameData((at) => ['POST', '/api/proxies', { proxy: { port: at(25810) } }]);
    expect(bare).toMatchObject({ zone: ACCOUNT.zone, static: true, gb_cost: 0.6, password: ACCOUNT.password });
    // The port's own `state_perm` and `cn_hosts` give way to what the manager sets (none, for a Zone it does not know).
    const unknown = await sameData((at) => [
      'POST',
      '/api/proxies',
      { proxy: { port: at(25811), zone: 'no_such_zone', state_perm: 1, cn_hosts: ['x'] } },
    ]);
    expect(unknown).toMatchObject({ zone: 'no_such_zone', ssl_perm: false, gb_cost: 0 });
    for (const k of ['state_perm', 'zip_perm', 'cn_hosts']) expect(unknown).not.toHaveProperty(k);
  });

  it('only the real manager’s numeric fields run as numbers: a text that is no number is NaN (null); other fields as given', async () => {
    const data = await sameData((at) => [
      'POST',
      '/api/proxies',
      { proxy: { port: at(25812), proxy_retry: 'abc', max_ban_retries: '7', socket_inactivity_timeout: { a: 1 }, sticky_ip: 'x' } },
    ]);
    expect(data).toMatchObject({ proxy_retry: null, max_ban_retries: 7, socket_inactivity_timeout: { a: 1 }, sticky_ip: 'x' });
  });
});

describe("a create's {data} with multiply_ips", () => {
  it('the port runs with the first of its ips alone, none when it has none, also for the text "false" (multiply_port, mgr_proxy.js 249-254); stored with its list: seed 567583163', async () => {
    const bare = await sameData((at) => [
      'POST',
      '/api/proxies',
      { proxy: { port: at(25940), proxy_type: 'persist', zone: 'static_zone', route_err: 'x1', multiply_ips: true } },
    ]);
    expect(bare).toMatchObject({ ips: [null], multiply_ips: true, route_err: 'x1' });
    expect(bare).not.toHaveProperty('ip');
    const text = await sameData((at) => [
      'POST',
      '/api/proxies',
      { proxy: { port: at(25941), zone: 'static_zone', ext_proxy_password: '', multiply_ips: 'false' } },
    ]);
    expect(text).toMatchObject({ ips: [null], multiply_ips: 'false' });
    const listed = await sameData((at) => [
      'POST',
      '/api/proxies',
      { proxy: { port: at(25942), zone: 'static_zone', ips: ['1.1.1.1', '2.2.2.2'], multiply_ips: true, multiply_vips: 1 } },
    ]);
    expect(listed).toMatchObject({ ip: '1.1.1.1', ips: ['1.1.1.1'], vips: [null] });
    const [real, sbx] = await storedFrom(25940);
    expect(real.find((c) => c.port === 25942)).toMatchObject({ ips: ['1.1.1.1', '2.2.2.2'] });
    expect(sbx).toEqual(real);
    const [realRunning, sbxRunning] = await pair.both(() => ['GET', '/api/proxies_running']);
    const running = (r: Reply, base: number) =>
      (r.body as Config[])
        .filter((c) => (c.port as number) >= base + 25940 && (c.port as number) <= base + 25942)
        .map((c) => ({ port: (c.port as number) - base, ip: c.ip, ips: c.ips }));
    expect(running(realRunning, 0)).toContainEqual({ port: 25942, ip: '1.1.1.1', ips: ['1.1.1.1', '2.2.2.2'] });
    expect(running(sbxRunning, SHIFT)).toEqual(running(realRunning, 0));
  });
});

describe("an update's {data}: the port's complete configuration", () => {
  it('in place: the running configuration with the update; the stored one gains the plan kind', async () => {
    await sameData((at) => ['POST', '/api/proxies', { proxy: { port: at(25820), zone: 'res_zone' } }]);
    const data = await sameData((at) => ['PUT', `/api/proxies/${at(25820)}`, { proxy: { ssl: true, proxy_retry: 3 } }]);
    expect(data).toMatchObject({ port: 25820, ssl: true, proxy_retry: 3, zone: 'res_zone', static: false });
    expect(data).not.toHaveProperty('banlist');
    const [real, sbx] = await storedFrom(25820);
    expect(real).toEqual([expect.objectContaining({ port: 25820, ssl: true, static: false, av_server_url: expect.any(String) })]);
    expect(sbx).toEqual(real);
  });

  it("another port, another multiply, other ips: the port restarts with the old port's ban list; stored without the plan kind", async () => {
    await sameData((at) => ['POST', '/api/proxies', { proxy: { port: at(25830), proxy_retry: '4' } }]);
    await sameData((at) => ['POST', '/api/proxies', { proxy: { port: at(25840), zone: 'res_zone', multiply: 2, ssl: 'false' } }]);
    await sameData((at) => ['POST', '/api/proxies', { proxy: { port: at(25850), zone: 'res_zone' } }]);
    const moved = await sameData((at) => ['PUT', `/api/proxies/${at(25830)}`, { proxy: { port: at(25831) } }]);
    expect(moved).toMatchObject({ port: 25831, banlist: { cache: {}, max: null }, static: true, proxy_retry: 4 });
    const multiplied = await sameData((at) => ['PUT', `/api/proxies/${at(25840)}`, { proxy: { multiply: 3 } }]);
    expect(multiplied).toMatchObject({ port: 25840, multiply: 3, ssl: 'false', banlist: { cache: {}, max: null } });
    const ips = await sameData((at) => ['PUT', `/api/proxies/${at(25850)}`, { proxy: { ips: ['1.1.1.1'] } }]);
    expect(ips).toMatchObject({ port: 25850, ips: ['1.1.1.1'], banlist: { cache: {}, max: null } });
    const [real, sbx] = await storedFrom(25830);
    expect(real.map((c) => c.port)).toEqual([25831, 25840, 25850]);
    for (const c of real) expect(c).toMatchObject({ banlist: { cache: {}, max: null } });
    for (const c of real) expect(c).not.toHaveProperty('static');
    expect(sbx).toEqual(real);
  });
});

describe("an update in place answers from the port's start: the running port's options (lib/proxy_port.js 214-234)", () => {
  it('a port started without a Zone that an update leaves without one: no `zone`, the permissions of the Zone it started with (seed 1066256482)', async () => {
    await sameData((at) => [
      'POST',
      '/api/proxies',
      { proxy: { port: at(25740), proxy_type: '', zone: '', proxy_port: '0', sticky_ip: true } },
    ]);
    const data = await sameData((at) => ['PUT', `/api/proxies/${at(25740)}`, { proxy: { pool_size: 'abc' } }]);
    expect(data).not.toHaveProperty('zone');
    expect(data).toMatchObject({ state_perm: false, zip_perm: false, static: true, pool_size: null });
    // Started with a Zone the account does not have: no state_perm or zip_perm, whatever Zone an update names.
    await sameData((at) => ['POST', '/api/proxies', { proxy: { port: at(25750), zone: 'no_such_zone' } }]);
    const named = await sameData((at) => ['PUT', `/api/proxies/${at(25750)}`, { proxy: { zone: 'res_zone' } }]);
    expect(named).toMatchObject({ zone: 'res_zone', ssl_perm: false });
    for (const k of ['state_perm', 'zip_perm']) expect(named).not.toHaveProperty(k);
  });

  it('the settings of its start, but for those the manager sends to running ports (har_limit: mgr_config.js 130-134)', async () => {
    await sameData((at) => ['POST', '/api/proxies', { proxy: { port: at(25760), zone: 'res_zone' } }]);
    const [before] = await pair.both(() => ['GET', '/api/settings']);
    const { logs, request_stats, har_limit } = before.body as Config;
    try {
      await pair.same(
        () => ['PUT', '/api/settings', { logs: 50, request_stats: false, har_limit: 2000 }],
        { status: 200 },
        (r) => r.status,
      );
      const data = await sameData((at) => ['PUT', `/api/proxies/${at(25760)}`, { proxy: { ssl: true } }]);
      expect(data).toMatchObject({ logs, request_stats, har_limit: 2000, ssl: true });
      // A restart starts the port anew, with the settings of now.
      const restarted = await sameData((at) => ['PUT', `/api/proxies/${at(25760)}`, { proxy: { multiply: 2 } }]);
      expect(restarted).toMatchObject({ logs: 50, request_stats: false, har_limit: 2000 });
    } finally {
      await pair.both(() => ['PUT', '/api/settings', { logs, request_stats, har_limit }]);
    }
  });

  it('multiply_ips: the first of its ips, as it started, until an update gives the list; a restart runs anew and has no status yet', async () => {
    await sameData((at) => [
      'POST',
      '/api/proxies',
      { proxy: { port: at(25770), zone: 'res_zone', multiply_ips: true, ips: ['1.1.1.1', '2.2.2.2'] } },
    ]);
    expect(await sameData((at) => ['PUT', `/api/proxies/${at(25770)}`, { proxy: { ssl: true } }])).toMatchObject({
      ip: '1.1.1.1',
      ips: ['1.1.1.1'],
    });
    const listed = await sameData((at) => ['PUT', `/api/proxies/${at(25770)}`, { proxy: { ips: ['2.2.2.2', '1.1.1.1'] } }]);
    expect(listed).toMatchObject({ ip: '1.1.1.1', ips: ['2.2.2.2', '1.1.1.1'] });
    expect(await sameData((at) => ['PUT', `/api/proxies/${at(25770)}`, { proxy: { multiply: 2 } }])).toMatchObject({
      ip: '2.2.2.2',
      ips: ['2.2.2.2'],
    });
    // A port checked, then restarted: proxies_running shows no status of it (a new running port).
    await sameData((at) => ['POST', '/api/proxies', { proxy: { port: at(25780), zone: 'res_zone' } }]);
    await pair.same((at) => ['GET', `/api/proxy_status/${at(25780)}`], { status: 200, body: { status: 'ok', status_details: [] } });
    await sameData((at) => ['PUT', `/api/proxies/${at(25780)}`, { proxy: { multiply: 2 } }]);
    const [real, sbx] = await pair.both(() => ['GET', '/api/proxies_running']);
    const mine = (r: Reply, shift: number) =>
      (r.body as Config[])
        .filter((c) => [25780, 25781].includes((c.port as number) - shift))
        .map((c) => ({ port: (c.port as number) - shift, status: c.status }));
    expect(mine(real, 0)).toEqual([{ port: 25780 }, { port: 25781 }]);
    expect(mine(sbx, SHIFT)).toEqual(mine(real, 0));
  });
});

describe('an update checked as the real manager checks it: the stored configuration with the update over it', () => {
  /** A refusal, the port numbers in its messages taken out (each side names its own). */
  const refusal = (r: Reply) => ({ status: r.status, body: JSON.stringify(r.body).replace(/\b\d{5}\b/g, 'N') });
  const refused = (...errors: { msg: string; field: string }[]) => ({ status: 400, body: { errors } });
  const notValid = { msg: 'the provided zone name is not valid.', field: 'zone' };

  it('a create stores any Zone; every later update is refused for it until one names a Zone the account has (seed 1542456944)', async () => {
    // A create's check sees only port, ext_proxies and multiply (web_api.js 372-373); an update's the stored
    // configuration with the update over it (web_api.js 400-404), before it looks for `proxy` (405-410).
    await sameData((at) => ['POST', '/api/proxies', { proxy: { port: at(25700), zone: { a: 1 } } }]);
    await pair.same((at) => ['PUT', `/api/proxies/${at(25700)}`, { proxy: { ssl: true } }], refused(notValid));
    await pair.same((at) => ['PUT', `/api/proxies/${at(25700)}`, {}], refused(notValid));
    const [real, sbx] = (await storedFrom(25700)).map((list) => list.filter((c) => c.port === 25700));
    expect(real).toEqual([expect.objectContaining({ port: 25700, zone: { a: 1 } })]);
    expect(real?.[0]).not.toHaveProperty('ssl');
    expect(sbx).toEqual(real);
    // The status check of a persist port details the same check of its running configuration (web_api.js 568-574).
    await pair.same((at) => ['GET', `/api/proxy_status/${at(25700)}`], {
      status: 200,
      body: { status: expect.any(String), status_details: [notValid] },
    });
    // An update that names a Zone the account has passes; the details stay those of the first status check, `force` too.
    const named = (r: Reply) => ({ status: r.status, zone: (r.body as { data: Config }).data.zone });
    await pair.same((at) => ['PUT', `/api/proxies/${at(25700)}`, { proxy: { zone: 'res_zone' } }], { status: 200 }, named);
    await pair.same((at) => ['GET', `/api/proxy_status/${at(25700)}?force=1`], {
      status: 200,
      body: { status: 'ok', status_details: [notValid] },
    });
  });

  it('a disabled Zone, an empty one, a port or range in use, text over 300 characters, a bad bandwidth limit: every problem named, in order (mgr_proxy.js 481-594)', async () => {
    const long = 'x'.repeat(301);
    await sameData((at) => ['POST', '/api/proxies', { proxy: { port: at(25710), zone: 'old_zone' } }]);
    await pair.same(
      (at) => ['PUT', `/api/proxies/${at(25710)}`, { proxy: { ssl: true } }],
      refused({ msg: 'zone disabled', field: 'zone' }),
    );
    await pair.same((at) => ['GET', `/api/proxy_status/${at(25710)}`], { status: 200, body: { status: 'Disabled zone' } });
    await sameData((at) => ['POST', '/api/proxies', { proxy: { port: at(25720), zone: 'nope', country: long } }]);
    await pair.same(
      (at) => ['PUT', `/api/proxies/${at(25720)}`, { proxy: { port: at(25710), city: long } }],
      refused(
        { msg: 'port 25710 in use by another proxy', field: 'port' },
        notValid,
        { msg: 'Maximum string length exceeded', field: 'country' },
        { msg: 'Maximum string length exceeded', field: 'city' },
      ),
      refusal,
    );
    await pair.same(
      (at) => ['PUT', `/api/proxies/${at(25720)}`, { proxy: { port: 0, zone: 'res_zone', country: 'us' } }],
      refused({ msg: 'Invalid port. It must be a number >= 1000', field: 'port' }),
    );
    await sameData((at) => ['POST', '/api/proxies', { proxy: { port: at(25730), zone: 'res_zone' } }]);
    for (const zone of ['', null]) await pair.same((at) => ['PUT', `/api/proxies/${at(25730)}`, { proxy: { zone } }], refused(notValid));
    // The ports a move with `multiply` would take, but for the port's own.
    await pair.same(
      (at) => ['PUT', `/api/proxies/${at(25730)}`, { proxy: { port: at(25708), multiply: 3 } }],
      refused({ msg: 'port 25710 in use by another proxy', field: 'port' }),
      refusal,
    );
    const bw = (msg: string) => ({ msg: `Invalid BW limit params, ${msg}`, field: 'bw_limit' });
    await pair.same(
      (at) => [
        'PUT',
        `/api/proxies/${at(25730)}`,
        { proxy: { bw_limit: { bytes: 'x', start: 'nope', use_limit_webhook: 1, th_webhook_value: 'y' } } },
      ],
      refused(
        bw('bytes should be positive number no greater than 9007199254740991'),
        bw('days should be positive number no greater than 100000'),
        bw('start should be date'),
        bw('use_limit_webhook should be true or false'),
        bw('th_webhook_value should be a number between 0 and 99'),
      ),
    );
    // A start that is no text nor number, a limit that is no object: the check itself crashes (util/date.js 215, `in`).
    await pair.same((at) => ['PUT', `/api/proxies/${at(25730)}`, { proxy: { bw_limit: { bytes: 5, days: 2, start: true } } }], {
      status: 500,
      body: 'Server error: invalid date true',
    });
    await pair.same((at) => ['PUT', `/api/proxies/${at(25730)}`, { proxy: { bw_limit: 'x' } }], {
      status: 500,
      body: "Server error: Cannot use 'in' operator to search for 'use_limit_webhook' in x",
    });
  });
});
