import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, viaProxy } from '@zone-api/testkit';
import { beforeAll, describe, expect, it } from 'vitest';
import { validateSeed } from '../../src/index.js';
import { docs } from '../helpers.js';

// The bin as a user runs it (`pnpm sandbox`): the compiled dist/host/cli.js, so `pnpm build` comes first.
const cli = fileURLToPath(new URL('../../dist/host/cli.js', import.meta.url));

// The bin listens on the proxy network's and the seed's proxy ports by default: fixed ports that
// parallel tests would fight over. These runs turn traffic off unless a test asks for it.
const quiet = { ZONE_API_SANDBOX_TRAFFIC: 'off' };

function run(args: string[], env: Record<string, string> = {}) {
  return spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8', env: { ...process.env, ...quiet, ...env }, timeout: 20_000 });
}

/** Starts the bin and resolves with its banner once it is ready. */
function start(args: string[], env: Record<string, string> = {}): Promise<{ child: ChildProcess; banner: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cli, ...args], { env: { ...process.env, ...quiet, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout?.on('data', (d) => {
      out += d;
      if (out.includes('control')) resolve({ child, banner: out });
    });
    child.stderr?.on('data', (d) => {
      out += d;
    });
    child.once('exit', (code) => reject(new Error(`exited ${code}: ${out}`)));
  });
}

const exited = (child: ChildProcess) => new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));

describe('the zone-api-sandbox bin', () => {
  beforeAll(() => {
    if (!existsSync(cli)) throw new Error(`${cli} is missing: run \`pnpm build\` before the tests`);
  });

  it('starts on the given ports (flags and env), prints a banner with URLs and credentials, stops on SIGTERM', async () => {
    const { child, banner } = await start(['--account-port', '0'], { ZONE_API_SANDBOX_MANAGER_PORT: '0' });
    try {
      expect(banner).toMatch(
        /account API {2}http:\/\/127\.0\.0\.1:\d+ {3}Authorization: Bearer sandbox-token-0001 {3}customer hl_1a2b3c4d/,
      );
      expect(banner).toContain('static_zone:z8x7c6v5b4n3');
      expect(banner).toMatch(/requests {5}lenient: .*X-Sandbox-Ignored-Fields/);
      const managerUrl = /manager API {2}(\S+)/.exec(banner)?.[1] as string;
      const version = await fetch(`${managerUrl}/api/version`);
      expect(version.status).toBe(200);
      expect(((await version.json()) as { argv: string }).argv).toBe('--account-port 0');
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited(child)).toBe(0);
  });

  it("prints the built-in fixtures but never a credential from a user's own seed", async () => {
    const seed = JSON.parse(run(['--print-seed']).stdout);
    const secret = 'my-own-secret-token-42';
    seed.account.tokens[0].token = secret;
    seed.account.zones[0].passwords = ['myownzonepw'];
    const file = join(mkdtempSync(join(tmpdir(), 'zone-api-sandbox-cli-')), 'seed.json');
    writeFileSync(file, JSON.stringify(seed));
    const { child, banner } = await start(['--seed', file, '--account-port', '0', '--manager-port', '0']);
    try {
      expect(banner).not.toContain(secret);
      expect(banner).not.toContain('myownzonepw');
      expect(banner).toContain('Authorization: Bearer <from your seed>');
      expect(banner).toContain('dc_zone_2:d4c2z6n8q1p0');
    } finally {
      child.kill('SIGTERM');
    }
    await exited(child);
  });

  it('--strict refuses request fields the documentation does not name, and the banner says so', async () => {
    const { child, banner } = await start(['--account-port', '0', '--manager-port', '0', '--strict']);
    try {
      expect(banner).toMatch(/requests {5}strict: /);
      const accountUrl = /account API {2}(\S+)/.exec(banner)?.[1] as string;
      const r = await fetch(`${accountUrl}/zone/switch_100uptime`, {
        method: 'POST',
        headers: { Authorization: 'Bearer sandbox-token-0001', 'content-type': 'application/json' },
        body: JSON.stringify({ zone: 'static_zone', active: 1, colour: 'red' }),
      });
      expect(r.status).toBe(400);
      expect(await r.json()).toEqual({ error: 'Invalid request', details: [{ field: 'body.colour', reason: 'is not a known field' }] });
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited(child)).toBe(0);
  });

  it("--answer-forms seed answers the seed documentation's forms (route_ips a range); live, the default, the reference's", async () => {
    const routeIps = async (args: string[]) => {
      const { child, banner } = await start(['--account-port', '0', '--manager-port', '0', ...args]);
      try {
        const accountUrl = /account API {2}(\S+)/.exec(banner)?.[1] as string;
        const r = await fetch(`${accountUrl}/zone/route_ips?zone=static_zone`, { headers: { Authorization: 'Bearer sandbox-token-0001' } });
        return await r.text();
      } finally {
        child.kill('SIGTERM');
        await exited(child);
      }
    };
    expect(await routeIps(['--answer-forms', 'seed'])).toMatch(/^192\.0\.2\.\d+(-192\.0\.2\.\d+|\/\d+)$/);
    expect((await routeIps([])).split('\n').length).toBeGreaterThan(1);
    const bad = run(['--answer-forms', 'mine']);
    expect(bad.status).toBe(1);
    expect(bad.stderr).toMatch(/--answer-forms must be live or seed/);
    // Two starts of the bin, each a few seconds on a loaded machine.
  }, 90_000);

  it('--exit-on-shutdown lets POST /api/shutdown end the process (after answering)', async () => {
    const { child, banner } = await start(['--account-port', '0', '--manager-port', '0', '--exit-on-shutdown']);
    const managerUrl = /manager API {2}(\S+)/.exec(banner)?.[1] as string;
    const done = exited(child);
    const r = await fetch(`${managerUrl}/api/shutdown`, { method: 'POST' });
    expect(await r.json()).toEqual({ result: 'ok' });
    expect(await done).toBe(0);
  });

  it('--print-seed prints a valid seed; --help the flags', () => {
    const seed = run(['--print-seed']);
    expect(seed.status).toBe(0);
    expect(() => validateSeed(JSON.parse(seed.stdout), docs)).not.toThrow();
    const help = run(['--help']);
    expect(help.stdout).toMatch(/--data FILE/);
    expect(help.stdout).toMatch(/--strict +refuse request fields/);
    expect(help.stdout).toMatch(/ZONE_API_SANDBOX_ACCOUNT_PORT/);
  });

  it('a bad seed, a bad flag or a bad port ends with exit code 1 and a clear message', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'zone-api-sandbox-cli-')), 'seed.json');
    writeFileSync(file, '{"account": 1}');
    const bad = run(['--seed', file, '--account-port', '0', '--manager-port', '0']);
    expect(bad.status).toBe(1);
    expect(bad.stderr).toMatch(/zone-api sandbox: Invalid seed file .*seed\.json/);
    expect(run(['--colour']).status).toBe(1);
    const port = run(['--account-port', 'x']);
    expect(port.status).toBe(1);
    expect(port.stderr).toMatch(/--account-port must be a port number/);
  });
});

