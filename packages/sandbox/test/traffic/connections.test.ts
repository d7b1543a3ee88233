import { connect } from 'node:net';
import { freePort, type RulesTarget, startRulesTarget, viaProxy } from '@zone-api/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RES, type Rec, useTrafficSandbox } from '../helpers.js';

// A port's client connections as the real manager takes them (src/traffic/connections.ts): its
// `socket_inactivity_timeout` ends a connection idle that long, and a value Node's socket.setTimeout
// refuses (a text, as a create's form body gives it) resets every connection of the port. The
// real-manager suite proves both side by side (running-ports.test.ts); these cases hold the sandbox to
// it on its own, so that its own suite catches a regression.

const t = useTrafficSandbox();
let target: RulesTarget;
beforeAll(async () => {
  target = await startRulesTarget();
});
afterAll(() => target.close());

async function create(body: string, media: string): Promise<void> {
  const res = await fetch(`${t.sandbox.managerUrl}/api/proxies`, { method: 'POST', body, headers: { 'content-type': media } });
  expect(res.status, await res.text()).toBe(200);
}

/** The paths of the log entries whose URL holds `tag`, sorted. */
async function loggedPaths(tag: string): Promise<string[]> {
  await t.sandbox.settled();
  const res = await fetch(`${t.sandbox.managerUrl}/api/logs?limit=0&search=${encodeURIComponent(tag)}`);
  const entries = ((await res.json()) as Rec).log.entries as Rec[];
  return entries.map((e) => new URL(e.request.url as string).pathname).sort();
}

/** A raw connection to the port that sends nothing: how it ended (`closed` by the port) and after how long. */
function idleConnection(port: number): Promise<{ how: string; ms: number }> {
  const started = Date.now();
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const guard = setTimeout(() => {
      socket.destroy();
      resolve({ how: 'still open after 5 s', ms: Date.now() - started });
    }, 5000);
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(guard);
      resolve({ how: 'closed', ms: Date.now() - started });
    });
    socket.resume();
  });
}

describe("a port's socket_inactivity_timeout", () => {
  it('ends a connection idle that long: one that sends nothing, and a request still waiting for its answer, which is not logged', async () => {
    const port = await freePort();
    await create(JSON.stringify({ proxy: { port, zone: RES, socket_inactivity_timeout: 300 } }), 'application/json');
    const idle = await idleConnection(port);
    expect(idle.how).toBe('closed');
    // Ended by the timeout, not at once (a timer never fires early).
    expect(idle.ms).toBeGreaterThanOrEqual(290);
    // The target answers after 1.5 s; the client's connection is idle meanwhile.
    const slow = await viaProxy(`http://127.0.0.1:${port}`, `${target.url}/sit-idle-slow?st=200&wait=1500`, { idleMs: 5000 });
    expect(slow).toMatchObject({ status: 0, text: 'socket hang up' });
    const fast = await viaProxy(`http://127.0.0.1:${port}`, `${target.url}/sit-idle-fast?st=200`, { idleMs: 5000 });
    expect(fast).toMatchObject({ status: 200, text: 'hello /sit-idle-fast?st=200' });
    // Once the slow target has answered the port (it asked; 1.5 s), the log holds the answered request alone.
    expect(target.asked.get('/sit-idle-slow')).toBe(1);
    await expect.poll(() => target.answered.get('/sit-idle-slow'), { timeout: 15_000 }).toBe(1);
    expect(await loggedPaths('/sit-idle-')).toEqual(['/sit-idle-fast']);
  });

  it("given as text (a form body): every connection of the port is reset, nothing is logged, its status is 'error'; other ports answer", async () => {
    const port = await freePort();
    await create(`proxy[port]=${port}&proxy[zone]=${RES}&proxy[socket_inactivity_timeout]=300`, 'application/x-www-form-urlencoded');
    const stored = ((await (await fetch(`${t.sandbox.managerUrl}/api/proxies`)).json()) as Rec[]).find((p) => p.port === port);
    expect(stored?.socket_inactivity_timeout).toBe('300');
    const other = await freePort();
    await create(JSON.stringify({ proxy: { port: other, zone: RES } }), 'application/json');
    for (const path of ['/sit-text-a?st=200', '/sit-text-b?st=200']) {
      expect(await viaProxy(`http://127.0.0.1:${port}`, `${target.url}${path}`, { idleMs: 5000 })).toMatchObject({
        status: 0,
        text: 'read ECONNRESET',
      });
    }
    const answered = await viaProxy(`http://127.0.0.1:${other}`, `${target.url}/sit-text-other?st=200`, { idleMs: 5000 });
    expect(answered).toMatchObject({ status: 200, text: 'hello /sit-text-other?st=200' });
    const status = await fetch(`${t.sandbox.managerUrl}/api/proxy_status/${port}?force=1`);
    expect(await status.json()).toEqual({ status: 'error', status_details: [] });
    expect(await loggedPaths('/sit-text-')).toEqual(['/sit-text-other']);
    expect(target.asked.get('/sit-text-a')).toBeUndefined();
  });
});
