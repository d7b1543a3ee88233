#!/usr/bin/env node
// Requests per second of the sandbox, for a typical GET (getZone) and POST (addZoneDomainPermission),
// against a plain node:http server answering the same JSON and against Prism mocking the same
// operation, all measured in one run so that the ratios carry the machine's noise equally. Then the
// 10,000-request fuzz (5,000 spec-derived requests per API) against the sandbox. Needs `pnpm build`.
// Usage: node packages/sandbox/bench/bench.mjs [--duration S] [--connections N] [--check RATIO] [--no-fuzz] [--no-traffic] [--no-lifecycle]
//   [--no-hostile] (skip the hostile inputs of hostile.mjs) [--only-traffic] (the traffic part alone: no API requests/s, persistence or fuzz) [--rounds N] (traffic: the
//   ways take turns N times for requests/s and 3 N times for the 50 MB download; the best of each, and the median
//   of the ratios within each round)
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { freePort } from '@zone-api/testkit/ports';
import autocannon from 'autocannon';
import { Agent, ProxyAgent, request as undiciRequest } from 'undici';
import { repo, startPrism } from './prism.mjs';
import { get, post, start } from './target-server.mjs';

const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '5' },
    connections: { type: 'string', default: '10' },
    check: { type: 'string' },
    'no-fuzz': { type: 'boolean', default: false },
    'no-traffic': { type: 'boolean', default: false },
    'only-traffic': { type: 'boolean', default: false },
    'no-hostile': { type: 'boolean', default: false },
    rounds: { type: 'string', default: '2' },
    'no-lifecycle': { type: 'boolean', default: false },
  },
});
const duration = Number(values.duration);
const connections = Number(values.connections);
const rounds = Number(values.rounds);

async function measure(url, request) {
  // A short warm-up so that both servers are measured hot.
  await autocannon({ url, connections, duration: 1, requests: [request] });
  const r = await autocannon({ url, connections, duration, requests: [request] });
  if (r.non2xx || r.errors) throw new Error(`${url}${request.path}: ${r.non2xx} non-2xx answers, ${r.errors} errors`);
  return r.requests.average;
}

const onlyTraffic = values['only-traffic'];
const results = [];
if (!onlyTraffic) await apiPart();

