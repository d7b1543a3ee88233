import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { operations as listOperations, loadBundle } from '@zone-api/spec/model';
import { type Running, startPrism } from '@zone-api/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ProbeResult, type ReferenceAnswers, readsOnly, runProbe } from '../src/index.js';

// The probe against Prism serving the bundles: Prism answers each call with the operation's first
// example, so every answer conforms, and the manager's differences from 1.570.247 are where the
// spec's examples are not what the real manager answered.

const reference = JSON.parse(
  readFileSync(createRequire(import.meta.url).resolve('@zone-api/spec/parity/real-manager.json'), 'utf8'),
) as ReferenceAnswers;

const prism: Partial<Record<'account' | 'manager', Running>> = {};
const results: Partial<Record<'account' | 'manager', ProbeResult>> = {};

beforeAll(async () => {
  [prism.account, prism.manager] = await Promise.all([startPrism('account'), startPrism('manager')]);
  results.account = await runProbe({
    api: 'account',
    baseUrl: prism.account.url,
    token: 'prism-accepts-any-token',
    customer: 'hl_1a2b3c4d',
    sleep: async () => undefined,
  });
  // A mock of the spec serves the user paths as the documentation writes them (`pm_users`).
  results.manager = await runProbe({ api: 'manager', baseUrl: prism.manager.url, brand: 'pm', reference, sleep: async () => undefined });
}, 120_000);
afterAll(async () => {
  await Promise.all([prism.account?.stop(), prism.manager?.stop()]);
});

describe.each(['account', 'manager'] as const)('the %s probe against Prism', (api) => {
  it('calls every read-only operation, each answered 200 with its example, and finds nothing', () => {
    const r = results[api] as ProbeResult;
    const readOnly = listOperations(loadBundle(api)).filter(readsOnly);
    expect(r.exchanges.map((e) => `${e.operationId} ${e.status}`)).toEqual(readOnly.map((o) => `${o.operationId} 200`));
    expect(r.findings).toEqual([]);
  });
});

describe('the manager probe against Prism, compared with 1.570.247', () => {
  it('differs where the examples do: answers the real manager gives only online, fields its answers have and the examples lack', () => {
    const r = results.manager as ProbeResult;
    const d = (id: string) => r.differences.filter((x) => x.operationId === id).map((x) => x.aspect);
    // Offline, the real manager answered 500 text; Prism answers the example of the 200.
    expect(d('getLatestVersion')).toEqual(['status', 'media type', 'kind of body']);
    // The example of getSettings shows fewer fields than the real manager sends.
    expect(d('getSettings')).toEqual(['fields']);
    // Where the example has the real answer's shape, there is no difference.
    for (const id of ['getMode', 'getNodeVersion', 'listZones']) expect(d(id)).toEqual([]);
  });
});
