// One server for the benchmark, in its own process so that the load generator does not share its
// event loop: `sandbox` (the built package), `sandbox-data FILE` (the same with `--data FILE`),
// `plain` (node:http answering the same JSON, the baseline); for traffic, `origin` (a loopback
// target: /small, 1 KB, and /big, 50 MB), `sandbox-traffic` (the network and one listening port) and
// `bare-chain` (two proxy-chain servers chained, with no logic: the floor a two-hop proxy costs) and
// `bare-hop` (one proxy-chain server: the floor of relaying at all).
import { createServer } from 'node:http';
import { Server } from 'proxy-chain';
import { defaultSeed, startSandbox } from '../dist/index.js';

const kind = process.argv[2];
// The CPU time this process has used (user + system, microseconds), on request: what a relay costs,
// which holds on a shared machine where wall-clock throughput does not.
process.on('message', (m) => {
  if (m === 'cpu') {
    const { user, system } = process.cpuUsage();
    process.send?.({ cpu: user + system });
  }
  // An orderly exit, so that a profile asked for with --cpu-prof (cpu.mjs --profile) is written.
  if (m === 'exit') process.exit(0);
});
if (kind === 'origin') {
  const small = Buffer.alloc(1024, 'a');
  const chunk = Buffer.alloc(1024 * 1024, 0);
  const server = createServer((req, res) => {
    if (req.url === '/big') {
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(50 * chunk.length) });
      let sent = 0;
      const pump = () => {
        while (sent < 50) {
          sent++;
          if (!res.write(chunk)) return res.once('drain', pump);
        }
        res.end();
      };
      pump();
      return;
    }
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end(small);
  });
  server.listen(0, '127.0.0.1', () => process.send?.({ url: `http://127.0.0.1:${server.address().port}` }));
} else if (kind === 'sandbox-traffic') {
  const seed = defaultSeed();
  seed.manager.ports = [];
  const sandbox = await startSandbox({ accountPort: 0, managerPort: 0, networkPort: 0, proxyPorts: true, freeProxyPorts: false, seed });
  const created = await fetch(`${sandbox.managerUrl}/api/proxies`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ proxy: { zone: 'res_zone', port: Number(process.argv[3]) } }),
  });
  if (!created.ok) throw new Error(`the bench port was not created: ${created.status} ${await created.text()}`);
  process.send?.({ url: `http://127.0.0.1:${process.argv[3]}` });
} else if (kind === 'bare-hop') {
  const one = new Server({ port: 0, host: '127.0.0.1' });
  await one.listen();
  process.send?.({ url: `http://127.0.0.1:${one.port}` });
} else if (kind === 'bare-chain') {
  const second = new Server({ port: 0, host: '127.0.0.1' });
  await second.listen();
  const first = new Server({
    port: 0,
    host: '127.0.0.1',
    prepareRequestFunction: () => ({ upstreamProxyUrl: `http://127.0.0.1:${second.port}` }),
  });
  await first.listen();
  process.send?.({ url: `http://127.0.0.1:${first.port}` });
} else if (kind === 'sandbox' || kind === 'sandbox-data') {
  const sandbox = await startSandbox({ accountPort: 0, managerPort: 0, dataFile: kind === 'sandbox-data' ? process.argv[3] : undefined });
  process.send?.({ url: sandbox.accountUrl });
} else {
  // The baseline knows its answers in advance: the bodies the sandbox gives for the same requests.
  const zone = JSON.parse(process.argv[3]);
  const lists = JSON.parse(process.argv[4]);
  const server = createServer((req, res) => {
    if (req.method === 'GET') {
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
      res.end(JSON.stringify(zone));
      return;
    }
    let body = '';
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => {
      JSON.parse(body);
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
      res.end(JSON.stringify(lists));
    });
  });
  server.listen(0, '127.0.0.1', () => process.send?.({ url: `http://127.0.0.1:${server.address().port}` }));
}
