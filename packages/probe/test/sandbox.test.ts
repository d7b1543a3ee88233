import { type Sandbox, startSandbox } from '@zone-api/sandbox';
import { operations as listOperations, loadBundle } from '@zone-api/spec/model';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ProbeResult, pace, readsOnly, renderReport, runProbe } from '../src/index.js';

// The probe against the sandbox, which answers as the spec says: every read-only operation called,
// nothing changed, every answer conforming, the pace under the documented limit.

const TOKEN = 'sandbox-token-0001';
const CUSTOMER = 'hl_1a2b3c4d';
const account = loadBundle('account');

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox({ accountPort: 0, managerPort: 0 });
});
afterAll(() => sandbox?.close());

/** A clock that only moves when the probe sleeps, and the times at which requests were sent. */
function fakeClock() {
  let t = 1_800_000_000_000;
  const sent: number[] = [];
  return {
    now: () => t,
    sleep: async (ms: number) => {
      t += ms;
    },
    fetch: ((input: Parameters<typeof globalThis.fetch>[0], init?: RequestInit) => {
      sent.push(t);
      return globalThis.fetch(input, init);
    }) as typeof globalThis.fetch,
    sent,
  };
}

describe('the account probe against the sandbox', () => {
  let result: ProbeResult;
  let clock: ReturnType<typeof fakeClock>;
  let before: string;
  beforeAll(async () => {
    before = JSON.stringify(sandbox.state());
    clock = fakeClock();
    result = await runProbe({ api: 'account', baseUrl: sandbox.accountUrl, token: TOKEN, customer: CUSTOMER, ...clock });
  });

  it('calls every operation the bundle marks read-only, and only those', () => {
    const readOnly = listOperations(account).filter(readsOnly);
    expect(readOnly.length).toBeGreaterThan(15);
    expect(result.exchanges.map((e) => e.operationId)).toEqual(readOnly.map((o) => o.operationId));
    expect(result.exchanges.every((e) => e.method === 'GET')).toBe(true);
    const writes = listOperations(account).filter((o) => !readsOnly(o));
    expect(writes.length).toBeGreaterThan(5);
    expect(result.skipped.map((s) => s.operationId).sort()).toEqual(writes.map((o) => o.operationId).sort());
    expect(JSON.stringify(sandbox.state())).toBe(before);
  });

  it('gets an ordinary answer to each (2xx) and finds nothing', () => {
    expect(result.exchanges.filter((e) => e.status < 200 || e.status > 299)).toEqual([]);
    expect(result.findings).toEqual([]);
  });

  it('reports a field the schema does not declare, planted in one answer', async () => {
    // The same sandbox, with one field added to getZone's answer on its way to the probe: the check that found
    // nothing above is the one that finds this.
    const planted = fakeClock();
    const fetch = (async (input: Parameters<typeof globalThis.fetch>[0], init?: RequestInit) => {
      const res = await planted.fetch(input, init);
      if (!new URL(String(input)).pathname.endsWith('/zone')) return res;
      const body = { ...((await res.json()) as object), planted_field: true };
      const headers = new Headers(res.headers);
      headers.delete('content-length');
      headers.delete('content-encoding');
      return new Response(JSON.stringify(body), { status: res.status, headers });
    }) as typeof globalThis.fetch;
    const r = await runProbe({ api: 'account', baseUrl: sandbox.accountUrl, token: TOKEN, customer: CUSTOMER, ...planted, fetch });
    expect(r.findings.map((f) => `${f.operationId} ${f.kind} ${f.message.split(': ').pop()}`)).toEqual([
      'getZone extra-field data has the field `planted_field`, which the schema does not declare',
    ]);
  });

  it('stays under the documented limit: evenly paced at half of it', () => {
    const { perMinute, limit } = pace(account);
    expect(limit).toMatchObject({ requests: 100, perSeconds: 60 });
    expect(perMinute).toBe(50);
    expect(clock.sent.length).toBe(result.exchanges.length);
    for (let i = 1; i < clock.sent.length; i++)
      expect((clock.sent[i] as number) - (clock.sent[i - 1] as number)).toBeGreaterThanOrEqual(1200);
    for (const start of clock.sent) expect(clock.sent.filter((t) => t >= start && t < start + 60_000).length).toBeLessThan(100);
  });

  it('refuses a pace at or above the documented limit', async () => {
    await expect(runProbe({ api: 'account', baseUrl: sandbox.accountUrl, token: TOKEN, maxPerMinute: 100 })).rejects.toThrow(
      /not below the documented limit of 100 requests a minute/,
    );
  });

  it('writes a report that names no credential', () => {
    const report = renderReport(result);
    for (const secret of [TOKEN, CUSTOMER, '127.0.0.1']) {
      expect(report.markdown).not.toContain(secret);
      expect(report.json).not.toContain(secret);
    }
    expect(report.markdown).toContain('| `getBalance` | GET /api/customer/balance?customer=[redacted:customer] | 200 |');
  });
});

describe('--allow-writes', () => {
  it('calls the operations that change state too, in the bundle\u2019s order, each with its body example', async () => {
    const clock = fakeClock();
    const result = await runProbe({
      api: 'account',
      baseUrl: sandbox.accountUrl,
      token: TOKEN,
      customer: CUSTOMER,
      allowWrites: true,
      only: ['getZoneWhitelist', 'addZoneWhitelistIp', 'removeZoneWhitelistIp'],
      ...clock,
    });
    expect(result.exchanges.map((e) => `${e.method} ${e.operationId} ${e.status}`)).toEqual([
      'GET getZoneWhitelist 200',
      'POST addZoneWhitelistIp 201',
      'DELETE removeZoneWhitelistIp 200',
    ]);
  });
});
