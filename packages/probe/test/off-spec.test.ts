import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FindingKind, type ProbeResult, renderReport, runProbe } from '../src/index.js';
import { json, type StandIn, startStandIn, textAnswer } from './stand-in.js';

// A stand-in that answers off the spec in every way the probe knows, one way per operation: each must
// be reported as its kind, on its operation, and the report must still name no secret.

const TOKEN = 'offspec-token-7f3a9c';
const CUSTOMER = 'hl_0ff5bec0';

/** Per operation: its path on the stand-in, how it answers, and the finding that must come of it. */
const cases: Array<{ operationId: string; path: string; answer: Parameters<typeof startStandIn>[0][string]; kind: FindingKind }> = [
  { operationId: 'getAccountStatus', path: '/api/status', answer: json({ customer: CUSTOMER }), kind: 'missing-field' },
  { operationId: 'getBalance', path: '/api/customer/balance', answer: json({ balance: 'lots', pending_costs: 0 }), kind: 'wrong-type' },
  { operationId: 'getZoneStatus', path: '/api/zone/status', answer: json({ status: 'active', surprise: 1 }), kind: 'extra-field' },
  { operationId: 'getNetworkStatus', path: '/api/network_status/res', answer: json({ status: true }, 418), kind: 'status' },
  { operationId: 'listCities', path: '/api/cities', answer: textAnswer('[]', 'text/plain'), kind: 'media-type' },
  { operationId: 'getZonePermissions', path: '/api/zone/permissions', answer: json('{"perms": [', 200), kind: 'not-json' },
  { operationId: 'getZonePasswords', path: '/api/zone/passwords', answer: textAnswer('', 'application/json'), kind: 'missing-body' },
  {
    operationId: 'listActiveZones',
    path: '/api/zone/get_active_zones',
    answer: json([{ name: 'z', type: 'x'.repeat(500) }]),
    kind: 'wrong-value',
  },
  // The credential sent back: in a header, then in the body.
  {
    operationId: 'getZoneWhitelist',
    path: '/api/zone/whitelist',
    answer: json({}, 200, { 'x-debug-auth': `Bearer ${TOKEN}` }),
    kind: 'secret-in-answer',
  },
  {
    operationId: 'listAllPeers',
    path: '/api/get_peers/all',
    answer: json({ peers: [], echo: `you sent ${TOKEN}` }),
    kind: 'secret-in-answer',
  },
  {
    operationId: 'listZoneIps',
    path: '/api/zone/ips',
    answer: (req) => req.socket.destroy(),
    kind: 'no-answer',
  },
];

const ALL_KINDS: FindingKind[] = [
  'status',
  'media-type',
  'missing-body',
  'not-json',
  'missing-field',
  'wrong-type',
  'wrong-value',
  'extra-field',
  'secret-in-answer',
  'no-answer',
];

let standIn: StandIn;
let result: ProbeResult;

beforeAll(async () => {
  standIn = await startStandIn(Object.fromEntries(cases.map((c) => [c.path, c.answer])));
  result = await runProbe({
    api: 'account',
    baseUrl: standIn.url,
    token: TOKEN,
    customer: CUSTOMER,
    only: cases.map((c) => c.operationId),
    sleep: async () => undefined,
    timeoutMs: 10_000,
  });
}, 60_000);
afterAll(() => standIn?.close());

describe('the probe against a stand-in that answers off the spec', () => {
  it('called each operation once', () => {
    expect(result.exchanges.map((e) => e.operationId).sort()).toEqual(cases.map((c) => c.operationId).sort());
  });

  for (const c of cases) {
    it(`reports ${c.kind} on ${c.operationId}`, () => {
      const found = result.findings.filter((f) => f.operationId === c.operationId).map((f) => f.kind);
      expect(found).toContain(c.kind);
    });
  }

  it('reports every kind of finding', () => {
    expect([...new Set(result.findings.map((f) => f.kind))].sort()).toEqual([...ALL_KINDS].sort());
  });

  it('says where a credential came back: the header, the body', () => {
    const echoed = result.findings
      .filter((f) => f.kind === 'secret-in-answer')
      .map((f) => `${f.operationId}: ${f.message.split('(').pop()}`);
    expect(echoed).toEqual(['listAllPeers: body)', 'getZoneWhitelist: header x-debug-auth)']);
  });

  it('writes a report with every finding and no secret', () => {
    const report = renderReport(result);
    for (const kind of ALL_KINDS) expect(report.markdown).toContain(`**${kind}**`);
    expect(JSON.parse(report.json).summary.findings).toBe(result.findings.length);
    for (const secret of [TOKEN, CUSTOMER, encodeURIComponent(TOKEN), '127.0.0.1']) {
      expect(report.markdown).not.toContain(secret);
      expect(report.json).not.toContain(secret);
    }
  });
});

describe('a 429', () => {
  it('holds the next request back for its Retry-After (bounded), beyond the even pace', async () => {
    const limited = await startStandIn({
      '/api/status': json({ error: 'Too many requests' }, 429, { 'retry-after': '7' }),
      '/api/customer/balance': json({ balance: 1, pending_costs: 0 }),
    });
    let t = 0;
    const sent: number[] = [];
    try {
      const r = await runProbe({
        api: 'account',
        baseUrl: limited.url,
        token: TOKEN,
        customer: CUSTOMER,
        only: ['getBalance', 'getAccountStatus', 'getNetworkStatus'],
        now: () => t,
        sleep: async (ms) => {
          t += ms;
        },
        fetch: (input, init) => {
          sent.push(t);
          return globalThis.fetch(input, init);
        },
      });
      expect(r.exchanges.map((e) => `${e.operationId} ${e.status}`)).toEqual([
        'getBalance 200',
        'getAccountStatus 429',
        'getNetworkStatus 404',
      ]);
      // The even pace is 1.2 s (half the documented 100 a minute); after the 429, its 7 s.
      expect(sent).toEqual([0, 1200, 8200]);
    } finally {
      await limited.close();
    }
  });
});
