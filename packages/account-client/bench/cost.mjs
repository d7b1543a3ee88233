#!/usr/bin/env node
// The per-call cost of the typed client against a bare `fetch` and against openapi-fetch alone, the
// same GET (getZone) to the same local server, in one run: the ratios say what our layer (auth,
// timeouts and deadline, retries, redaction, the text-body and media checks) adds to each call.
// Needs `pnpm build`. Usage: node packages/account-client/bench/cost.mjs [--calls N] [--concurrency C]
import { createServer } from 'node:http';
import { cpus } from 'node:os';
import { parseArgs } from 'node:util';
import createClient from 'openapi-fetch';
import { createAccountClient } from '../dist/index.js';

const { values } = parseArgs({
  options: { calls: { type: 'string', default: '20000' }, concurrency: { type: 'string', default: '10' } },
});
const calls = Number(values.calls);
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

/** Calls per second of `call`, `calls` times with `concurrency` in flight; the best of three runs. */
async function rate(call) {
  let best = 0;
  for (let run = 0; run < 3; run++) {
    let next = 0;
    const started = process.hrtime.bigint();
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next++ < calls) await call();
      }),
    );
    best = Math.max(best, calls / (Number(process.hrtime.bigint() - started) / 1e9));
  }
  return best;
}

await rate(bare); // warm-up: the connection pool, the JIT
const results = { bare: await rate(bare), openapiFetch: await rate(openapiFetch), typed: await rate(typed) };
server.close();

const cost = (r) => results.bare / r;
console.log(
  `\nclient cost: ${calls} GET getZone calls, ${concurrency} in flight, best of 3 (${cpus().length} x ${cpus()[0]?.model ?? 'cpu'}, Node ${process.version})`,
);
console.log(`  bare fetch        ${Math.round(results.bare)} calls/s   1.00 x`);
console.log(
  `  openapi-fetch     ${Math.round(results.openapiFetch)} calls/s   ${cost(results.openapiFetch).toFixed(2)} x the per-call cost of bare fetch`,
);
console.log(`  typed client      ${Math.round(results.typed)} calls/s   ${cost(results.typed).toFixed(2)} x (target <= 1.3 x)`);
