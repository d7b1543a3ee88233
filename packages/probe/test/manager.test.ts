import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { type Sandbox, startSandbox } from '@zone-api/sandbox';
import { operations as listOperations, loadBundle } from '@zone-api/spec/model';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { type ProbeResult, type ReferenceAnswers, readsOnly, renderReport, runProbe } from '../src/index.js';

// The manager probe against the sandbox's manager: every read-only route called, nothing changed,
// every answer checked, and the differences from 1.570.247 exactly the ones the sandbox's parity file
// gives a reason for.

const manager = loadBundle('manager');
const reference = JSON.parse(
  readFileSync(createRequire(import.meta.url).resolve('@zone-api/spec/parity/real-manager.json'), 'utf8'),
) as ReferenceAnswers;
const parity = parse(readFileSync(new URL('../../sandbox/parity.yaml', import.meta.url), 'utf8')) as Record<string, unknown>;

let sandbox: Sandbox;
let result: ProbeResult;
let before: string;
beforeAll(async () => {
  sandbox = await startSandbox({ accountPort: 0, managerPort: 0 });
  before = JSON.stringify(sandbox.state());
  result = await runProbe({ api: 'manager', baseUrl: sandbox.managerUrl, reference, sleep: async () => undefined });
});
afterAll(() => sandbox?.close());

describe('the manager probe against the sandbox', () => {
  it('calls every read-only route once and changes nothing', () => {
    const readOnly = listOperations(manager).filter(readsOnly);
    expect(readOnly.length).toBeGreaterThan(20);
    expect(result.exchanges.map((e) => e.operationId)).toEqual(readOnly.map((o) => o.operationId));
    // getNewToken is a GET that rotates the token: the spec says so, and the probe leaves it alone.
    expect(result.skipped.map((s) => s.operationId)).toContain('getNewToken');
    expect(JSON.stringify(sandbox.state())).toBe(before);
  });

  it('finds nothing: every field of every answer is one the spec declares (the settings too)', () => {
    expect(result.exchanges.filter((e) => e.status !== 200).map((e) => e.operationId)).toEqual([]);
    expect(result.exchanges.find((e) => e.operationId === 'getSettings')).toBeDefined();
    expect(result.findings).toEqual([]);
  });

  it('lists as differences from 1.570.247 exactly the operations whose difference the parity file explains', () => {
    const differing = [...new Set(result.differences.map((d) => d.operationId))].sort();
    const explained = listOperations(manager)
      .filter(readsOnly)
      .map((o) => o.operationId)
      .filter((id) => id in parity)
      .sort();
    expect(differing.length).toBeGreaterThan(3);
    expect(differing).toEqual(explained);
    expect(result.differences).toContainEqual({ operationId: 'getLatestVersion', aspect: 'status', reference: '500', probed: '200' });
  });

  it('writes the differences into the report', () => {
    const { markdown } = renderReport(result);
    expect(markdown).toContain('## Differences from 1.570.247');
    expect(markdown).toContain('| `getLatestVersion` | status | 500 | 200 |');
  });
});
