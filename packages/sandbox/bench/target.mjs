// One server for the benchmark, in its own process so that the load generator does not share its
// event loop: `sandbox` (the built package), `sandbox-data FILE` (the same with `--data FILE`) or
// `plain` (node:http answering the same JSON, the baseline).
import { createServer } from 'node:http';
import { startSandbox } from '../dist/index.js';

const kind = process.argv[2];
if (kind === 'sandbox' || kind === 'sandbox-data') {
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
