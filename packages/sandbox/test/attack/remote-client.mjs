// Played by remote-clients.test.ts inside a network namespace of its own (only loopback, with a second
// address, REMOTE, on it), so that a client from beyond loopback exists without any other machine: a
// sandbox listening on 0.0.0.0, a target on 127.0.0.1, and requests from REMOTE and from 127.0.0.1
// through the network and through a port on 0.0.0.0, to it by address and by a name its hosts file
// gives 127.0.0.1. Prints one JSON line of what each got.
import { createServer, request as httpRequest } from 'node:http';
import { startSandbox } from '../../dist/index.js';

const REMOTE = process.env.REMOTE_ADDRESS ?? '10.77.0.1';
const NAME = process.env.LOOPBACK_NAME ?? 'service.test';
const egressAllow = (process.env.EGRESS_ALLOW ?? '').split(',').filter(Boolean);

const target = createServer((_req, res) => res.end('a loopback-only service'));
await new Promise((resolve) => target.listen(0, '127.0.0.1', resolve));
const targetUrl = `http://127.0.0.1:${target.address().port}/secret`;
const sandbox = await startSandbox({
  host: '0.0.0.0',
  accountPort: 0,
  managerPort: 0,
  networkPort: 0,
  proxyPorts: true,
  freeProxyPorts: false,
  egressAllow,
});
const auth = `Basic ${Buffer.from(`lum-customer-${sandbox.credentials.customer}-zone-res_zone:${sandbox.credentials.zones.res_zone[0]}`).toString('base64')}`;

/** A request through the proxy at `port` (on `via`) from `from`, to `url` (absolute form, or CONNECT to an authority). */
function send(from, via, port, url, method = 'GET', withAuth = true) {
  return new Promise((resolve) => {
    const headers = withAuth ? { 'proxy-authorization': auth } : {};
    const req = httpRequest({ host: via, port, localAddress: from, method, path: url, headers, agent: false });
    const timer = setTimeout(() => req.destroy(new Error('no answer in 10 s')), 10_000);
    const done = (status, res, text) => {
      clearTimeout(timer);
      const code = Object.entries(res?.headers ?? {}).find(([k]) => k.endsWith('-err-code'))?.[1];
      resolve({ status, code, text });
    };
    req.on('connect', (res, socket) => {
      socket.destroy();
      done(res.statusCode, res, '');
    });
    req.on('response', (res) => {
      let text = '';
      res.on('data', (c) => {
        text += c;
      });
      res.on('end', () => done(res.statusCode, res, text));
    });
    req.on('error', (err) => done(0, undefined, err.message));
    req.end();
  });
}

const out = {};
try {
  const network = Number(new URL(sandbox.networkUrl).port);
  const authority = new URL(targetUrl).host;
  out.localNetwork = await send('127.0.0.1', '127.0.0.1', network, targetUrl);
  out.remoteNetwork = await send(REMOTE, REMOTE, network, targetUrl);
  out.remoteNetworkLocalhost = await send(REMOTE, REMOTE, network, targetUrl.replace('127.0.0.1', 'localhost'));
  out.remoteConnect = await send(REMOTE, REMOTE, network, authority, 'CONNECT');
  // A port on every interface that lets the remote client in (its whitelist).
  const created = await fetch(`${sandbox.managerUrl}/api/proxies`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ proxy: { port: 26900, zone: 'res_zone', iface: '0.0.0.0', whitelist_ips: [REMOTE] } }),
  });
  out.created = created.status;
  out.localPort = await send('127.0.0.1', '127.0.0.1', 26900, targetUrl, 'GET', false);
  out.remotePort = await send(REMOTE, REMOTE, 26900, targetUrl, 'GET', false);
  out.remotePortConnect = await send(REMOTE, REMOTE, 26900, authority, 'CONNECT', false);
  // The same target by a name the namespace's hosts file gives 127.0.0.1 (--egress-allow may name it).
  const named = targetUrl.replace('127.0.0.1', NAME);
  const namedAuthority = new URL(named).host;
  out.localNetworkName = await send('127.0.0.1', '127.0.0.1', network, named);
  out.remoteNetworkName = await send(REMOTE, REMOTE, network, named);
  out.remoteConnectName = await send(REMOTE, REMOTE, network, namedAuthority, 'CONNECT');
  out.localPortName = await send('127.0.0.1', '127.0.0.1', 26900, named, 'GET', false);
  out.remotePortName = await send(REMOTE, REMOTE, 26900, named, 'GET', false);
  out.remotePortConnectName = await send(REMOTE, REMOTE, 26900, namedAuthority, 'CONNECT', false);
  // Other spellings of this machine's loopback (and of "this machine", 0.0.0.0 and ::): with --egress-allow '*'
  // they once passed as any other address, by the network (plain and CONNECT) and by a port.
  out.spellings = {};
  const targetPort = new URL(targetUrl).port;
  for (const host of [
    '0.0.0.0',
    '[::]',
    '[::ffff:127.0.0.1]',
    '[::ffff:7f00:1]',
    '[0:0:0:0:0:ffff:7f00:1]',
    '2130706433',
    '0x7f.1',
    '127.1',
    '0177.0.0.1',
    'localhost.',
    '127.0.0.1.',
  ]) {
    const url = `http://${host}:${targetPort}/secret`;
    out.spellings[host] = {
      network: (await send(REMOTE, REMOTE, network, url)).status,
      connect: (await send(REMOTE, REMOTE, network, `${host}:${targetPort}`, 'CONNECT')).status,
      port: (await send(REMOTE, REMOTE, 26900, url, 'GET', false)).status,
    };
  }
} finally {
  await sandbox.close();
  target.close();
}
process.stdout.write(`${JSON.stringify(out)}\n`);
