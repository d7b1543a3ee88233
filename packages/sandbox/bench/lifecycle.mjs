#!/usr/bin/env node
// The cost of a sandbox in a test suite: startSandbox() the first time in a process (bundles read,
// validators compiled) and warm, close(), createAccount(), and memory per sandbox against memory per
// account. Run with --expose-gc (bench.mjs does); needs `pnpm build`. Targets (issue 21): an account
// <= 5 ms and <= 1 MB, a warm start <= 100 ms, close() <= 50 ms. Figures, never test assertions.
// Usage: node --expose-gc packages/sandbox/bench/lifecycle.mjs [--accounts N] [--sandboxes N]
import { parseArgs } from 'node:util';
import { startSandbox } from '../dist/index.js';

const { values } = parseArgs({ options: { accounts: { type: 'string', default: '200' }, sandboxes: { type: 'string', default: '5' } } });
const nAccounts = Number(values.accounts);
const nSandboxes = Number(values.sandboxes);
if (typeof globalThis.gc !== 'function') throw new Error('run with node --expose-gc');

const ms = (t0) => Number(process.hrtime.bigint() - t0) / 1e6;
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const heap = () => {
  globalThis.gc();
  globalThis.gc();
  return process.memoryUsage().heapUsed;
};
const mb = (b) => (b / 1024 / 1024).toFixed(2);

let t0 = process.hrtime.bigint();
const first = await startSandbox();
const firstStart = ms(t0);
t0 = process.hrtime.bigint();
await first.close();
const firstClose = ms(t0);

const starts = [];
const closes = [];
for (let i = 0; i < 10; i++) {
  t0 = process.hrtime.bigint();
  const s = await startSandbox();
  starts.push(ms(t0));
  t0 = process.hrtime.bigint();
  await s.close();
  closes.push(ms(t0));
}

// Memory per sandbox: nSandboxes at once, the heap before and after.
const before = heap();
const many = [];
for (let i = 0; i < nSandboxes; i++) many.push(await startSandbox());
const perSandbox = (heap() - before) / nSandboxes;
await Promise.all(many.map((s) => s.close()));

// createAccount(): time each, and the heap per account.
const host = await startSandbox();
await host.createAccount(); // the built-in seed is built once per sandbox, on the first account
const beforeAccounts = heap();
const times = [];
const accounts = [];
for (let i = 0; i < nAccounts; i++) {
  t0 = process.hrtime.bigint();
  accounts.push(await host.createAccount());
  times.push(ms(t0));
}
const perAccount = (heap() - beforeAccounts) / nAccounts;
// A request of the last account, so that it is not only made but served.
const last = accounts.at(-1);
const res = await fetch(`${host.accountUrl}/api/customer/balance`, { headers: { authorization: `Bearer ${last.token}` } });
if (res.status !== 200) throw new Error(`an account made here answered ${res.status}`);
await host.close();

console.log('\nlifecycle (one process; targets: warm start <= 100 ms, close() <= 50 ms, account <= 5 ms and <= 1 MB)');
console.log(`  startSandbox() first in the process ${firstStart.toFixed(0)} ms, warm (median of 10) ${median(starts).toFixed(1)} ms`);
console.log(`  close() first ${firstClose.toFixed(1)} ms, median of 10 ${median(closes).toFixed(1)} ms`);
console.log(`  createAccount() median of ${nAccounts} ${median(times).toFixed(2)} ms (max ${Math.max(...times).toFixed(1)} ms)`);
console.log(
  `  memory: per sandbox ${mb(perSandbox)} MB of heap (${nSandboxes} at once), per account ${mb(perAccount)} MB (${nAccounts} on one sandbox): ${(perSandbox / perAccount).toFixed(0)} x`,
);
