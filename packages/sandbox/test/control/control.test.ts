import { spawn } from 'node:child_process';
import { request } from 'node:http';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONTROL_TOKEN_HEADER, hostAllowed } from '../../src/control/control.js';
import { type Sandbox, startSandbox } from '../../src/index.js';
import { bearer, raw, useSandbox } from '../helpers.js';

// The sandbox holds every token and password of its state: its control endpoints must not answer a web
// page the developer visits (DNS rebinding, cross-site simple POSTs), nor the network it listens on.

const t = useSandbox();

/** A GET with a Host header of our choosing (fetch does not let a caller set Host). */
function getWithHost(base: string, path: string, host: string): Promise<{ status: number; text: string }> {
  const url = new URL(path, base);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, path: url.pathname, headers: { ...bearer, Host: host } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('on loopback', () => {
  it('a request whose Host is not a loopback name is refused on every path (DNS rebinding)', async () => {
    for (const [base, path] of [
      [t.sandbox.accountUrl, '/__sandbox/state'],
      [t.sandbox.managerUrl, '/__sandbox/state'],
      [t.sandbox.accountUrl, '/api/status'],
      [t.sandbox.managerUrl, '/api/settings'],
    ] as const) {
      const r = await getWithHost(base, path, 'rebind.attacker.example');
      expect(r.status, path).toBe(421);
      expect(r.text).not.toContain('sandbox-token');
      const ok = await getWithHost(base, path, `localhost:${new URL(base).port}`);
      expect(ok.status, path).toBe(200);
    }
  });

  it('a state-changing control request must be JSON: a cross-site simple POST (text/plain) changes nothing', async () => {
    await raw(t.sandbox.accountUrl, 'DELETE', '/api/zone', { headers: bearer, body: { zone: 'old_zone' } });
    const before = t.sandbox.state();
    for (const path of ['/__sandbox/reset', '/__sandbox/faults']) {
      const r = await raw(t.sandbox.accountUrl, 'POST', path, { text: '{"status":503}', headers: { 'Content-Type': 'text/plain' } });
      expect(r.status, path).toBe(415);
      const form = await raw(t.sandbox.managerUrl, 'POST', path, {
        text: 'a=1',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      });
      expect(form.status, path).toBe(415);
    }
    expect(t.sandbox.state()).toEqual(before);
    expect((await raw(t.sandbox.accountUrl, 'GET', '/__sandbox/faults')).json()).toEqual({ faults: [] });
    expect((await raw(t.sandbox.accountUrl, 'POST', '/__sandbox/reset', { body: {} })).status).toBe(200);
  });

  it('needs no control token, and has none', () => {
    expect(t.sandbox.controlToken).toBeUndefined();
  });
});

describe('beyond loopback (bound to 0.0.0.0; the test only talks to 127.0.0.1)', () => {
  let wide: Sandbox;
  beforeAll(async () => {
    wide = await startSandbox({ host: '0.0.0.0', accountPort: 0, managerPort: 0 });
  });
  afterAll(async () => {
    await wide?.close();
  });

  it('the control endpoints need the control token, on both ports; the APIs do not', async () => {
    const token = wide.controlToken as string;
    expect(token).toMatch(/^[A-Za-z0-9_-]{20,}$/);
    for (const base of [wide.accountUrl, wide.managerUrl]) {
      for (const [method, path, body] of [
        ['GET', '/__sandbox/state', undefined],
        ['POST', '/__sandbox/reset', {}],
        ['POST', '/__sandbox/faults', { status: 503 }],
        ['DELETE', '/__sandbox/faults', undefined],
      ] as const) {
        const none = await raw(base, method, path, { body });
        expect(none.status, `${method} ${path}`).toBe(401);
        expect(none.text).not.toContain(token);
        const wrong = await raw(base, method, path, { body, headers: { [CONTROL_TOKEN_HEADER]: `${token}x` } });
        expect(wrong.status).toBe(401);
      }
      const ok = await raw(base, 'GET', '/__sandbox/state', { headers: { [CONTROL_TOKEN_HEADER]: token } });
      expect(ok.status).toBe(200);
    }
    expect((await raw(wide.accountUrl, 'GET', '/api/status', { headers: bearer })).status).toBe(200);
  });

  it('answers a literal IP as Host, not a DNS name that is not this machine', () => {
    expect(hostAllowed('0.0.0.0', '192.0.2.10:8787')).toBe(true);
    expect(hostAllowed('0.0.0.0', 'rebind.attacker.example:8787')).toBe(false);
    expect(hostAllowed('127.0.0.1', '192.0.2.10:8787')).toBe(false);
    expect(hostAllowed('127.0.0.1', '[::1]:8787')).toBe(true);
    expect(hostAllowed('127.0.0.1', undefined)).toBe(false);
  });

  it('the bin warns in its banner, prints the addresses as bound and the token once', async () => {
    const cli = fileURLToPath(new URL('../../dist/host/cli.js', import.meta.url));
    const child = spawn(process.execPath, [cli, '--no-traffic', '--host', '0.0.0.0', '--account-port', '0', '--manager-port', '0'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const banner = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout?.on('data', (d) => {
        out += d;
        if (/X-Sandbox-Control-Token: \S+\n/.test(out)) resolve(out);
      });
      child.once('exit', (code) => reject(new Error(`exited ${code}: ${out}`)));
    });
    child.kill('SIGKILL');
    expect(banner).toMatch(/WARNING +listening on 0\.0\.0\.0, beyond loopback/);
    expect(banner).toMatch(/account 0\.0\.0\.0:\d+, manager 0\.0\.0\.0:\d+/);
    const token = /X-Sandbox-Control-Token: (\S+)/.exec(banner)?.[1] as string;
    expect(banner.split(token).length - 1).toBe(1);
  });
});
