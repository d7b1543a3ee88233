import { loadBundle, schemaValidator } from '@zone-api/testkit';
import { describe, expect, it } from 'vitest';
import { call, type Reply, SHIFT, usePair } from './pair.js';

// The routes the real manager's own web interface calls (spec tag "Web interface"), played against the
// real manager 1.570.247 and the sandbox side by side: each answer compared value by value where the
// value is behaviour, by its keys where it is the program's own data, and each real answer validated
// against the spec.

const doc = loadBundle('manager');
const validator = schemaValidator(doc);
const schemaOf = (path: string, method: string, media = 'application/json') =>
  `#/paths/${path.replaceAll('/', '~1')}/${method}/responses/200/content/${media.replace('/', '~1')}/schema`;

const pair = usePair();

const valid = (path: string, method: string, r: Reply) =>
  expect(
    validator.validate(schemaOf(path, method, r.media ?? ''), r.body),
    `${method} ${path}: ${JSON.stringify(r.body).slice(0, 300)}`,
  ).toBeNull();
const keys = (r: Reply) => ({ status: r.status, media: r.media, keys: Object.keys(r.body as object).sort() });

describe('what the web interface reads when it starts', () => {
  it('mode, connection, TLS warning: the same answers (the connection check is online on the sandbox)', async () => {
    valid('/api/mode', 'get', await pair.same(() => ['GET', '/api/mode?null'], { status: 200, body: { logged_in: true } }));
    // Offline the real manager found no provider (`domain: false`); the sandbox's provider is there.
    const conn = await pair.same(() => ['GET', '/api/conn'], { status: 200, body: { domain: false } }, keys);
    valid('/api/conn', 'get', conn);
    valid(
      '/api/tls_warning',
      'get',
      await pair.same(() => ['GET', '/api/tls_warning'], { status: 200, media: 'application/json', body: false }),
    );
  });

  it('defaults: the same options under the same names, the provider API domain among them', async () => {
    const [real, sbx] = await pair.both(() => ['GET', '/api/defaults']);
    expect(real.status).toBe(200);
    valid('/api/defaults', 'get', real);
    const realKeys = Object.keys(real.body as object);
    expect(realKeys.length).toBeGreaterThan(40);
    expect(Object.keys(sbx.body as object).sort()).toEqual(realKeys.sort());
    const pick = (r: Reply) => {
      const b = r.body as Record<string, unknown>;
      return Object.fromEntries(
        ['multiply', 'ssl', 'proxy_retry', 'dns', 'session', 'route_err', 'logs', 'har_limit', 'customer', 'zone', 'api_domain'].map(
          (k) => [k, b[k]],
        ),
      );
    };
    expect(pick(sbx)).toEqual(pick(real));
    expect((sbx.body as { www: number }).www).toBe(Number(new URL(pair.sandbox.managerUrl).port));
  });

  it('consts: each port field the sandbox describes is one the real manager describes, with the same type', async () => {
    const [real, sbx] = await pair.both(() => ['GET', '/api/consts']);
    valid('/api/consts', 'get', real);
    type Consts = { proxy: Record<string, { desc: { type: string } }> };
    const r = (real.body as Consts).proxy;
    const s = (sbx.body as Consts).proxy;
    expect(Object.keys(s).length).toBeGreaterThan(20);
    // `listen_port` is in the provider's documentation; 1.570.247 does not describe it.
    const described = Object.keys(s).filter((k) => k !== 'listen_port');
    expect(
      described.filter((k) => !r[k]),
      'fields the real manager does not describe',
    ).toEqual([]);
    const typed = described.filter((k) => r[k]?.desc.type !== s[k]?.desc.type);
    expect(typed.map((k) => `${k}: real ${r[k]?.desc.type}, sandbox ${s[k]?.desc.type}`)).toEqual([]);
    // The choices its port editor offers (its General tab fails to render without them): the same
    // interfaces here, where both run in one namespace.
    type Choices = Record<string, { values?: unknown[] }>;
    for (const field of ['iface', 'dns']) {
      expect((real.body as { proxy: Choices }).proxy[field]?.values?.length, field).toBeGreaterThan(1);
      expect((sbx.body as { proxy: Choices }).proxy[field]?.values, field).toEqual((real.body as { proxy: Choices }).proxy[field]?.values);
    }
  });

  it('all_locations: the sandbox lists its own countries in the real manager shape, each a country the real one knows', async () => {
    const [real, sbx] = await pair.both(() => ['GET', '/api/all_locations']);
    valid('/api/all_locations', 'get', real);
    expect(keys(sbx)).toEqual(keys(real));
    type Loc = { countries: Array<{ country_id: string }>; countries_by_code: Record<string, string> };
    const known = new Set((real.body as Loc).countries.map((c) => c.country_id));
    const mine = (sbx.body as Loc).countries;
    expect(mine.length).toBeGreaterThan(0);
    expect(mine.filter((c) => !known.has(c.country_id))).toEqual([]);
    expect(Object.keys(mine[0] as object).sort()).toEqual(Object.keys((real.body as Loc).countries[0] as object).sort());
  });
});

