#!/usr/bin/env node
// Requests per second of the sandbox against a plain node:http server answering the same JSON, for a
// typical GET (getZone) and POST (addZoneDomainPermission). Needs `pnpm build` first.
// Usage: node packages/sandbox/bench/bench.mjs [--duration S] [--connections N] [--check RATIO]
import { fork } from 'node:child_process';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';

const { values } = parseArgs({
  options: { duration: { type: 'string', default: '5' }, connections: { type: 'string', default: '10' }, check: { type: 'string' } },
});
const duration = Number(values.duration);
const connections = Number(values.connections);
const target = new URL('./target.mjs', import.meta.url);

const headers = { authorization: 'Bearer sandbox-token-0001', 'content-type': 'application/json' };
const get = { method: 'GET', path: '/api/zone?customer=hl_1a2b3c4d&zone=static_zone', headers };
const post = {
  method: 'POST',
  path: '/api/zone/domain_perm',
  headers,
  body: JSON.stringify({ customer: 'hl_1a2b3c4d', zone: 'static_zone', type: 'whitelist', domain: 'bench.example.com' }),
};

function start(args) {
  return new Promise((resolve, reject) => {
    const child = fork(target, args, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    child.once('message', (m) => resolve({ url: m.url, stop: () => child.kill() }));
    child.once('exit', (code) => reject(new Error(`${args[0]} server exited (${code})`)));
  });
}

async function measure(url, request) {
  // A short warm-up so that both servers are measured hot.
  await autocannon({ url, connections, duration: 1, requests: [request] });
  const r = await autocannon({ url, connections, duration, requests: [request] });
  if (r.non2xx || r.errors) throw new Error(`${url}${request.path}: ${r.non2xx} non-2xx answers, ${r.errors} errors`);
  return r.requests.average;
}

const sandbox = await start(['sandbox']);
const answers = await Promise.all(
  [get, post].map(async (r) => (await fetch(`${sandbox.url}${r.path}`, { method: r.method, headers: r.headers, body: r.body })).text()),
);
const results = [];
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
    results.push({ name, sandboxRps, plainRps, ratio: sandboxRps / plainRps });
  }
} finally {
  sandbox.stop();
}

console.log(`\n${connections} connections, ${duration} s each\n`);
console.log('operation                       sandbox req/s   node:http req/s   ratio');
for (const r of results) {
  console.log(
    `${r.name.padEnd(32)}${Math.round(r.sandboxRps).toString().padStart(13)}${Math.round(r.plainRps).toString().padStart(18)}${r.ratio.toFixed(2).padStart(8)}`,
  );
}
const min = values.check === undefined ? undefined : Number(values.check);
if (min !== undefined && results.some((r) => r.ratio < min)) {
  console.error(`\nbelow the required ratio ${min}`);
  process.exit(1);
}
