#!/usr/bin/env node
// The cost of a sandbox in a test suite: startSandbox() the first time in a process (bundles read,
// validators compiled) and warm, close(), createAccount(), and memory per sandbox against memory per
// account, and createAccount() while other accounts' requests are served. Each line gives its ratio to
// the target (<= 1 meets it), and warm start its CPU time too (steadier than wall time on a loaded
// machine). Run with --expose-gc (bench.mjs does); needs `pnpm build`. Targets (issue 21): an account
// <= 5 ms and <= 1 MB, a warm start <= 100 ms, close() <= 50 ms. Figures, never test assertions.
// Usage: node --expose-gc packages/sandbox/bench/lifecycle.mjs [--accounts N] [--sandboxes N] [--load N]
import { parseArgs } from 'node:util';
import { startSandbox } from '../dist/index.js';

const { values } = parseArgs({
  options: {
    accounts: { type: 'string', default: '200' },
    sandboxes: { type: 'string', default: '5' },
    // createAccount() under load: this many requests in flight at once, from accounts made before.
    load: { type: 'string', default: '16' },
  },
});
const nAccounts = Number(values.accounts);
const nSandboxes = Number(values.sandboxes);
const nLoad = Number(values.load);
/** The targets, each a ratio measured / target below (<= 1 meets it). */
const TARGET = { warmStartMs: 100, closeMs: 50, accountMs: 5, accountMb: 1 };
const ratio = (measured, target) => `${(measured / target).toFixed(2)} x the target`;
/** CPU time of this process (user + system) in ms: on a loaded machine it moves less than wall time. */
const cpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
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
const startsCpu = [];
const closes = [];
for (let i = 0; i < 10; i++) {
  t0 = process.hrtime.bigint();
  const c0 = cpu();
  const s = await startSandbox();
  starts.push(ms(t0));
  startsCpu.push(cpu() - c0);
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

// createAccount() under load: nLoad clients keep requests of the accounts above in flight (each a
// Zone listing, the most common call) while 100 more accounts are made one after the other; bounded
// by the count of accounts, the clients stop with them.
let stop = false;
let served = 0;
let failed = 0;
const client = async (i) => {
  const a = accounts[(i * 7) % accounts.length];
  while (!stop) {
    const r = await fetch(`${host.accountUrl}/api/zone/get_active_zones`, { headers: { authorization: `Bearer ${a.token}` } });
    await r.arrayBuffer();
    if (r.status === 200) served++;
    else failed++;
  }
};
const clients = Array.from({ length: nLoad }, (_, i) => client(i));
await new Promise((r) => setTimeout(r, 200));
const loaded = [];
const loadStarted = process.hrtime.bigint();
for (let i = 0; i < 100; i++) {
  t0 = process.hrtime.bigint();
  await host.createAccount();
  loaded.push(ms(t0));
  // The clients' answers are served between two accounts, as between two tests of a suite.
  await new Promise((r) => setImmediate(r));
}
const loadMs = ms(loadStarted);
const servedDuring = served;
stop = true;
await Promise.all(clients);
if (failed) throw new Error(`${failed} requests under load did not answer 200`);
await host.close();

// createAccount(seed, { manager: true }): a manager API and the seed's two proxy ports of its own, on
// a sandbox whose ports listen; then remove() (its listeners closed).
const withPorts = await startSandbox({ networkPort: 0, proxyPorts: true, freeProxyPorts: true });
const own = [];
const removes = [];
for (let i = 0; i < 20; i++) {
  t0 = process.hrtime.bigint();
  const a = await withPorts.createAccount(undefined, { manager: true });
  own.push(ms(t0));
  t0 = process.hrtime.bigint();
  await a.remove();
  removes.push(ms(t0));
}
await withPorts.close();

console.log('\nlifecycle (one process; targets: warm start <= 100 ms, close() <= 50 ms, account <= 5 ms and <= 1 MB)');
console.log(
  `  startSandbox() first in the process ${firstStart.toFixed(0)} ms, warm (median of 10) ${median(starts).toFixed(1)} ms: ${ratio(median(starts), TARGET.warmStartMs)} (CPU ${median(startsCpu).toFixed(1)} ms: ${ratio(median(startsCpu), TARGET.warmStartMs)})`,
);
console.log(
  `  close() first ${firstClose.toFixed(1)} ms, median of 10 ${median(closes).toFixed(1)} ms: ${ratio(median(closes), TARGET.closeMs)}`,
);
console.log(
  `  createAccount() median of ${nAccounts} ${median(times).toFixed(2)} ms (max ${Math.max(...times).toFixed(1)} ms): ${ratio(median(times), TARGET.accountMs)}`,
);
console.log(
  `  createAccount() under load (${nLoad} clients of ${nAccounts} accounts listing Zones, ${servedDuring} requests served meanwhile, ${((servedDuring / loadMs) * 1000).toFixed(0)}/s): median of 100 ${median(loaded).toFixed(2)} ms (max ${Math.max(...loaded).toFixed(1)} ms): ${ratio(median(loaded), TARGET.accountMs)}`,
);
console.log(
  `  createAccount(seed, { manager: true }) (its manager API and 2 proxy ports listening) median of 20 ${median(own).toFixed(1)} ms: ${ratio(median(own), TARGET.accountMs)}; remove() ${median(removes).toFixed(1)} ms`,
);
console.log(
  `  memory: per sandbox ${mb(perSandbox)} MB of heap (${nSandboxes} at once), per account ${mb(perAccount)} MB (${nAccounts} on one sandbox, ${ratio(perAccount / 1024 / 1024, TARGET.accountMb)}): ${(perSandbox / perAccount).toFixed(0)} x`,
);