describe('ports, logs and reports as the web interface uses them', () => {
  it('sessions: {} for a port that exists, 400 "server does not exist" for one that does not', async () => {
    const port = 25300;
    await pair.createBoth(port);
    valid('/api/sessions/{port}', 'get', await pair.same((at) => ['GET', `/api/sessions/${at(port)}`], { status: 200, body: {} }));
    await pair.same(() => ['GET', '/api/sessions/25999'], { status: 400, media: 'text/html', body: 'server does not exist' });
  });

  it('update_ips sets the port ips and vips to the lists given, a list left out becoming empty', async () => {
    const port = 25310;
    await pair.createBoth(port);
    const ipsOf = async (): Promise<[unknown, unknown]> => {
      const [real, sbx] = await pair.both(() => ['GET', '/api/proxies_running']);
      const find = (r: Reply, p: number) => {
        const cfg = (r.body as Array<{ port: number; ips?: unknown; vips?: unknown }>).find((c) => c.port === p);
        return { ips: cfg?.ips, vips: cfg?.vips };
      };
      return [find(real, port), find(sbx, port + 1000)];
    };
    await pair.same((at) => ['POST', '/api/update_ips', { port: at(port), ips: ['192.0.2.21', '192.0.2.22'] }], {
      status: 200,
      media: 'text/html',
      body: 'ok',
    });
    const [real, sbx] = await ipsOf();
    expect(real).toEqual({ ips: ['192.0.2.21', '192.0.2.22'], vips: [] });
    expect(sbx).toEqual(real);
    await pair.same((at) => ['POST', '/api/update_ips', { port: at(port), vips: ['us_7922_ny_newyork_1'] }], { status: 200, body: 'ok' });
    const [real2, sbx2] = await ipsOf();
    expect(real2).toEqual({ ips: [], vips: ['us_7922_ny_newyork_1'] });
    expect(sbx2).toEqual(real2);
  });

  it('update_ips with the port’s own lists updates it in place: the stored config gains the plan’s kind, a port without a Zone runs without one', async () => {
    const port = 25312;
    const [created, createdSbx] = await pair.both((at) => ['POST', '/api/proxies', { proxy: { port: at(port) } }]);
    expect([created.status, createdSbx.status]).toEqual([200, 200]);
    await pair.same((at) => ['POST', '/api/update_ips', { port: at(port), ips: [] }], { status: 200, body: 'ok' });
    const configs = async (path: string): Promise<[unknown, unknown]> => {
      const [real, sbx] = await pair.both(() => ['GET', path]);
      const find = (r: Reply, p: number) => ({ ...(r.body as Array<{ port: number }>).find((c) => c.port === p), port });
      return [find(real, port), find(sbx, port + SHIFT)];
    };
    const [stored, storedSbx] = await configs('/api/proxies');
    // The default Zone here is the static one.
    expect(stored).toMatchObject({ static: true, mobile: false, unblock: false, ips: [], vips: [] });
    expect(stored).toHaveProperty('av_server_url');
    expect(storedSbx).toEqual(stored);
    const [running, runningSbx] = await configs('/api/proxies_running');
    expect(running).not.toHaveProperty('zone');
    expect(runningSbx).toEqual(running);
  });

  it('logs_suggestions lists what was counted; logs_reset (PUT and GET) clears the log and the statistics', async () => {
    const port = 25320;
    await pair.createBoth(port);
    for (const p of ['/sug-a?st=200', '/sug-b?st=404']) {
      const [real, sbx] = await pair.through(port, p);
      expect([real.status, sbx.status]).toEqual([real.status, real.status]);
    }
    const sorted = (r: Reply) => {
      const b = r.body as Record<string, unknown[]>;
      const norm = (xs: unknown[] = []) => xs.map((x) => (x === port + 1000 ? port : x)).sort();
      return { status: r.status, ports: norm(b.ports), status_codes: norm(b.status_codes), protocols: norm(b.protocols) };
    };
    // The real manager counts each request a moment after it answered: read until both are counted.
    const counted = { status: 200, ports: [port], status_codes: [200, 404], protocols: ['http'] };
    await expect.poll(async () => sorted(await call(pair.manager.url, 'GET', '/api/logs_suggestions'))).toEqual(counted);
    await pair.sandbox.settled();
    const sug = await pair.same(() => ['GET', '/api/logs_suggestions'], { status: 200 }, sorted);
    expect(sorted(sug)).toEqual(counted);
    valid('/api/logs_suggestions', 'get', sug);
    const totals = (r: Reply) => ({ status: r.status, total: (r.body as { total: number }).total });
    await pair.same(() => ['PUT', '/api/logs_reset'], { status: 200, media: 'text/html', body: 'ok' });
    await pair.same(() => ['GET', '/api/logs'], { status: 200, body: expect.objectContaining({ total: 0 }) }, totals);
    await pair.same(() => ['GET', '/api/recent_stats'], { status: 200, body: expect.objectContaining({ total: 0 }) }, totals);
    await pair.same(() => ['GET', '/api/logs_suggestions'], { status: 200, body: { ports: [], status_codes: [], protocols: [] } });
    await pair.through(port, '/sug-c');
    await expect.poll(async () => totals(await call(pair.manager.url, 'GET', '/api/logs')).total).toBe(1);
    await pair.sandbox.settled();
    await pair.same(() => ['GET', '/api/logs_reset'], { status: 200, media: 'text/html', body: 'ok' });
    await pair.same(() => ['GET', '/api/logs'], { status: 200, body: expect.objectContaining({ total: 0 }) }, totals);
  });

  it('perr: the web interface error reports are answered OK, with a body or without', async () => {
    await pair.same(() => ['POST', '/api/perr', { type: 'fe_error', message: 'x', stack: 'y', context: { a: 1 } }], {
      status: 200,
      media: 'text/html',
      body: 'OK',
    });
    await pair.same(() => ['POST', '/api/perr'], { status: 200, body: 'OK' });
  });

  it('perr: a report whose stack is null, as the interface sends one for an answer it could not read, is answered OK', async () => {
    await pair.same(() => ['POST', '/api/perr', { type: 'fe_warn', message: 'Not Found', stack: null, context: 'app.App' }], {
      status: 200,
      media: 'text/html',
      body: 'OK',
    });
  });

  it('perr: a stack that is no string (a number) is passed on unchecked and answered OK (seed 1542456944)', async () => {
    // web_api.js 1426-1431 hands `stack` to its error reporter as is; the sandbox answered 400 (a string required).
    for (const body of [{ stack: 7 }, { type: 'fe_error', message: 'x', stack: { at: ['a', 1] } }])
      await pair.same(() => ['POST', '/api/perr', body], { status: 200, media: 'text/html', body: 'OK' });
  });

  it('perr: a type or message that is no string (a number) is passed on unchecked and answered OK (issue 34, differential)', async () => {
    // web_api.js 1426-1431 hands `type` to its error reporter as the report's id, as is; the sandbox answered 400 (a string required).
    for (const body of [{ type: 7 }, { type: 'fe_error', message: { text: 'x' } }, { type: null, message: 7 }])
      await pair.same(() => ['POST', '/api/perr', body], { status: 200, media: 'text/html', body: 'OK' });
  });

  it('a body that is not valid JSON: 500 `Server Error` on every route tried, enableSsl among them, and the spec declares it (seed 697886544)', async () => {
    // The manager's JSON body parser fails before any route (web_server.js 171-174); its last error
    // handler answers every error 500 `Server Error` (web_server.js 186-189).
    const routes: [string, string, string][] = [
      ['POST', '/api/enable_ssl', 'enableSsl'],
      ['POST', '/api/perr', 'createErrorReport'],
      ['PUT', '/api/proxies/24000', 'updateProxy'],
      ['POST', '/api/proxies', 'createProxy'],
    ];
    const ops = doc.paths as Record<string, Record<string, { operationId: string; responses: Record<string, unknown> }>>;
    for (const [method, path, operationId] of routes) {
      const r = await pair.same(() => [method, path, '{"port": 2', 'application/json'], {
        status: 500,
        media: 'text/html',
        body: 'Server Error',
      });
      const specPath = path === '/api/proxies/24000' ? '/api/proxies/{port}' : path;
      const op = ops[specPath]?.[method.toLowerCase()];
      expect(op?.operationId, `${method} ${path}`).toBe(operationId);
      expect(Object.keys(op?.responses ?? {}), `${operationId} declares 500`).toContain('500');
      expect(op?.responses['500']).toEqual({ $ref: '#/components/responses/ServerError' });
      expect(validator.validate('#/components/responses/ServerError/content/text~1html/schema', r.body)).toBeNull();
    }
  });

  it('all_carriers and i18n: offline the real manager answers 500 (it asks its cloud); the sandbox answers as online, with none', async () => {
    const [carriers, carriersSbx] = await pair.both(() => ['GET', '/api/all_carriers']);
    expect(carriers).toMatchObject({ status: 500, media: 'text/html', body: expect.stringMatching(/^Server error: getaddrinfo/) });
    expect(carriersSbx).toEqual({ status: 200, media: 'application/json', body: [] });
    valid('/api/all_carriers', 'get', carriersSbx);
    const [i18n, i18nSbx] = await pair.both(() => ['GET', '/api/i18n']);
    expect(i18n).toEqual({ status: 500, media: 'text/html', body: 'Server error: no_lpm_f_conn' });
    expect(i18nSbx).toEqual({ status: 200, media: 'application/json', body: {} });
    valid('/api/i18n', 'get', i18nSbx);
  });
});
