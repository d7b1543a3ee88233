// A sandbox (network, listening ports, a HAR log of 1,000 long URLs) in a process of its own, for the
// hostile part of the bench: it reports its event loop's longest delay, its RSS, and how long close() takes.
import { readdirSync } from 'node:fs';
import { createServer } from 'node:net';
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
const sandbox = await startSandbox({ accountPort: 0, managerPort: 0, networkPort: 0, proxyPorts: true, freeProxyPorts: false, seed });
const lag = monitorEventLoopDelay({ resolution: 5 });
lag.enable();
process.send({ accountUrl: sandbox.accountUrl, managerUrl: sandbox.managerUrl, networkUrl: sandbox.networkUrl });

/** A port no one listens on now (the loop's first port, named as the upstream before it is created). */
const freePort = () =>
  new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });

/**
 * A second sandbox in this process (same event loop) whose upstream (--proxy) is its own port `a`, with a
 * second port `b`: a request through `a` comes back to `a`, one through `b` goes to `a` and back to it.
 */
let looped;
async function loopSandbox() {
  const a = await freePort();
  const s = defaultSeed();
  s.manager.ports = [];
  looped = await startSandbox({
    accountPort: 0,
    managerPort: 0,
    proxyPorts: true,
    freeProxyPorts: false,
    seed: s,
    upstream: { host: '127.0.0.1', port: a },
  });
  let b = await freePort();
  while (b === a) b = await freePort();
  const ports = [a, b];
  for (const port of ports) {
    const r = await fetch(`${looped.managerUrl}/api/proxies`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ proxy: { port, zone: 'res_zone' } }),
    });
    if (r.status !== 200) throw new Error(`the loop's port ${port}: ${r.status} ${await r.text()}`);
  }
  return { a: ports[0], b: ports[1] };
}

/** The HAR log of a sandbox: its entries and the bytes of the bodies they keep. */
const harOf = (s) => {
  const har = s.state().manager.har;
  const bytes = har.reduce((n, e) => n + (e.request.postData?.text?.length ?? 0) + (e.response.content.text?.length ?? 0), 0);
  return { entries: har.length, bytes };
};
process.on('message', async (m) => {
  if (m === 'reset') {
    // Each row starts clean: the garbage of the rows before it is collected now (a full GC, --expose-gc),
    // not while this row is measured (a light row right after heavy ones once absorbed their collections).
    globalThis.gc?.();
    await new Promise((r) => setImmediate(r));
    lag.reset();
    process.send({ reset: true });
  } else if (m === 'lag') process.send({ lag: lag.max / 1e6 });
  else if (m === 'cpu') {
    const u = process.cpuUsage();
    process.send({ cpu: (u.user + u.system) / 1000 });
  } else if (m === 'port' || m?.portWith) {
    // A port of its own for a row (port 0: a free one), with the rules it names.
    const r = await fetch(`${sandbox.managerUrl}/api/proxies`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ proxy: { port: 0, zone: 'res_zone', ...(m.portWith ? { rules: m.portWith } : {}) } }),
    });
    process.send({ port: (await r.json()).data.port });
  } else if (m === 'fds') {
    process.send({ fds: readdirSync('/proc/self/fd').length });
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
  } else if (m === 'loop') {
    process.send({ loop: await loopSandbox() });
  } else if (m?.harMatching) {
    process.send({ harMatching: sandbox.state().manager.har.filter((e) => e.request.url.includes(m.harMatching)).length });
  } else if (m === 'har') {
    process.send({ har: harOf(sandbox) });
  } else if (m === 'loopHar') {
    process.send({ loopHar: harOf(looped) });
  } else if (m === 'close') {
    await looped?.close();
    const started = performance.now();
    await sandbox.close();
    process.send({ closeMs: performance.now() - started });
  }
});
