import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from '@zone-api/testkit';
import { afterAll, describe, expect, it } from 'vitest';

// The closing line CI reads, summed over the main suite's and the real-manager suite's reports.

const dir = mkdtempSync(join(tmpdir(), 'zone-api-summary-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function report(name: string, r: Record<string, unknown>): string {
  const file = join(dir, name);
  writeFileSync(file, JSON.stringify({ numPassedTests: 0, numFailedTests: 0, numPendingTests: 0, numTodoTests: 0, testResults: [], ...r }));
  return file;
}
function summary(...args: string[]) {
  const res = spawnSync(process.execPath, [join(repoRoot, 'scripts/test-summary.mjs'), ...args], { encoding: 'utf8' });
  return { status: res.status, last: res.stdout.trim().split('\n').at(-1) };
}

describe('scripts/test-summary.mjs', () => {
  it('sums the reports', () => {
    const a = report('a.json', { numPassedTests: 10, numFailedTests: 1 });
    const b = report('b.json', { numPassedTests: 5 });
    expect(summary(a, b)).toEqual({ status: 1, last: 'tests: 15 passed, 1 failed' });
    expect(summary(b)).toEqual({ status: 0, last: 'tests: 5 passed, 0 failed' });
  });

  it('a missing report, a suite that did not load, a runner that failed outside any test: each one failure', () => {
    const ok = report('ok.json', { numPassedTests: 3 });
    expect(summary(ok, join(dir, 'missing.json'))).toEqual({ status: 1, last: 'tests: 3 passed, 1 failed' });
    const broken = report('broken.json', { numPassedTests: 3, testResults: [{ status: 'failed', assertionResults: [] }] });
    expect(summary(broken)).toEqual({ status: 1, last: 'tests: 3 passed, 1 failed' });
    expect(summary(`${ok}=1`)).toEqual({ status: 1, last: 'tests: 3 passed, 1 failed' });
    expect(summary(`${ok}=0`)).toEqual({ status: 0, last: 'tests: 3 passed, 0 failed' });
  });

  it('skipped tests are shown, never counted as passed', () => {
    const s = report('s.json', { numPassedTests: 2, numPendingTests: 1 });
    expect(summary(s)).toEqual({ status: 0, last: 'tests: 2 passed, 0 failed, 1 skipped' });
  });
});
