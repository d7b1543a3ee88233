import { describe, expect, it } from 'vitest';
import { type Reply, SHIFT, usePair } from './pair.js';

// A port's `listen_port` as the real manager 1.570.247 runs it, played against it and the sandbox side by
// side (pair.ts; a sandbox port is the real one's number + SHIFT): the port listens there instead of on
// its `port` (lib/server.js 106 and 656-660), logs and counts its requests under it, and a value its
// server cannot listen on leaves the port listening nowhere, kept all the same. Its status check still
// asks `port` (lib/manager.js 636-639): `error`, and the real manager runs on. A request answered through
// a listen_port that is no port's number stops the whole real manager (lib/manager.js 322-325: the usage
// of a port it does not know), so the served case listens on the number of another port, one that itself
// listens nowhere.
// Each case asserts the real program's answer too, so that both cannot pass by being wrong alike.

const pair = usePair();

type Entry = { request: { url: string }; response: { status: number }; details: { port: number } };

/** The log entries whose URL holds `tag`, each as `port path status` with the port renumbered from `base`. */
function entries(r: Reply, tag: string, base: number): string[] {
  return (r.body as { log: { entries: Entry[] } }).log.entries
    .filter((e) => e.request.url.includes(tag))
    .map((e) => `${e.details.port - base} ${new URL(e.request.url).pathname} ${e.response.status}`)
    .sort();
}

/** Both sides' log entries holding `tag`, once the real manager has written `count` of them (it logs a moment after answering). */
async function logged(tag: string, count: number, base: number): Promise<[string[], string[]]> {
  const read = () => pair.both(() => ['GET', `/api/logs?limit=0&search=${encodeURIComponent(tag)}`]);
  await expect.poll(async () => entries((await read())[0], tag, 0).length).toBe(count);
  await pair.sandbox.settled();
  const [real, sbx] = await read();
  return [entries(real, tag, base), entries(sbx, tag, base + SHIFT)];
}

/** The ports of `GET /api/recent_stats`, renumbered from `base`, with their request counts. */
function statPorts(r: Reply, base: number): Record<string, number> {
  const ports = (r.body as { ports: Record<string, { reqs: number }> }).ports;
  return Object.fromEntries(Object.entries(ports).map(([k, v]) => [String(Number(k) - base), v.reqs]));
}

/** The port's status check: `error` on both (its `port` refuses), and the real manager still answers after it. */
async function statusError(port: number): Promise<void> {
  await pair.same((p) => ['GET', `/api/proxy_status/${p(port)}`], { status: 200, body: { status: 'error', status_details: [] } });
  const [real] = await pair.both(() => ['GET', '/api/version']);
  expect(real.status).toBe(200);
}

describe("a port's listen_port", () => {
  it('is where the port listens: its port refuses, listen_port is served, logged and counted under that number', async () => {
    // `other` listens nowhere; `port` listens on other's number, so its requests count as other's.
    const [port, other] = [25700, 25701];
    await pair.createBoth(other, { listen_port: { a: 1 } });
    const [created, sbxCreated] = await pair.both((p) => [
      'POST',
      '/api/proxies',
      { proxy: { port: p(port), zone: 'res_zone', listen_port: p(other) } },
    ]);
    expect(created).toMatchObject({ status: 200, body: { data: { port, listen_port: other } } });
    expect(sbxCreated).toMatchObject({ status: 200, body: { data: { port: port + SHIFT, listen_port: other + SHIFT } } });
    await statusError(port);
    const [realRefused, sbxRefused] = await pair.through(port, '/lp-refused?st=200');
    expect(realRefused.status).toBe(0);
    expect(sbxRefused.status).toBe(0);
    const [real, sbx] = await pair.through(other, '/lp-served?st=200');
    expect(real).toMatchObject({ status: 200, text: 'hello /lp-served?st=200' });
    expect(sbx).toMatchObject({ status: real.status, text: real.text });
    const [realLog, sbxLog] = await logged('/lp-', 1, port);
    expect(realLog).toEqual([`${other - port} /lp-served 200`]);
    expect(sbxLog).toEqual(realLog);
    const [realStats, sbxStats] = await pair.both(() => ['GET', '/api/recent_stats']);
    expect(statPorts(realStats, port)).toEqual({ [String(other - port)]: 1 });
    expect(statPorts(sbxStats, port + SHIFT)).toEqual(statPorts(realStats, port));
    for (const p of [port, other]) await pair.same((at) => ['DELETE', `/api/proxies/${at(p)}`], { status: 204 });
    const [realGone, sbxGone] = await pair.through(other, '/lp-gone?st=200');
    expect([realGone.status, sbxGone.status]).toEqual([0, 0]);
  });

  it.each([[{ a: 1 }], [70000]])('%j, which its server cannot listen on: created and kept, listening nowhere', async (value) => {
    const port = 25710;
    await pair.createBoth(port, { listen_port: value });
    const [real, sbx] = await pair.through(port, '/lp-nowhere?st=200');
    expect(real.status).toBe(0);
    expect(sbx.status).toBe(0);
    await pair.same(
      () => ['GET', '/api/proxies'],
      { status: 200 },
      (r) => (r.body as Array<{ port: number; listen_port?: unknown }>).map((c) => c.listen_port),
    );
    await statusError(port);
    await pair.same((p) => ['DELETE', `/api/proxies/${p(port)}`], { status: 204 });
  });
});
