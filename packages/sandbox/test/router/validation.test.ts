import { fuzzRequests } from '@zone-api/testkit/fuzz';
import { describe, expect, it } from 'vitest';
import { bearer, C, Conformance, docs, raw, STATIC, useSandbox } from '../helpers.js';

// Bad input everywhere: a 4xx naming the field and the reason, never a 5xx, and no state change.
// (Fields the provider's documentation does not name are accepted and ignored unless `strict`: lenient.test.ts.)
const t = useSandbox();
// The manager's port and ban operations read their bodies and ports as the real manager does, unchecked
// (`x-observed-unchecked` in the spec; their default answers are in manager-coercion.test.ts): `strict` checks them.
const strictT = useSandbox({ strict: true });

type Case = [
  label: string,
  method: string,
  path: string,
  opts: { body?: unknown; text?: string; headers?: Record<string, string> },
  field: string | RegExp,
];

const json = { 'content-type': 'application/json' };
const account: Case[] = [
  ['malformed JSON', 'POST', '/api/zone', { text: '{"zone": ', headers: { ...bearer, ...json } }, 'body'],
  ['missing body', 'POST', '/api/zone/ips', { headers: bearer }, 'body'],
  ['empty JSON body', 'DELETE', '/api/zone/ips', { text: '', headers: { ...bearer, ...json } }, 'body'],
  ['body not an object', 'POST', '/api/zone/ips', { body: [1, 2], headers: bearer }, 'body'],
  ['wrong type', 'POST', '/api/zone/ips', { body: { zone: STATIC, count: 'two' }, headers: bearer }, 'body.count'],
  ['missing field', 'POST', '/api/zone/domain_perm', { body: { zone: STATIC, type: 'whitelist' }, headers: bearer }, 'body.domain'],
  ['bad enum', 'PUT', '/api/status', { body: { status: 'paused' }, headers: bearer }, 'body.status'],
  ['out of range', 'POST', '/api/zone/change_disable', { body: { zone: STATIC, disable: 2 }, headers: bearer }, 'body.disable'],
  ['array item', 'DELETE', '/api/zone/vips', { body: { zone: 'res_zone', vips: ['not a gip'] }, headers: bearer }, 'body.vips[0]'],
  ['neither refresh form', 'POST', '/api/zone/ips/refresh', { body: { zone: STATIC, vips: 'x' }, headers: bearer }, /body/],
  [
    'wrong media type',
    'POST',
    '/api/zone/whitelist',
    { text: 'ip=1.2.3.4', headers: { ...bearer, 'content-type': 'application/x-www-form-urlencoded' } },
    'header.Content-Type',
  ],
  ['query type', 'GET', `/api/zone/ips?zone=${STATIC}&ip_per_country=yes`, { headers: bearer }, 'query.ip_per_country'],
  ['required query', 'GET', '/api/cities', { headers: bearer }, 'query.country'],
  ['plan not JSON', 'GET', `/api/zone/count_available_ips?customer=${C}&zone=${STATIC}&plan=shared`, { headers: bearer }, 'query.plan'],
  [
    'plan field',
    'GET',
    `/api/zone/count_available_ips?customer=${C}&zone=${STATIC}&plan=${encodeURIComponent('{"ips_type":"all"}')}`,
    { headers: bearer },
    'query.plan.ips_type',
  ],
  ['path enum', 'GET', '/api/network_status/wifi', { headers: bearer }, 'path.network_type'],
  ['dotted query', 'GET', `/api/customer/req_logs?ts.from=${encodeURIComponent('not a date')}`, { headers: bearer }, 'query.ts.from'],
  ['zone name', 'POST', '/api/zone', { body: { zone: { name: 'has space' }, plan: {} }, headers: bearer }, 'body.zone.name'],
  [
    'password with dash',
    'POST',
    '/api/zone',
    { body: { zone: { name: 'ok_name', password: 'a-b' }, plan: {} }, headers: bearer },
    'body.zone.password',
  ],
  ['zone missing with a token', 'POST', '/api/zone/switch_100uptime', { body: { active: 1 }, headers: bearer }, 'body.zone'],
];

