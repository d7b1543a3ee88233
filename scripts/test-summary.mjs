#!/usr/bin/env node
// Reads vitest's JSON reports (one or more files: the main suite, the real-manager and real-clients suites) and prints
// the closing line CI reads: `tests: N passed, M failed`, summed over all of them. A report that is
// missing or unreadable counts as one failure. Skipped or todo tests are counted and shown, never as
// passed. Each argument may carry the runner's exit status (`report.json=1`): a runner that failed
// although its report has no failed test (vitest's unhandled errors, a type error in a test file)
// counts as one failure, since the JSON report does not record those.
import { readFileSync } from 'node:fs';

const args = process.argv.length > 2 ? process.argv.slice(2) : ['artifacts/vitest.json'];
let passed = 0;
let failed = 0;
let skipped = 0;
for (const arg of args) {
  const m = /^(.*)=(\d+)$/.exec(arg);
  const file = m ? m[1] : arg;
  const exitStatus = m ? Number(m[2]) : 0;
  let report;
  try {
    report = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    console.log(`could not read the test report ${file}: ${e.message}`);
    failed += 1;
    continue;
  }
  passed += report.numPassedTests ?? 0;
  // Suites that failed to load (e.g. a broken import) have no test results but must count as failures.
  const failedHere =
    (report.numFailedTests ?? 0) +
    (report.testResults ?? []).filter((r) => r.status === 'failed' && (r.assertionResults ?? []).length === 0).length;
  if (exitStatus !== 0 && failedHere === 0)
    console.log(`${file}: the test runner exited ${exitStatus} outside any test (see its output above)`);
  failed += failedHere || (exitStatus !== 0 ? 1 : 0);
  skipped += (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0);
}
console.log(`tests: ${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
process.exit(failed > 0 || passed === 0 ? 1 : 0);