describe('zone-api-sandbox carries traffic', () => {
  it('starts the proxy network and the seed ports, shows them in the banner, and forwards through both', async () => {
    const target = createServer((req, res) => res.end(`hello ${req.url}`));
    await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
    const targetUrl = `http://127.0.0.1:${(target.address() as AddressInfo).port}`;
    const seed = JSON.parse(run(['--print-seed']).stdout);
    const proxyPort = await freePort();
    seed.manager.ports = [{ port: proxyPort, zone: 'dc_zone_2' }];
    const file = join(mkdtempSync(join(tmpdir(), 'zone-api-sandbox-cli-')), 'seed.json');
    writeFileSync(file, JSON.stringify(seed));
    const { child, banner } = await start(['--seed', file, '--account-port', '0', '--manager-port', '0', '--network-port', '0'], {
      ZONE_API_SANDBOX_TRAFFIC: 'on',
    });
    try {
      const network = /network {6}(http:\/\/127\.0\.0\.1:\d+)/.exec(banner)?.[1];
      expect(network, banner).toBeDefined();
      expect(banner).toContain(`proxy ports  ${proxyPort} listening`);
      expect(banner).toContain('egress       loopback only');
      const get = async (proxy: string, auth?: string) => {
        const { status, text } = await viaProxy(
          proxy,
          `${targetUrl}/x`,
          auth ? { auth: `Basic ${Buffer.from(auth).toString('base64')}` } : {},
        );
        return { status, text };
      };
      expect(await get(network as string, 'lum-customer-hl_1a2b3c4d-zone-dc_zone_2:d4c2z6n8q1p0')).toEqual({
        status: 200,
        text: 'hello /x',
      });
      expect(await get(`http://127.0.0.1:${proxyPort}`)).toEqual({ status: 200, text: 'hello /x' });
    } finally {
      child.kill('SIGTERM');
      target.close();
    }
    await exited(child);
  });
});
