import { describe, expect, it } from 'vitest';
import { IGNORED_FIELDS_HEADER, NORMALIZED_FIELDS_HEADER } from '../../src/router/lenient-headers.js';
import { bearer, C, Conformance, docs, RES, raw, STATIC, useSandbox } from '../helpers.js';

// Fields the provider's documentation does not name: accepted, ignored and listed by default; refused with `strict`.
const lenient = useSandbox();
const strict = useSandbox({ strict: true });

type Case = [label: string, api: 'account' | 'manager', method: string, path: string, body: unknown, field: string];

const plan = encodeURIComponent('{"colour":1,"ips_type":"shared"}');
const unknown: Case[] = [
  ['top-level', 'account', 'POST', '/api/zone/switch_100uptime', { zone: STATIC, active: 1, color: 'red' }, 'body.color'],
  ['nested', 'account', 'POST', '/api/zone', { zone: { name: 'z_nested', owner: 'me' }, plan: {} }, 'body.zone.owner'],
  [
    'in an open schema of the spec (Plan)',
    'account',
    'POST',
    '/api/zone',
    { zone: { name: 'z_plan' }, plan: { pool_ip_type: '' } },
    'body.plan.pool_ip_type',
  ],
  [
    'in a oneOf of closed forms',
    'account',
    'POST',
    '/api/zone/ips/refresh',
    { zone: RES, vips: ['us_7922_ny_newyork_1'], x_extra: 1 },
    'body.x_extra',
  ],
  [
    'JSON in the query',
    'account',
    'GET',
    `/api/count_available_ips?customer=${C}&zone=${STATIC}&plan=${plan}`,
    undefined,
    'query.plan.colour',
  ],
  ['settings', 'manager', 'PUT', '/api/settings', { log_colour: 'debug' }, 'body.log_colour'],
];
/** A port's configuration: the real manager stores an unknown field with it (specs/manager `x-observed-unchecked`), so only `strict` refuses it. */
const portConfig: Case = ['port config', 'manager', 'POST', '/api/proxies', { proxy: { zone: STATIC, prot: 24005 } }, 'body.proxy.prot'];

const base = (t: typeof lenient, api: 'account' | 'manager') => (api === 'account' ? t.sandbox.accountUrl : t.sandbox.managerUrl);
const send = (t: typeof lenient, api: 'account' | 'manager', method: string, path: string, body: unknown) =>
  raw(base(t, api), method, path, { headers: api === 'account' ? bearer : {}, ...(body === undefined ? {} : { body }) });

describe('lenient (default): an unknown field is accepted, ignored and listed', () => {
  it.each(unknown)('%s', async (_, api, method, path, body, field) => {
    await lenient.sandbox.reset();
    const r = await send(lenient, api, method, path, body);
    expect(r.status, r.text).toBeLessThan(300);
    expect(r.headers.get(IGNORED_FIELDS_HEADER)).toBe(field);
    expect(new Conformance(docs[api]).check(method, path, r.status, r.headers.get('content-type'), r.text)).toEqual([]);
    // Ignored means not read: nothing of it reaches the state.
    const name = field.split('.').pop() as string;
    expect(JSON.stringify(lenient.sandbox.state())).not.toContain(`"${name}"`);
  });

  it('a port configuration keeps an unknown field, as the real manager stores it', async () => {
    await lenient.sandbox.reset();
    const [, api, method, path, body] = portConfig;
    const r = await send(lenient, api, method, path, body);
    expect(r.status, r.text).toBe(200);
    expect(r.headers.get(IGNORED_FIELDS_HEADER)).toBeNull();
    const stored = lenient.sandbox.state().manager.ports.find((p) => p.zone === STATIC && 'prot' in p);
    expect(stored).toMatchObject({ prot: 24005, proxy_type: 'persist' });
  });

  it('a request without unknown fields gets no header', async () => {
    const r = await send(lenient, 'account', 'POST', '/api/zone/switch_100uptime', { zone: STATIC, active: 1 });
    expect(r.status).toBe(200);
    expect(r.headers.get(IGNORED_FIELDS_HEADER)).toBeNull();
    expect(r.headers.get(NORMALIZED_FIELDS_HEADER)).toBeNull();
  });

  it('every other validation stays: wrong types, missing fields, bad enums are 400 naming the field, the unknown one not', async () => {
    const cases: [string, string, unknown, string][] = [
      ['POST', '/api/zone/ips', { zone: STATIC, count: 'two', extra: 1 }, 'body.count'],
      ['POST', '/api/zone/domain_perm', { zone: STATIC, type: 'whitelist', extra: 1 }, 'body.domain'],
      ['PUT', '/api/status', { status: 'paused', extra: 1 }, 'body.status'],
      ['POST', '/api/zone', { zone: { name: 'z', type: 'x' }, plan: { type: 'serp' } }, 'body.plan.type'],
      ['POST', '/api/zone/ips/refresh', { zone: RES, vips: ['us_7922_ny_newyork_1'], ips: ['192.0.2.1'] }, 'body'],
    ];
    for (const [method, path, body, field] of cases) {
      const before = lenient.sandbox.state();
      const r = await send(lenient, 'account', method, path, body);
      expect(r.status, `${path} ${r.text}`).toBe(400);
      const fields = r.json().details.map((d: { field: string }) => d.field);
      expect(fields, r.text).toContain(field);
      expect(fields.filter((f: string) => f.endsWith('.extra'))).toEqual([]);
      expect(lenient.sandbox.state()).toEqual(before);
    }
  });

  it('a refusal by the handler still lists what was ignored', async () => {
    const r = await send(lenient, 'account', 'POST', '/api/zone', { zone: { name: STATIC, owner: 'me' }, plan: {} });
    expect(r.status).toBe(409);
    expect(r.json().details[0].field).toBe('body.zone.name');
    expect(r.headers.get(IGNORED_FIELDS_HEADER)).toBe('body.zone.owner');
  });

  it('field names from the request cannot break the header: control characters and commas escaped, the list bounded', async () => {
    const body: Record<string, unknown> = { zone: STATIC, active: 1, 'a,b': 1, 'line\nbreak': 2, é: 3 };
    for (let i = 0; i < 40; i++) body[`f${i}_${'x'.repeat(300)}`] = i;
    const r = await send(lenient, 'account', 'POST', '/api/zone/switch_100uptime', body);
    expect(r.status, r.text).toBe(200);
    const header = r.headers.get(IGNORED_FIELDS_HEADER) ?? '';
    expect(header).toMatch(/^body\.a\\u002cb, body\.line\\u000abreak, body\.\\u00e9, body\.f0_x+\.\.\., /);
    expect(header).toMatch(/\(23 more\)$/);
    expect(header.length).toBeLessThan(5000);
  });
});