/** Requests/s of the API against node:http and Prism, and persistence. */
async function apiPart() {
  const sandbox = await start(['sandbox']);
  const answers = await Promise.all(
    [get, post].map(async (r) => (await fetch(`${sandbox.url}${r.path}`, { method: r.method, headers: r.headers, body: r.body })).text()),
  );
  try {
    for (const [name, request] of [
      ['GET  getZone', get],
      ['POST addZoneDomainPermission', post],
    ]) {
      const sandboxRps = await measure(sandbox.url, request);
      const plain = await start(['plain', answers[0], answers[1]]);
      let plainRps;
      try {
        plainRps = await measure(plain.url, request);
      } finally {
        plain.stop();
      }
      const prismRps = {};
      for (const quiet of [false, true]) {
        const prism = await startPrism(quiet);
        try {
          prismRps[quiet ? 'quiet' : 'default'] = await measure(prism.url, request);
        } finally {
          prism.stop();
        }
      }
      results.push({
        name,
        sandboxRps,
        plainRps,
        prismRps,
        vsPlain: sandboxRps / plainRps,
        vsPrism: sandboxRps / prismRps.default,
        vsPrismQuiet: sandboxRps / prismRps.quiet,
      });
    }
  } finally {
    sandbox.stop();
  }

  // Persistence: the same POST against a sandbox with --data (each change written to the journal before
  // its answer) and against a fresh one in memory, in turn (memory, data, memory, data), so that both
  // carry the machine's load of the same minute.
  const dataDir = mkdtempSync(join(tmpdir(), 'zone-api-bench-data-'));
  const persisted = { rps: 0, memoryRps: 0, vsMemory: 0 };
  try {
    for (let round = 0; round < 2; round++) {
      for (const withData of [false, true]) {
        const server = await start(withData ? ['sandbox-data', join(dataDir, `state-${round}.json`)] : ['sandbox']);
        try {
          persisted[withData ? 'rps' : 'memoryRps'] += (await measure(server.url, post)) / 2;
        } finally {
          server.stop();
        }
      }
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
  persisted.vsMemory = persisted.rps / persisted.memoryRps;

  console.log(
    `\n${cpus().length} x ${cpus()[0]?.model ?? 'cpu'}, Node ${process.version}; autocannon ${connections} connections, ${duration} s each\n`,
  );
  console.log('operation                      sandbox  node:http  prism  prism -v error   vs node:http  vs prism  vs prism -v error');
  for (const r of results) {
    const n = (x, w) => Math.round(x).toString().padStart(w);
    console.log(
      `${r.name.padEnd(29)}${n(r.sandboxRps, 9)}${n(r.plainRps, 11)}${n(r.prismRps.default, 7)}${n(r.prismRps.quiet, 16)}${r.vsPlain.toFixed(2).padStart(15)}${`${r.vsPrism.toFixed(1)}x`.padStart(10)}${`${r.vsPrismQuiet.toFixed(1)}x`.padStart(19)}`,
    );
  }
  console.log('(requests per second)');
  console.log('targets (issue 37): sandbox >= 0.8 x node:http and >= 20 x prism');
  console.log(
    `\npersistence: POST addZoneDomainPermission with --data ${Math.round(persisted.rps)} req/s, in memory ${Math.round(persisted.memoryRps)} req/s (means of two runs each, in turn): ${persisted.vsMemory.toFixed(2)} x (target >= 0.5 x)`,
  );
}

/**
 * MB/s of one download of `url` over `dispatcher`: an Agent (direct) or a ProxyAgent (through a
 * proxy in a CONNECT tunnel). A dispatcher kept from one download to the next carries it over the
 * connection (or tunnel) it opened before; `close` closes it after the download.
 */
async function download(url, dispatcher, close = false) {
  const started = process.hrtime.bigint();
  const res = await undiciRequest(url, { dispatcher });
  let bytes = 0;
  for await (const chunk of res.body) bytes += chunk.length;
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  if (close) await dispatcher.close();
  if (res.statusCode !== 200 || bytes !== 50 * 1024 * 1024) throw new Error(`${url}: ${res.statusCode}, ${bytes} bytes`);
  return bytes / 1024 / 1024 / seconds;
}

/**
 * The measures of each way over `rounds` rounds, the ways taking turns in every round, so that a load
 * that comes and goes on a shared machine falls on each of them alike: the best of each, and the
 * median over the rounds of each way's ratio to the first way measured in the same round.
 */
async function rounds_(ways, rounds) {
  const samples = Object.fromEntries(Object.keys(ways).map((k) => [k, []]));
  for (let i = 0; i < rounds; i++) for (const [k, run] of Object.entries(ways)) samples[k].push(await run());
  const [first] = Object.keys(ways);
  const median = (xs) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  return Object.fromEntries(
    Object.entries(samples).map(([k, xs]) => [k, { best: Math.max(...xs), ratio: median(xs.map((x, i) => x / samples[first][i])) }]),
  );
}

// Traffic: requests/s through a sandbox port (client -> port -> network -> loopback target) against
// the target direct and against a bare two-hop proxy-chain with no logic; MB/s of a 50 MB download
// through a CONNECT tunnel (client -> port -> network -> target; a port reaches the sandbox's own network in process
// for tunnels) against direct.
if (!values['no-traffic']) {
  const origin = await start(['origin']);
  try {
    const sbx = await start(['sandbox-traffic', String(await freePort())]);
    const bare = await start(['bare-chain']);
    const hop = await start(['bare-hop']);
    try {
      const small = { method: 'GET', path: `${origin.url}/small` };
      const rps = await rounds_(
        {
          chain: () => measure(bare.url, small),
          port: () => measure(sbx.url, small),
          direct: () => measure(origin.url, { method: 'GET', path: '/small' }),
        },
        rounds,
      );
      const [direct, port, chain] = [rps.direct.best, rps.port.best, rps.chain.best];
      const big = `${origin.url}/big`;
      // Each way alike: over a connection opened once and kept (the direct Agent's, each ProxyAgent's
      // tunnel), which measures the relay; and over a new connection per download (a new Agent, a new
      // ProxyAgent and so a new CONNECT), which adds what opening a tunnel costs.
      const proxies = { port: sbx.url, bare: bare.url, hop: hop.url };
      const dispatcherOf = (way) => (way === 'direct' ? new Agent() : new ProxyAgent({ uri: proxies[way] }));
      const kept = Object.fromEntries(['direct', ...Object.keys(proxies)].map((way) => [way, dispatcherOf(way)]));
      for (const d of Object.values(kept)) await download(big, d);
      const ways = (make) => Object.fromEntries(Object.keys(kept).map((way) => [way, make(way)]));
      const tunnels = await rounds_(
        ways((way) => () => download(big, kept[way])),
        rounds * 3,
      );
      const fresh = await rounds_(
        ways((way) => () => download(big, dispatcherOf(way), true)),
        rounds * 3,
      );
      for (const d of Object.values(kept)) await d.close();
      // What relaying 50 MB costs the proxy's process in CPU time (the median of a few downloads).
      const cpuPer = async (server) => {
        const costs = [];
        for (let i = 0; i < 3 * rounds; i++) {
          const before = await server.cpu();
          await download(big, new ProxyAgent({ uri: server.url }), true);
          costs.push((await server.cpu()) - before);
        }
        return costs.sort((a, b) => a - b)[Math.floor(costs.length / 2)] / 1000;
      };
      const cpuPort = await cpuPer(sbx);
      const cpuBare = await cpuPer(bare);
      const cpuHop = await cpuPer(hop);
      const [tunnelDirect, tunnelPort] = [tunnels.direct.best, tunnels.port.best];
      console.log(
        `
traffic: GET 1 KB through a sandbox port (port -> network -> target) ${Math.round(port)} req/s; a bare two-hop proxy-chain ${Math.round(chain)} req/s; the target direct ${Math.round(direct)} req/s`,
      );
      console.log(
        `  vs the bare chain ${(port / chain).toFixed(2)} x (target >= 1.0 x; median of the rounds' ratios ${rps.port.ratio.toFixed(2)} x); vs direct ${(port / direct).toFixed(2)} x`,
      );
      console.log(
        `  50 MB through an open CONNECT tunnel (port -> network, in process -> target) ${tunnelPort.toFixed(0)} MB/s, direct over an open connection ${tunnelDirect.toFixed(0)} MB/s: median of the rounds' ratios ${tunnels.port.ratio.toFixed(2)} x (target >= 0.8 x; best against best ${(tunnelPort / tunnelDirect).toFixed(2)} x)`,
      );
      console.log(
        `  the same, median of the rounds' ratios: the bare chain ${tunnels.bare.ratio.toFixed(2)} x, one bare proxy-chain hop ${tunnels.hop.ratio.toFixed(2)} x`,
      );
      console.log(
        `  a new connection per download (a new CONNECT through the port, a new TCP connection direct): the tunnel ${fresh.port.ratio.toFixed(2)} x, the bare chain ${fresh.bare.ratio.toFixed(2)} x, one bare hop ${fresh.hop.ratio.toFixed(2)} x`,
      );
      console.log(
        `  CPU time of the proxy's process to relay 50 MB: the sandbox ${cpuPort.toFixed(0)} ms, the bare chain ${cpuBare.toFixed(0)} ms (${(cpuPort / cpuBare).toFixed(2)} x), one bare hop ${cpuHop.toFixed(0)} ms`,
      );
    } finally {
      sbx.stop();
      bare.stop();
      hop.stop();
    }
  } finally {
    origin.stop();
  }
}

// startSandbox() first and warm, close(), createAccount(), memory per sandbox and per account: in a
// process of its own (it needs --expose-gc to weigh the heap).
if (!values['no-lifecycle'] && !onlyTraffic) {
  const code = await new Promise((resolve) => {
    const child = spawn(process.execPath, ['--expose-gc', fileURLToPath(new URL('./lifecycle.mjs', import.meta.url))], {
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    child.on('exit', resolve);
  });
  if (code !== 0) process.exitCode = 1;
}

if (!values['no-hostile'] && !onlyTraffic) {
  const { hostilePart } = await import('./hostile.mjs');
  await hostilePart();
}

if (!values['no-fuzz'] && !onlyTraffic) {
  console.log('\nfuzz: 5,000 spec-derived requests per API against the sandbox (no 5xx, broken ones refused, answers as declared)');
  const started = Date.now();
  const code = await new Promise((resolve) => {
    const child = spawn(
      `${repo}node_modules/.bin/vitest`,
      ['run', '--project', 'sandbox', 'packages/sandbox/test/router/validation.test.ts', '-t', 'fuzz'],
      {
        cwd: repo,
        stdio: ['ignore', 'inherit', 'inherit'],
        env: { ...process.env, FUZZ_REQUESTS: '5000' },
      },
    );
    child.on('exit', resolve);
  });
  console.log(`fuzz: 10,000 requests ${code === 0 ? 'passed' : 'FAILED'} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  if (code !== 0) process.exitCode = 1;
}

const min = values.check === undefined ? undefined : Number(values.check);
if (min !== undefined && results.some((r) => r.vsPlain < min)) {
  console.error(`\nbelow the required ratio ${min}`);
  process.exit(1);
}
