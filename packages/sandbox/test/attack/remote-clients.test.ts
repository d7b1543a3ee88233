import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { cli } from '../cli-sandbox.js';

// A sandbox listening beyond loopback (`--host 0.0.0.0`) once made its network a gateway to this
// machine's loopback-only services for any client that knew the seed's public Zone password. Now a
// client from beyond loopback is refused loopback targets (network and ports alike) unless
// `--egress-allow` names loopback, and the banner says so. Played in a network namespace of its own
// (only loopback, a second address on it for the remote client): no other machine, no real interface.
const REMOTE = '10.77.0.1';
const child = fileURLToPath(new URL('./remote-client.mjs', import.meta.url));

// The namespace's own hosts file names NAME as 127.0.0.1: no lookup leaves the machine (nor the namespace).
const NAME = 'service.test';
const hosts = join(mkdtempSync(join(tmpdir(), 'zone-api-hosts-')), 'hosts');
writeFileSync(hosts, `127.0.0.1 localhost\n::1 localhost\n127.0.0.1 ${NAME}\n`);
const setUp = `mount --bind ${hosts} /etc/hosts && ip link set lo up && ip addr add ${REMOTE}/32 dev lo`;

function needNamespaces(): void {
  const probe = spawnSync('unshare', ['-n', '-m', 'sh', '-c', setUp], { encoding: 'utf8' });
  if (probe.status !== 0)
    throw new Error(
      `this suite needs root, unshare (util-linux), mount and ip (iproute2) to make a network and mount namespace: ${probe.stderr || probe.error}`,
    );
}

/** Runs `args` in new network and mount namespaces with loopback up, REMOTE on it and NAME in its hosts file (bounded: 60 s): stdout. */
function inNamespace(args: string[], env: Record<string, string> = {}, untilOut?: RegExp): Promise<string> {
  return new Promise((resolve, reject) => {
    const proc = spawn('unshare', ['-n', '-m', 'sh', '-c', `${setUp} && exec "$@"`, 'sh', ...args], {
      env: { ...process.env, ...env, REMOTE_ADDRESS: REMOTE, LOOPBACK_NAME: NAME },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    const timer = setTimeout(() => proc.kill('SIGKILL'), 60_000);
    proc.stdout.on('data', (d) => {
      out += d;
      if (untilOut?.test(out)) proc.kill('SIGTERM');
    });
    proc.stderr.on('data', (d) => {
      err += d;
    });
    proc.once('close', (code) => {
      clearTimeout(timer);
      if (code === 0 || untilOut?.test(out)) resolve(out);
      else reject(new Error(`exited ${code}: ${err.slice(-2000)}`));
    });
  });
}

type Got = { status: number; code?: string; text: string };
/** What the child in the namespace reports: each request's answer by name, and the port create's status. */
type Played = Record<
  | 'localNetwork'
  | 'remoteNetwork'
  | 'remoteNetworkLocalhost'
  | 'remoteConnect'
  | 'localPort'
  | 'remotePort'
  | 'remotePortConnect'
  | 'localNetworkName'
  | 'remoteNetworkName'
  | 'remoteConnectName'
  | 'localPortName'
  | 'remotePortName'
  | 'remotePortConnectName',
  Got
> & { created: number; spellings: Record<string, { network: number; connect: number; port: number }> };
async function play(egressAllow = ''): Promise<Played> {
  const out = await inNamespace([process.execPath, child], { EGRESS_ALLOW: egressAllow });
  return JSON.parse(out.trim().split('\n').at(-1) as string);
}

describe('a sandbox on 0.0.0.0 and a client from beyond loopback', () => {
  it('is refused loopback targets through the network (plain, localhost, CONNECT) and through a port; a local client is not', async () => {
    needNamespaces();
    const r = await play();
    expect(r.localNetwork.status, r.localNetwork.text).toBe(200);
    expect(r.localNetwork.text).toBe('a loopback-only service');
    for (const key of ['remoteNetwork', 'remoteNetworkLocalhost', 'remoteConnect'] as const) {
      expect(r[key].status, `${key}: ${r[key].text}`).toBe(403);
      expect(r[key].code, key).toBe('egress_refused');
    }
    expect(r.remoteNetwork.text).toBe(
      `A client from ${REMOTE} may not reach 127.0.0.1: loopback targets are this machine's own services, open to clients on it only; name loopback in --egress-allow to open them to remote clients`,
    );
    expect(r.created).toBe(200);
    expect(r.localPort.status, r.localPort.text).toBe(200);
    expect(r.remotePort.status, r.remotePort.text).toBe(403);
    expect(r.remotePort.text).toMatch(new RegExp(`^A client from ${REMOTE.replace(/\./g, '\\.')} may not reach 127\\.0\\.0\\.1`));
    expect(r.remotePortConnect.status).toBe(403);
  }, 90_000);

  it('a name --egress-allow allows that resolves to loopback: refused to the remote client (network, CONNECT, port), reached by a local one', async () => {
    needNamespaces();
    const r = await play(NAME);
    expect(r.localNetworkName.status, r.localNetworkName.text).toBe(200);
    expect(r.localNetworkName.text).toBe('a loopback-only service');
    expect(r.localPortName.status, r.localPortName.text).toBe(200);
    for (const key of ['remoteNetworkName', 'remoteConnectName', 'remotePortName', 'remotePortConnectName'] as const)
      expect(r[key].status, `${key}: ${r[key].text}`).toBe(403);
    for (const key of ['remoteNetworkName', 'remoteConnectName'] as const) expect(r[key].code, key).toBe('egress_refused');
    expect(r.remoteNetworkName.text).toBe(
      `A client from ${REMOTE} may not reach ${NAME}: loopback targets are this machine's own services, open to clients on it only; name loopback in --egress-allow to open them to remote clients (${NAME} resolves to 127.0.0.1)`,
    );
    expect(r.remotePortName.text).toBe(r.remoteNetworkName.text);
    // Named loopback opens it, as it opens 127.0.0.1.
    const open = await play(`${NAME},loopback`);
    expect(open.remoteNetworkName.status, open.remoteNetworkName.text).toBe(200);
    expect(open.remotePortName.status, open.remotePortName.text).toBe(200);
  }, 120_000);

  it("with --egress-allow '*': every other spelling of loopback, 0.0.0.0 and :: is refused as loopback is (network, CONNECT, port)", async () => {
    needNamespaces();
    const r = await play('*');
    expect(Object.keys(r.spellings).length).toBe(11);
    const refused = { network: 403, connect: 403, port: 403 };
    expect(r.spellings).toEqual(Object.fromEntries(Object.keys(r.spellings).map((host) => [host, refused])));
  }, 120_000);

  it('reaches them once --egress-allow names loopback', async () => {
    needNamespaces();
    const r = await play('loopback');
    expect(r.remoteNetwork.status, r.remoteNetwork.text).toBe(200);
    expect(r.remoteNetwork.text).toBe('a loopback-only service');
    expect(r.remotePort.status, r.remotePort.text).toBe(200);
  }, 90_000);

  it('the banner says what a remote client can reach', async () => {
    needNamespaces();
    const out = await inNamespace([process.execPath, cli, '--host', '0.0.0.0', '--free-ports', '--no-proxy-ports'], {}, /control {6}GET/);
    expect(out).toMatch(
      /egress {7}loopback only .*\n {15}loopback, for clients on this machine only \(a client from beyond loopback is refused loopback targets unless --egress-allow names loopback\)\n/,
    );
  }, 90_000);
});
