#!/usr/bin/env node
// CPU time per request (user + system of the server's process over a fixed number of requests), the
// sandbox against node:http answering the same JSON: what a request costs, which holds on a loaded
// machine where requests per second do not. Usage (after `pnpm build`):
// node packages/sandbox/bench/cpu.mjs [--requests N] [--connections N] [--rounds N] [--profile DIR]
// (--profile: the sandbox's process runs with --cpu-prof, its profile written into DIR at the end).
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { get, post, start } from './target-server.mjs';

const { values } = parseArgs({
  options: {
    requests: { type: 'string', default: '20000' },
    connections: { type: 'string', default: '10' },
    rounds: { type: 'string', default: '3' },
    profile: { type: 'string' },
  },
});
const amount = Number(values.requests);
const connections = Number(values.connections);
/** Microseconds of the server's CPU per request over `amount` requests, after a warm-up of a tenth. */
export async function cpuPerRequest(server, request, opts = {}) {
  const run = (n) => autocannon({ url: server.url, connections, amount: n, requests: [request], ...opts });
  await run(Math.ceil(amount / 10));
  const before = await server.cpu();
  const r = await run(amount);
  const used = (await server.cpu()) - before;
  if (r.non2xx || r.errors) throw new Error(`${server.url}${request.path}: ${r.non2xx} non-2xx answers, ${r.errors} errors`);
  return used / amount;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const rounds = Number(values.rounds);

{
  const sandbox = await start(['sandbox'], values.profile ? ['--cpu-prof', '--cpu-prof-dir', values.profile] : []);
  const answers = await Promise.all(
    [get, post].map(async (r) => (await fetch(`${sandbox.url}${r.path}`, { method: r.method, headers: r.headers, body: r.body })).text()),
  );
  const plain = await start(['plain', answers[0], answers[1]]);
  try {
    for (const [name, request] of [
      ['getZone', get],
      ['addZoneDomainPermission', post],
    ]) {
      const s = [];
      const p = [];
      for (let i = 0; i < rounds; i++) {
        s.push(await cpuPerRequest(sandbox, request));
        p.push(await cpuPerRequest(plain, request));
      }
      console.log(
        `${name.padEnd(25)} sandbox ${median(s).toFixed(1)} µs, node:http ${median(p).toFixed(1)} µs of CPU per request: ${(median(p) / median(s)).toFixed(2)} x (medians of ${rounds} rounds of ${amount})`,
      );
    }
  } finally {
    await sandbox.exit();
    plain.stop();
  }
}
