import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ProbeResult, Redactor, redactIps, renderReport, runProbe } from '../src/index.js';
import { json, type StandIn, startStandIn, textAnswer } from './stand-in.js';

// Every kind of secret planted in every place an answer can carry it, in every form: none may survive
// in either report, as is, URL-encoded (either hex case, `+` for spaces), JSON-escaped or in base64.

const TOKEN = 'tok/3n+with space"q\\b';
const USER = 'probe-user';
const PASSWORD = 'p@ss:w/rd&"x';
const CUSTOMER = 'hl_c0ffee01';
const ZONE_PASSWORD = 'zp%41ss"1é';
const ZONE_KEY = 'k3yS3cretZ';
const COOKIE = 'sid=s3ss10nC00kie';
const IPV4 = '203.0.113.9';
const IPV6 = '2001:db8::7';
const secrets = { TOKEN, USER, PASSWORD, CUSTOMER, ZONE_PASSWORD, ZONE_KEY, COOKIE, IPV4, IPV6 };

/** Every form a report could hold `value` in, computed here, apart from the redactor's own list. */
function forms(value: string): string[] {
  const uri = encodeURIComponent(value);
  const escapeAll = [...value].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('');
  return [
    value,
    uri,
    uri.replace(/%[0-9A-F]{2}/g, (h) => h.toLowerCase()),
    new URLSearchParams({ v: value }).toString().slice(2),
    JSON.stringify(value).slice(1, -1),
    JSON.stringify(JSON.stringify(value)).slice(2, -2),
    escapeAll,
    value.replace(/:/g, '%3A'),
  ];
}

/** Text with every character of `s` written as a JSON `\u` escape. */
const uEscaped = (s: string) => [...s].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('');

let standIn: StandIn;
let result: ProbeResult;
let report: { markdown: string; json: string };

beforeAll(async () => {
  const query = `customer=${encodeURIComponent(CUSTOMER)}&token=${encodeURIComponent(TOKEN)}&pw=${encodeURIComponent(ZONE_PASSWORD)}&ip=${encodeURIComponent(IPV6)}&bpw=${encodeURIComponent(PASSWORD)}`;
  standIn = await startStandIn({
    // In a JSON body: secret fields (customer, password), addresses.
    '/api/status': json({ status: 'active', customer: CUSTOMER, ip: IPV4, can_make_requests: true }),
    '/api/zone': json({ password: [ZONE_PASSWORD], ips: [IPV6] }, 200, { 'set-cookie': COOKIE, 'x-echo': `Bearer ${TOKEN}` }),
    // In a text body: the Zone password where no field names it, a Zone credential whose key is secret.
    '/api/zone/passwords': textAnswer(
      `password ${ZONE_PASSWORD} for ${CUSTOMER}; X-Lum-Auth: lum-customer-${CUSTOMER}-zone-z1-key-${ZONE_KEY}`,
      'text/plain',
    ),
    // In an error message, JSON-escaped.
    '/api/customer/balance': json({ error: `token ${TOKEN} is not valid for customer ${CUSTOMER} from ${IPV4}` }, 400),
    // In a URL with a query string (a redirect's Location), URL- and form-encoded.
    '/api/zone/status': textAnswer(`token=${new URLSearchParams({ t: TOKEN }).toString().slice(2)}&${query}`, 'text/plain', 302, {
      location: `http://${IPV4}/login?${query}`,
    }),
    // Echoed credentials: the basic password, the pair in base64, an IPv6 with a port, a mapped IPv4.
    '/api/zone/whitelist': textAnswer(
      `bad password ${PASSWORD}; Authorization: Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}; from [${IPV6}]:8080 and ::ffff:${IPV4}`,
      'text/html',
      401,
    ),
    // In a JSON body with every character escaped (`\u0074\u006f…`).
    '/api/get_peers/all': json(`{"note":"${uEscaped(`${TOKEN} ${ZONE_PASSWORD} ${IPV6}`)}"}`),
    // In headers: the token in a header of its own, URL-encoded.
    '/api/zone/permissions': json({ perms: [] }, 200, { 'x-debug-url': `/api/zone?${query}`, 'x-client': IPV6 }),
  });
  result = await runProbe({
    api: 'account',
    baseUrl: standIn.url,
    token: TOKEN,
    basic: { user: USER, password: PASSWORD },
    customer: CUSTOMER,
    sleep: async () => undefined,
  });
  report = renderReport(result);
}, 60_000);

