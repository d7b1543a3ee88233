#!/usr/bin/env node
// Reads vitest's JSON report and prints the closing line CI reads: `tests: N passed, M failed`.
// Skipped or todo tests are counted and shown, never as passed.
import { readFileSync } from 'node:fs';

const file = process.argv[2] ?? 'artifacts/vitest.json';
let report;
try {
  report = JSON.parse(readFileSync(file, 'utf8'));
} catch (e) {
  console.log(`could not read the test report ${file}: ${e.message}`);
  console.log('tests: 0 passed, 1 failed');
  process.exit(1);
}
const passed = report.numPassedTests ?? 0;
// Suites that failed to load (e.g. a broken import) have no test results but must count as failures.
const failedSuites = (report.testResults ?? []).filter((r) => r.status === 'failed' && (r.assertionResults ?? []).length === 0).length;
const failed = (report.numFailedTests ?? 0) + failedSuites;
const skipped = (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0);
console.log(`tests: ${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
process.exit(failed > 0 || passed === 0 ? 1 : 0);
