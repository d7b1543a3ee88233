#!/usr/bin/env node
// Reads vitest's JSON reports (one or more files: the main suite, the real-manager suite) and prints
// the closing line CI reads: `tests: N passed, M failed`, summed over all of them. A report that is
// missing or unreadable counts as one failure. Skipped or todo tests are counted and shown, never as
// passed.
import { readFileSync } from 'node:fs';

const files = process.argv.length > 2 ? process.argv.slice(2) : ['artifacts/vitest.json'];
let passed = 0;
let failed = 0;
let skipped = 0;
for (const file of files) {
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
  failed +=
    (report.numFailedTests ?? 0) +
    (report.testResults ?? []).filter((r) => r.status === 'failed' && (r.assertionResults ?? []).length === 0).length;
  skipped += (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0);
}
console.log(`tests: ${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
process.exit(failed > 0 || passed === 0 ? 1 : 0);