afterAll(() => standIn?.close());

describe('the report of a probe whose answers carry every kind of secret', () => {
  it('saw each planted secret (the stand-in was asked and answered)', () => {
    const asked = new Set(standIn.requests.map((r) => r.url.split('?')[0]));
    for (const path of [
      '/api/status',
      '/api/zone',
      '/api/zone/passwords',
      '/api/customer/balance',
      '/api/zone/status',
      '/api/zone/whitelist',
    ])
      expect(asked).toContain(path);
    const raw = result.exchanges.map((e) => `${JSON.stringify(e.headers)} ${e.body}`).join('\n');
    for (const value of [TOKEN, PASSWORD, CUSTOMER, ZONE_PASSWORD, ZONE_KEY, IPV4, IPV6]) expect(Redactor.holds(raw, value)).toBe(true);
    for (const kind of ['token', 'password', 'customer', 'key', 'credential', 'ip'])
      expect(report.markdown).toContain(`[redacted:${kind}]`);
  });

  for (const [name, value] of Object.entries(secrets)) {
    it(`holds no trace of the ${name.toLowerCase().replace('_', ' ')}, in any form`, () => {
      for (const form of forms(value)) {
        expect(report.markdown, `${name} as ${JSON.stringify(form)} in the Markdown report`).not.toContain(form);
        expect(report.json, `${name} as ${JSON.stringify(form)} in the JSON report`).not.toContain(form);
      }
    });
  }

  it('holds no base64 of the basic credentials, nor the stand-in\u2019s own address', () => {
    const b64 = Buffer.from(`${USER}:${PASSWORD}`).toString('base64');
    for (const text of [report.markdown, report.json]) {
      expect(text).not.toContain(b64);
      expect(text).not.toContain('127.0.0.1');
    }
  });

  it('is still a report: valid JSON, each call listed with its operation', () => {
    const parsed = JSON.parse(report.json);
    expect(parsed.exchanges.length).toBe(result.exchanges.length);
    expect(parsed.exchanges.length).toBeGreaterThan(10);
    expect(report.markdown).toContain('`getAccountStatus`');
  });
});

describe('the redactor', () => {
  it('takes out IPv4, IPv6 (compressed, full, mapped, URL-encoded, bracketed) and leaves times and versions', () => {
    const text = `a ${IPV4}, b 2001:0db8:0000:0000:0000:0000:0000:0001, c ::ffff:${IPV4}, d 2001%3Adb8%3A%3A7, e [fe80::1]:80, f ::1 at 12:30:45 v1.570.247`;
    const out = redactIps(text);
    expect(out).toBe(
      'a [redacted:ip], b [redacted:ip], c [redacted:ip], d [redacted:ip], e [[redacted:ip]]:80, f [redacted:ip] at 12:30:45 v1.570.247',
    );
  });

  it('refuses to give out a text that still holds a secret', () => {
    const r = new Redactor();
    r.add(TOKEN, 'token');
    expect(r.leaks(`x ${encodeURIComponent(TOKEN)} y`)).toEqual(['token']);
    expect(r.leaks(r.redact(`x ${encodeURIComponent(TOKEN)} y ${JSON.stringify(TOKEN)}`))).toEqual([]);
  });

  it('does not take a short secret out of the markers of longer ones', () => {
    const r = new Redactor();
    r.add('secret-value-long', 'token');
    r.add('act', 'password');
    expect(r.redact('a secret-value-long b act')).toBe('a [redacted:token] b [redacted:password]');
  });
});
