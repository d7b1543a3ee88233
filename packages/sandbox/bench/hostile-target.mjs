// A sandbox (network, listening ports, a HAR log of 1,000 long URLs) in a process of its own, for the
// hostile part of the bench: it reports its event loop's longest delay, its RSS, and how long close() takes.
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { defaultSeed, startSandbox } from '../dist/index.js';

const seed = defaultSeed();
seed.manager.ports = [];
const template = seed.manager.har[0];
for (let i = 0; i < 1000; i++) {
  const e = structuredClone(template);
  e.request.url = `https://example.com/${String(i).padStart(4, '0')}/${'ab'.repeat(490)}`;
  seed.manager.har.push(e);
}
const sandbox = await startSandbox({ accountPort: 0, managerPort: 0, networkPort: 0, proxyPorts: true, seed });
const lag = monitorEventLoopDelay({ resolution: 5 });
lag.enable();
process.send({ accountUrl: sandbox.accountUrl, managerUrl: sandbox.managerUrl, networkUrl: sandbox.networkUrl });
process.on('message', async (m) => {
  if (m === 'reset') {
    lag.reset();
    process.send({ reset: true });
  } else if (m === 'lag') process.send({ lag: lag.max / 1e6 });
  else if (m === 'cpu') {
    const u = process.cpuUsage();
    process.send({ cpu: (u.user + u.system) / 1000 });
  } else if (m === 'rss') {
    globalThis.gc?.();
    process.send({ rss: process.memoryUsage().rss });
  } else if (m === 'faults') {
    sandbox.faults.account.arm({ latency_ms: 60_000 });
    sandbox.faults.manager.arm({ latency_ms: 60_000, operationId: 'getVersion' });
    process.send({ armed: true });
  } else if (m === 'drop') {
    sandbox.faults.account.arm({ drop: true });
    process.send({ armed: true });
  } else if (m === 'close') {
    const started = performance.now();
    await sandbox.close();
    process.send({ closeMs: performance.now() - started });
  }
});