describe('strict: an unknown field is refused, naming it', () => {
  it.each([...unknown, portConfig])('%s', async (_, api, method, path, body, field) => {
    await strict.sandbox.reset();
    const before = strict.sandbox.state();
    const r = await send(strict, api, method, path, body);
    expect(r.status, r.text).toBe(400);
    expect(r.text).toContain(
      field
        .split('.')
        .slice(api === 'manager' && field.startsWith('body.proxy') ? 2 : 0)
        .join('.'),
    );
    if (api === 'account') expect(r.json().details).toContainEqual({ field, reason: 'is not a known field' });
    expect(r.headers.get(IGNORED_FIELDS_HEADER)).toBeNull();
    expect(new Conformance(docs[api]).check(method, path, r.status, r.headers.get('content-type'), r.text)).toEqual([]);
    expect(strict.sandbox.state()).toEqual(before);
  });

  it('a request the seed describes fully is accepted as before', async () => {
    const r = await send(strict, 'account', 'POST', '/api/zone/ips/refresh', { zone: RES, vips: ['us_7922_ny_newyork_1'] });
    expect(r.status, r.text).toBe(200);
    await strict.sandbox.reset();
  });
});

describe('plan.bandwidth "bandwidth" (the provider SDK default; the documentation lists payperusage | unlimited)', () => {
  const body = { zone: { name: 'bw_zone' }, plan: { type: 'static', ips_type: 'shared', bandwidth: 'bandwidth' } };

  it('lenient: read as payperusage, stored so, and listed in the normalised-fields header', async () => {
    await lenient.sandbox.reset();
    const r = await send(lenient, 'account', 'POST', '/api/zone', body);
    expect(r.status, r.text).toBe(201);
    expect(r.headers.get(NORMALIZED_FIELDS_HEADER)).toBe('body.plan.bandwidth (bandwidth -> payperusage)');
    expect(r.headers.get(IGNORED_FIELDS_HEADER)).toBeNull();
    expect(r.json().plan.bandwidth).toBe('payperusage');
    const zone = lenient.sandbox.state().account.zones.find((z: { name: string }) => z.name === 'bw_zone');
    expect(zone?.plans[0]?.bandwidth).toBe('payperusage');
    await lenient.sandbox.reset();
  });

  it('lenient: other values outside the enum are still refused', async () => {
    const r = await send(lenient, 'account', 'POST', '/api/zone', { ...body, plan: { ...body.plan, bandwidth: 'metered' } });
    expect(r.status).toBe(400);
    expect(r.json().details[0]).toEqual({
      field: 'body.plan.bandwidth',
      reason: 'must be equal to one of the allowed values: "payperusage", "unlimited", "bandwidth"',
    });
  });

  it('strict: refused, naming the field and the seed values', async () => {
    const r = await send(strict, 'account', 'POST', '/api/zone', body);
    expect(r.status).toBe(400);
    expect(r.json().details).toEqual([
      { field: 'body.plan.bandwidth', reason: 'must be equal to one of the allowed values: "payperusage", "unlimited"' },
    ]);
  });
});

describe('a proxy port for a Zone the account does not have (the real manager 1.570.247 creates it)', () => {
  it('lenient: created, as the real manager does', async () => {
    await lenient.sandbox.reset();
    const r = await lenient.manager.createProxy({ body: { proxy: { port: 24500, zone: 'no_such_zone' } } });
    expect(r.response.status).toBe(200);
    expect(r.data?.data.zone).toBe('no_such_zone');
    expect((await lenient.manager.listProxies()).data?.map((p) => p.port)).toContain(24500);
  });

  it('strict: refused naming the field, nothing created', async () => {
    await strict.sandbox.reset();
    const before = strict.sandbox.state();
    const r = await strict.manager.createProxy({ body: { proxy: { port: 24500, zone: 'no_such_zone' } } });
    expect(r.response.status).toBe(400);
    expect(r.error).toEqual({ errors: [{ msg: 'Zone no_such_zone not found', field: 'zone' }] });
    expect(strict.sandbox.state()).toEqual(before);
  });
});