const manager: Case[] = [
  ['malformed JSON', 'POST', '/api/proxies', { text: '{"proxy": {', headers: json }, 'body'],
  ['missing body', 'POST', '/api/proxies', {}, 'body'],
  ['no proxy', 'PUT', '/api/proxies/24000', { body: { port: 24005 } }, /body/],
  ['port type', 'POST', '/api/proxies', { body: { proxy: { port: 'high' } } }, 'body.proxy.port'],
  ['path port', 'DELETE', '/api/proxies/abc', {}, 'path.port'],
  ['path port below 1000', 'GET', '/api/proxy_status/80', {}, 'path.port'],
  ['settings type', 'PUT', '/api/settings', { body: { request_stats: 'yes' } }, 'body.request_stats'],
  ['ban without ip', 'POST', '/api/proxies/24000/banip', { body: { ms: 10 } }, 'body.ip'],
  ['bans ip not array', 'POST', '/api/proxies/24000/banips', { body: { ip: '1.2.3.4' } }, 'body.ip'],
  ['ports empty', 'POST', '/api/proxies/delete', { body: { ports: [] } }, 'body.ports'],
  ['refresh_ips not array', 'POST', '/api/refresh_ips', { body: { zone: STATIC, ips: '1.2.3.4' } }, 'body.ips'],
  ['logs limit', 'GET', '/api/general_logs?limit=-1', {}, 'query.limit'],
  ['logs status pattern', 'GET', '/api/logs?status_code=2xx', {}, 'query.status_code'],
  ['user email', 'POST', '/api/pm_user', { body: { email: 'nobody' } }, 'body.email'],
];

function fieldsOf(body: { details?: { field: string }[] }): string[] {
  return (body.details ?? []).map((d) => d.field);
}

describe.each([
  ['account', account],
  ['manager', manager],
] as const)('%s API refuses bad input', (api, cases) => {
  it.each(cases)('%s', async (_, method, path, opts, field) => {
    const sbx = api === 'account' ? t.sandbox : strictT.sandbox;
    const base = api === 'account' ? sbx.accountUrl : sbx.managerUrl;
    const before = sbx.state();
    const r = await raw(base, method, path, opts);
    expect(r.status, r.text).toBe(400);
    if (api === 'account') {
      // The account API's `Error`: a message, and one detail per field at fault.
      expect(r.headers.get('content-type')).toMatch(/^application\/json/);
      const body = r.json();
      expect(typeof body.error).toBe('string');
      const fields = fieldsOf(body);
      if (typeof field === 'string') expect(fields, r.text).toContain(field);
      else
        expect(
          fields.some((f) => field.test(f)),
          r.text,
        ).toBe(true);
      for (const d of body.details) expect(d.reason.length).toBeGreaterThan(0);
    } else {
      // The manager answers as the real one does: text (text/html), or `{errors: [{msg, field}]}` for
      // port create and update; either way the text names the field at fault.
      const type = r.headers.get('content-type') ?? '';
      const portConfig = path.startsWith('/api/proxies') && (method === 'PUT' || path === '/api/proxies');
      expect(type).toMatch(portConfig ? /^application\/json/ : /^text\/html/);
      if (typeof field === 'string') expect(r.text).toContain(field);
      else expect(field.test(r.text), r.text).toBe(true);
    }
    const conformance = new Conformance(docs[api]);
    expect(conformance.check(method, path, r.status, r.headers.get('content-type'), r.text)).toEqual([]);
    expect(sbx.state()).toEqual(before);
  });
});

// `pnpm bench` runs this with FUZZ_REQUESTS=5000 (10,000 requests over both APIs).
const FUZZ_REQUESTS = Number(process.env.FUZZ_REQUESTS ?? 700);
/** Mutations no server may accept: the request is broken whatever the state. */
const MUST_REFUSE = /: (bad-json|missing-body|body-not-object|wrong-type body\.|missing-required body\.)/;

describe('fuzzing with the spec-derived requests of testkit', () => {
  // The manager with `strict`: by default it answers malformed input as the real one does, 500s included.
  it.each(['account', 'manager'] as const)(
    `%s: ${FUZZ_REQUESTS} requests, no 5xx, broken ones refused, every answer as the spec declares it`,
    // A bound that grows with the requests: some carry 100,000-item lists, and the machine may be loaded.
    { timeout: Math.max(120_000, FUZZ_REQUESTS * 100) },
    async (api) => {
      const sbx = api === 'account' ? t.sandbox : strictT.sandbox;
      const base = api === 'account' ? sbx.accountUrl : sbx.managerUrl;
      const conformance = new Conformance(docs[api]);
      const requests = fuzzRequests(docs[api], FUZZ_REQUESTS, api === 'account' ? 11 : 12, {
        auth: api === 'account' ? bearer : {},
        pathValues: { port: [24000, 24001] },
      });
      const problems: string[] = [];
      const statuses = new Set<number>();
      const bodyOptional = new Set(
        Object.values(docs[api].paths ?? {}).flatMap((item) =>
          Object.values(item as Record<string, { operationId?: string; requestBody?: { required?: boolean } }>)
            .filter((op) => op?.requestBody && op.requestBody.required !== true && op.operationId)
            .map((op) => op.operationId as string),
        ),
      );
      for (const req of requests) {
        const res = await fetch(`${base}${req.url}`, { method: req.method, headers: req.headers, body: req.body });
        const text = await res.text();
        statuses.add(res.status);
        if (res.status >= 500) problems.push(`${req.label}: ${res.status} ${text.slice(0, 200)}`);
        // A missing body is refused only where the operation requires one.
        const optionalBody = req.label.includes(': missing-body') && bodyOptional.has(req.label.split(':')[0] as string);
        if (MUST_REFUSE.test(req.label) && !optionalBody && (res.status < 400 || res.status >= 500))
          problems.push(`${req.label}: accepted with ${res.status}`);
        if (api === 'account' && req.label.endsWith(': no-auth') && res.status !== 401)
          problems.push(`${req.label}: ${res.status} without credentials`);
        for (const p of conformance.check(req.method, req.url, res.status, res.headers.get('content-type'), text))
          problems.push(`${req.label}: ${p}`);
        // Keep the state near the seed so that the valid requests keep finding their Zones and ports.
        if (res.status < 300 && req.method !== 'GET') await sbx.reset();
      }
      expect(problems).toEqual([]);
      expect([...statuses].some((s) => s < 300)).toBe(true);
      expect(statuses).toContain(400);
    },
  );
});

