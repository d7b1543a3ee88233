#!/usr/bin/env node
// The per-call cost of the typed client against a bare `fetch` and against openapi-fetch alone, the
// same GET (getZone) to the same local server, in one run: the ratios say what our layer (auth,
// timeouts and deadline, retries, redaction, the text-body and media checks) adds to each call.
// Needs `pnpm build`. Usage: node packages/account-client/bench/cost.mjs [--calls N] [--concurrency C] [--rounds R]
import { createServer } from 'node:http';
import { cpus } from 'node:os';
import { parseArgs } from 'node:util';
import createClient from 'openapi-fetch';
import { createAccountClient } from '../dist/index.js';

const { values } = parseArgs({
  options: {
    calls: { type: 'string', default: '500' },
    concurrency: { type: 'string', default: '10' },
    rounds: { type: 'string', default: '40' },
  },
});
const calls = Number(values.calls);
const rounds = Number(values.rounds);
const concurrency = Number(values.concurrency);

const zone = JSON.stringify({ ips: 'any', password: ['z8x7c6v5b4n3'], plans: [{ start: '2024-05-01T10:20:30.123Z', type: 'static' }] });
const server = createServer((_req, res) => {
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
  res.end(zone);
});
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const baseUrl = `http://127.0.0.1:${server.address().port}`;
const token = 'sandbox-token-0001';
const query = { customer: 'hl_1a2b3c4d', zone: 'static_zone' };

const bare = async () => {
  const res = await fetch(`${baseUrl}/api/zone?customer=hl_1a2b3c4d&zone=static_zone`, { headers: { authorization: `Bearer ${token}` } });
  if (!res.ok) throw new Error(`bare fetch: ${res.status}`);
  return res.json();
};
const plain = createClient({ baseUrl, headers: { authorization: `Bearer ${token}` } });
const openapiFetch = async () => {
  const { data, error } = await plain.GET('/api/zone', { params: { query } });
  if (error || !data) throw new Error('openapi-fetch: no data');
  return data;
};
const client = createAccountClient({ baseUrl, auth: { token } });
const typed = async () => {
  const { data, error } = await client.getZone({ params: { query } });
  if (error || !data) throw new Error('typed client: no data');
  return data;
};

/**
 * The time that `calls` calls of `call` take, `concurrency` in flight: the process's CPU time (user and
 * system), which the other processes on a shared machine do not inflate as they do the wall clock.
 * The server runs in this process too: its share is the same for the three.
 */
async function timed(call) {
  let next = 0;
  const before = process.cpuUsage();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next++ < calls) await call();
    }),
  );
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1e6;
}

// The three take turns, in short rounds, so that a change in the machine's load (other processes
// share the CPU) falls on all three alike. A variant's cost is the median, over the rounds, of its
// time in a round divided by bare fetch's time in the same round; the range of those ratios shows
// how much the load moved.
const variants = { bare, openapiFetch, typed };
for (const call of Object.values(variants)) await timed(call); // warm-up: the connection pool, the JIT
const seconds = { bare: [], openapiFetch: [], typed: [] };
const order = Object.entries(variants);
for (let round = 0; round < rounds; round++) {
  // Each round starts with the next one, so that none always follows the same (and pays for its garbage).
  for (let i = 0; i < order.length; i++) {
    const [name, call] = order[(round + i) % order.length];
    seconds[name].push(await timed(call));
  }
}
server.close();

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};
const ratios = (name) => seconds[name].map((s, i) => s / seconds.bare[i]);
const cost = (name) => median(ratios(name));
const range = (name) => `rounds ${Math.min(...ratios(name)).toFixed(2)}–${Math.max(...ratios(name)).toFixed(2)}`;
const rate = (name) => Math.round((median(seconds[name]) / calls) * 1e6);
console.log(
  `\nclient cost: ${calls} GET getZone calls per round, ${concurrency} in flight, ${rounds} interleaved rounds, median of per-round ratios of CPU time (${cpus().length} x ${cpus()[0]?.model ?? 'cpu'}, Node ${process.version})`,
);
console.log(`  bare fetch      ${String(rate('bare')).padStart(5)} µs CPU a call   1.00 x`);
console.log(
  `  openapi-fetch   ${String(rate('openapiFetch')).padStart(5)} µs CPU a call   ${cost('openapiFetch').toFixed(2)} x bare fetch   (${range('openapiFetch')})`,
);
console.log(
  `  typed client    ${String(rate('typed')).padStart(5)} µs CPU a call   ${cost('typed').toFixed(2)} x bare fetch   (${range('typed')}; target <= 1.30 x)`,
);
console.log(`  typed client / openapi-fetch alone: ${median(seconds.typed.map((s, i) => s / seconds.openapiFetch[i])).toFixed(2)} x`);
