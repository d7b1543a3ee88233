import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { operations as listOperations, loadBundle } from '@zone-api/spec/model';
import { freePort } from '@zone-api/testkit';
import { type RunningRealManager, startRealManager } from '@zone-api/testkit/real-manager';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ACCOUNT } from '../../../sandbox/test/real-manager/account.js';
import { type ProbeResult, type ReferenceAnswers, readsOnly, renderReport, runProbe } from '../../src/index.js';

// The manager probe against the real local proxy manager 1.570.247 (`pnpm test:real-manager`, in a
// network namespace with only loopback), as a team would run it against its own manager.

const reference = JSON.parse(
  readFileSync(createRequire(import.meta.url).resolve('@zone-api/spec/parity/real-manager.json'), 'utf8'),
) as ReferenceAnswers;
const manager = loadBundle('manager');

let real: RunningRealManager;
let result: ProbeResult;
beforeAll(async () => {
  real = await startRealManager({ wwwPort: await freePort(), ...ACCOUNT });
  // The port the spec's examples name, as a team's manager has its ports (the recorded answers had one too).
  const created = await fetch(`${real.url}/api/proxies`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ proxy: { port: 24000, zone: ACCOUNT.zone } }),
  });
  expect(created.status).toBe(200);
  result = await runProbe({ api: 'manager', baseUrl: real.url, reference, sleep: async () => undefined });
}, 120_000);
afterAll(() => real?.stop());

describe('the manager probe against the real manager 1.570.247', () => {
  it('calls every read-only route, on the paths the real manager serves (lpm_users)', () => {
    expect(result.exchanges.map((e) => e.operationId)).toEqual(
      listOperations(manager)
        .filter(readsOnly)
        .map((o) => o.operationId),
    );
    expect(result.exchanges.find((e) => e.operationId === 'listUsers')?.sent).toBe('/api/lpm_users');
  });

  it('finds every answer declared by the spec: no finding, as every field the real manager answers is declared', () => {
    expect(result.exchanges.length).toBeGreaterThan(20);
    // The Settings fields it answers beyond the seed's were the last undeclared ones (declared in 9ca5179).
    expect(result.findings).toEqual([]);
  });

  it('finds no difference from the answers recorded of the same version', () => {
    const compared = result.exchanges.filter((e) => reference.answers.some((a) => a.scenario === e.operationId));
    expect(compared.length).toBeGreaterThan(20);
    expect(result.differences).toEqual([]);
  });

  it('writes a report without the account\u2019s customer id or Zone password', () => {
    const { markdown, json } = renderReport(result);
    for (const secret of [ACCOUNT.customer, ACCOUNT.password, ...Object.values(ACCOUNT.zones).flatMap((z) => z.password), '127.0.0.1']) {
      expect(markdown).not.toContain(secret);
      expect(json).not.toContain(secret);
    }
    expect(markdown).toContain('differences from 1.570.247: 0');
  });
});
