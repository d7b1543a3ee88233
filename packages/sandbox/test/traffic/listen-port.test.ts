import { connect } from 'node:net';
import { freePort, type RulesTarget, startRulesTarget, viaProxy } from '@zone-api/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listenPortOf } from '../../src/traffic/listen-port.js';
import { RES, type Rec, useTrafficSandbox } from '../helpers.js';

// A port's `listen_port` as the real manager 1.570.247 reads it (src/traffic/listen-port.ts): the port
// listens there instead of on `port`, logs and names its sessions after it; a value Node cannot listen on
// leaves the port listening nowhere, kept all the same. The real-manager suite proves it side by side
// (listen-port.test.ts); these cases hold the sandbox to it on its own.

const t = useTrafficSandbox();
let target: RulesTarget;
beforeAll(async () => {
  target = await startRulesTarget();
});
afterAll(() => target.close());

/** Whether something accepts a TCP connection on the loopback port. */
function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

async function api(method: string, path: string, body?: unknown): Promise<{ status: number; json: Rec }> {
  const res = await fetch(`${t.sandbox.managerUrl}${path}`, {
    method,
    ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
  });
  const text = await res.text();
  return { status: res.status, json: text ? (JSON.parse(text) as Rec) : {} };
}

describe('listenPortOf: where the real manager listens for a port', () => {
  it.each([
    [{ port: 24000 }, 24000],
    [{ port: 24000, listen_port: 24050 }, 24050],
    [{ port: 24000, listen_port: '24050' }, 24050],
    [{ port: 24000, listen_port: ' 24050 ' }, 24050],
    [{ port: 24000, listen_port: 0 }, 24000],
    [{ port: 24000, listen_port: '' }, 24000],
    [{ port: 24000, listen_port: false }, 24000],
    [{ port: 24000, listen_port: '0' }, 0],
    [{ port: 24000, listen_port: 7 }, 7],
    [{ port: 24000, listen_port: { a: 1 } }, undefined],
    [{ port: 24000, listen_port: ['x'] }, undefined],
    [{ port: 24000, listen_port: true }, undefined],
    [{ port: 24000, listen_port: 70000 }, undefined],
    [{ port: 24000, listen_port: -1 }, undefined],
    [{ port: 24000, listen_port: 24050.5 }, undefined],
    [{ port: 24000, listen_port: 'abc' }, undefined],
    [{ port: 24000, listen_port: '-1' }, undefined],
    [{ port: 24000, listen_port: ' ' }, undefined],
  ])('%j listens on %s', (cfg, expected) => {
    expect(listenPortOf(cfg)).toBe(expected);
  });
});

describe("a port's listen_port", () => {
  it('is where the port listens, not its port: traffic there is served and logged under it, its port refuses', async () => {
    const [port, at] = [await freePort(), await freePort()];
    const created = await api('POST', '/api/proxies', { proxy: { port, zone: RES, listen_port: at } });
    expect(created.status).toBe(200);
    expect(created.json.data).toMatchObject({ port, listen_port: at });
    expect(await accepts(port)).toBe(false);
    const served = await viaProxy(`http://127.0.0.1:${at}`, `${target.url}/listen-port-served?st=200`);
    expect(served).toMatchObject({ status: 200, text: 'hello /listen-port-served?st=200' });
    await t.sandbox.settled();
    const logs = (await api('GET', '/api/logs?search=listen-port-served')).json;
    expect(logs.log.entries).toHaveLength(1);
    expect(logs.log.entries[0].details).toMatchObject({
      port: at,
      username: expect.stringMatching(new RegExp(`-session-${at}_\\d+-debug-none$`)),
    });
    const stats = (await api('GET', '/api/recent_stats')).json;
    expect(stats.ports[String(at)]).toMatchObject({ reqs: 1 });
    expect(stats.ports).not.toHaveProperty(String(port));
    // Stored and running as given; the API still knows it by its port.
    expect((await api('GET', '/api/proxies')).json).toContainEqual(expect.objectContaining({ port, listen_port: at }));
    expect(((await api('GET', '/api/proxies_running')).json as unknown as Rec[]).map((p) => p.port)).toContain(port);
    expect((await api('DELETE', `/api/proxies/${port}`)).status).toBe(204);
    expect(await accepts(at)).toBe(false);
  });

  it.each([{ a: 1 }, 'abc', 70000])('%j, a value Node cannot listen on: the port is created and kept, listening nowhere', async (value) => {
    const port = await freePort();
    const created = await api('POST', '/api/proxies', { proxy: { port, zone: RES, listen_port: value } });
    expect(created.status).toBe(200);
    expect(await accepts(port)).toBe(false);
    expect(t.sandbox.listeningPorts()).not.toContain(port);
    expect(((await api('GET', '/api/proxies')).json as unknown as Rec[]).map((p) => p.port)).toContain(port);
    expect((await api('DELETE', `/api/proxies/${port}`)).status).toBe(204);
  });

  it('in use by another port: the later port listens nowhere, the first keeps it', async () => {
    const [first, second] = [await freePort(), await freePort()];
    expect((await api('POST', '/api/proxies', { proxy: { port: first, zone: RES } })).status).toBe(200);
    expect((await api('POST', '/api/proxies', { proxy: { port: second, zone: RES, listen_port: first } })).status).toBe(200);
    expect(await accepts(second)).toBe(false);
    const served = await viaProxy(`http://127.0.0.1:${first}`, `${target.url}/listen-port-taken?st=200`);
    expect(served.status).toBe(200);
    await t.sandbox.settled();
    expect((await api('GET', '/api/logs?search=listen-port-taken')).json.log.entries[0].details.port).toBe(first);
    await api('DELETE', `/api/proxies/${second}`);
    await api('DELETE', `/api/proxies/${first}`);
  });

  it('updated in place, the port listens where it did; a restart (multiply changed) listens on the new one', async () => {
    const [port, at, next] = [await freePort(), await freePort(), await freePort()];
    expect((await api('POST', '/api/proxies', { proxy: { port, zone: RES, listen_port: at } })).status).toBe(200);
    expect((await api('PUT', `/api/proxies/${port}`, { proxy: { listen_port: next } })).status).toBe(200);
    expect([await accepts(at), await accepts(next)]).toEqual([true, false]);
    expect((await api('PUT', `/api/proxies/${port}`, { proxy: { multiply: 1, listen_port: next, ips: ['1.1.1.1'] } })).status).toBe(200);
    expect([await accepts(at), await accepts(next), await accepts(port)]).toEqual([false, true, false]);
    expect((await api('DELETE', `/api/proxies/${port}`)).status).toBe(204);
    expect(await accepts(next)).toBe(false);
  });
});