describe('the conformance check used by these tests', () => {
  const check = new Conformance(docs.account);
  it('passes a conforming answer and catches an undeclared status, a wrong media type and a schema violation', () => {
    expect(check.check('GET', '/api/zone/status', 200, 'application/json', '{"status":"active"}')).toEqual([]);
    expect(check.check('GET', '/api/zone/status', 418, 'application/json', '{}')[0]).toMatch(/not declared/);
    expect(check.check('GET', '/api/zone/status', 200, 'text/plain', 'active')[0]).toMatch(/text\/plain/);
    expect(check.check('GET', '/api/zone/status', 200, 'application/json', '{"status":1}')[0]).toMatch(/string/);
    expect(check.check('GET', '/api/zone/status', 200, 'application/json', '')[0]).toMatch(/empty body/);
    expect(check.check('DELETE', '/api/zone', 200, 'application/json', '{}')[0]).toMatch(/no body/);
  });
});

describe('body limits', () => {
  it("the manager takes bodies up to the real manager's limit (2 MB); a larger body is its 500 `Server Error` (strict: a 400 naming it); the account API's is 1 MiB", async () => {
    const big = (n: number) => JSON.stringify({ proxy: { port: 25555, note: 'x'.repeat(n) } });
    const under = await raw(t.sandbox.managerUrl, 'POST', '/api/proxies', {
      text: big(1_900_000),
      headers: { 'content-type': 'application/json' },
    });
    expect(under.status).toBe(200);
    expect((await raw(t.sandbox.managerUrl, 'DELETE', '/api/proxies/25555')).status).toBe(204);
    // The real manager's body parser fails and its last error handler answers, without the API's headers (web_server.js 184-187).
    const over = await raw(t.sandbox.managerUrl, 'POST', '/api/proxies', {
      text: big(2_200_000),
      headers: { 'content-type': 'application/json' },
    });
    expect([over.status, over.headers.get('content-type'), over.text, over.headers.get('deprecation')]).toEqual([
      500,
      'text/html; charset=utf-8',
      'Server Error',
      null,
    ]);
    const strictOver = await raw(strictT.sandbox.managerUrl, 'POST', '/api/proxies', {
      text: big(2_200_000),
      headers: { 'content-type': 'application/json' },
    });
    expect(strictOver.status).toBe(400);
    expect(strictOver.json()).toEqual({ errors: [{ msg: expect.stringMatching(/too large/), field: 'body' }] });
    const account = await raw(t.sandbox.accountUrl, 'POST', '/api/zone/whitelist', {
      text: JSON.stringify({ zone: 'static_zone', ip: 'x'.repeat(1_100_000) }),
      headers: { ...bearer, 'content-type': 'application/json' },
    });
    expect(account.status).toBe(400);
    expect(account.json().details).toEqual([{ field: 'body', reason: 'is too large' }]);
  });
});

describe('a JSON null sent as the body', () => {
  // fastify hands its validator an absent body as null too: the bench's 5,000-request fuzz found `null`
  // taken as no body by operations whose body is optional (unbanIps, createErrorReport) under `strict`.
  it('is refused under strict where the body is optional, naming body; no body at all is still taken', async () => {
    const url = strictT.sandbox.managerUrl;
    const json = { 'content-type': 'application/json' };
    for (const path of ['/api/perr', '/api/proxies/24000/unbanips']) {
      const sentNull = await raw(url, 'POST', path, { text: 'null', headers: json });
      expect({ path, status: sentNull.status, text: sentNull.text }).toEqual({
        path,
        status: 400,
        text: 'Invalid request: body must be object, not null',
      });
      const none = await raw(url, 'POST', path, { headers: {} });
      expect({ path, status: none.status }).toEqual({ path, status: 200 });
    }
  });
});
