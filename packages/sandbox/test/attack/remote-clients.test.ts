import { spawn, spawnSync } from 'node:child_process';
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

function needNamespaces(): void {
  const probe = spawnSync('unshare', ['-n', 'sh', '-c', 'ip link set lo up && ip addr add 10.77.0.1/32 dev lo'], { encoding: 'utf8' });
  if (probe.status !== 0)
    throw new Error(
      `this suite needs root, unshare (util-linux) and ip (iproute2) to make a network namespace: ${probe.stderr || probe.error}`,
    );
}

/** Runs `args` in a new network namespace with loopback up and REMOTE on it (bounded: 60 s): stdout. */
function inNamespace(args: string[], env: Record<string, string> = {}, untilOut?: RegExp): Promise<string> {
  return new Promise((resolve, reject) => {
    const proc = spawn('unshare', ['-n', 'sh', '-c', `ip link set lo up && ip addr add ${REMOTE}/32 dev lo && exec "$@"`, 'sh', ...args], {
      env: { ...process.env, ...env, REMOTE_ADDRESS: REMOTE },
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
  'localNetwork' | 'remoteNetwork' | 'remoteNetworkLocalhost' | 'remoteConnect' | 'localPort' | 'remotePort' | 'remotePortConnect',
  Got
> & { created: number };
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
