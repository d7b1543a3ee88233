import { request as httpRequest } from 'node:http';
import { type AddressInfo, createServer as createNetServer } from 'node:net';
import { standInProxy, tunnelThrough, viaProxy } from '@zone-api/testkit';
import { describe, expect, it } from 'vitest';
import { type At, type Reply, SHIFT, usePair, workerCaughtUp } from './pair.js';

// A port's `rules` applied to its traffic, played against the real manager 1.570.247 and the sandbox
// side by side (pair.ts; a sandbox port is the real one's number + SHIFT): the same rules, the same
// requests through each side's port to the pair's loopback target, and what follows compared — the
// answers, the ban lists, the next request's exit peer, how often the target was asked, and the rules
// each log entry lists. Both sides' upstream is the sandbox's network, which gives each session its peer.

const pair = usePair();
type Side = 'real' | 'sandbox';
const SIDES: Side[] = ['real', 'sandbox'];
const portOf = (side: Side, port: number) => (side === 'real' ? port : port + SHIFT);
const managerOf = (side: Side) => (side === 'real' ? pair.manager.url : pair.sandbox.managerUrl);

/** A request through each side's port, each to a path of its own (`/<side><path>`): the answers by side. */
async function through(port: number, path: string) {
  const out = {} as Record<Side, { status: number; text: string; peer: string | undefined }>;
  for (const side of SIDES) {
    const res = await viaProxy(`http://127.0.0.1:${portOf(side, port)}`, `${pair.targetUrl}/${side}${path}`);
    out[side] = { status: res.status, text: res.text.replaceAll(`/${side}`, ''), peer: res.headers['x-brd-ip'] as string | undefined };
  }
  return out;
}

/** The rules each side's log entry of the request to `/<side><path>` lists. */
async function loggedRules(port: number, path: string): Promise<Record<Side, unknown>> {
  const out = {} as Record<Side, unknown>;
  for (const side of SIDES) {
    const p = portOf(side, port);
    const search = `/${side}${path.split('?')[0]}`;
    let rules: unknown;
    await expect
      .poll(
        async () => {
          const r = await fetch(`${managerOf(side)}/api/logs?port_from=${p}&port_to=${p}&limit=50`);
          const logs = (await r.json()) as { log: { entries: Array<{ request: { url: string }; details: { rules?: unknown } }> } };
          const e = logs.log.entries.find((x) => new URL(x.request.url).pathname === search);
          rules = e?.details.rules;
          return e !== undefined;
        },
        { timeout: 10_000 },
      )
      .toBe(true);
    out[side] = rules;
  }
  return out;
}

/** One request through a port, with no agent: its status, status text, the headers a 502 of the port sets, its body. */
function rawThrough(port: number, url: string): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path: url, headers: { host: new URL(url).host }, agent: false }, (res) => {
      let text = '';
      res.on('data', (c) => {
        text += c;
      });
      const { connection, 'transfer-encoding': te, 'x-lpm-error': error } = res.headers;
      res.on('end', () => resolve({ status: res.statusCode, statusMessage: res.statusMessage, connection, te, error, text }));
    });
    req.setTimeout(10_000, () => req.destroy(new Error(`no answer through port ${port}`)));
    req.once('error', reject);
    req.end();
  });
}

/**
 * Each side's log entries of a port (its status and the rules listed), once the real one holds `count`
 * (it writes an entry a moment after it answered) and the sandbox settled.
 */
async function portLog(port: number, count: number): Promise<Record<Side, unknown[]>> {
  const read = async (side: Side) => {
    const p = portOf(side, port);
    const r = await fetch(`${managerOf(side)}/api/logs?port_from=${p}&port_to=${p}&limit=50`);
    const logs = (await r.json()) as { log: { entries: Array<{ response: { status: number }; details: { rules?: unknown } }> } };
    return logs.log.entries.map((e) => ({ status: e.response.status, rules: e.details.rules }));
  };
  await expect.poll(async () => (await read('real')).length, { message: `the real manager logs ${count} on ${port}` }).toBe(count);
  await pair.sandbox.settled();
  return { real: await read('real'), sandbox: await read('sandbox') };
}

/** A case of a port's own 502: its port, its rule, the answer, how often it was sent, its log, and (plain requests) whether the stand-in answers the second. */
type Own502Case = [number, Record<string, unknown>, Record<string, unknown>, number, unknown[], boolean?];

/**
 * Plays each case on both sides: its port created with `proxy` and the case's rule, `play` on each side,
 * `realIs` on the real answer, the sandbox's the same, then the port's log. Once all have run, every
 * port's log is read again: an entry of a case that logs nothing would be there by then.
 */
async function playOwn502Cases(
  cases: Own502Case[],
  proxy: Record<string, unknown>,
  play: (side: Side, c: Own502Case) => Promise<Record<string, unknown>>,
  realIs: (seen: Record<string, unknown>, c: Own502Case) => void,
): Promise<void> {
  const sameLog = async (port: number, logged: unknown[]) => {
    const log = await portLog(port, logged.length);
    expect(log.real, String(port)).toEqual(logged);
    expect(log.sandbox, String(port)).toEqual(log.real);
  };
  for (const c of cases) {
    const [port, rule, , , logged] = c;
    await pair.createBoth(port, { ...proxy, rules: [rule] });
    const seen = {} as Record<Side, Record<string, unknown>>;
    for (const side of SIDES) seen[side] = await play(side, c);
    realIs(seen.real, c);
    expect(seen.sandbox, String(port)).toEqual(seen.real);
    await sameLog(port, logged);
  }
  for (const [port, , , , logged] of cases) await sameLog(port, logged);
}

const bans = async (port: number): Promise<Record<Side, Reply>> => {
  const [real, sandbox] = await pair.both((at) => ['GET', `/api/banlist/${at(port)}?full=1`]);
  return { real, sandbox };
};
type Ban = { ip: string; domain: string; to?: number };

const banRule = { action: { ban_ip: 60_000 }, action_type: 'ban_ip', trigger_type: 'status', status: '5..' };

/** Creates the port on both, its configuration written once with each side's port numbers (`at`). */
async function createWith(port: number, proxy: (at: At) => Record<string, unknown>): Promise<void> {
  const [real, sbx] = await pair.both((at) => ['POST', '/api/proxies', { proxy: { port: at(port), zone: 'res_zone', ...proxy(at) } }]);
  expect(real.status, JSON.stringify(real.body)).toBe(200);
  expect(sbx.status, JSON.stringify(sbx.body)).toBe(200);
}

/** A request through each side's port, with headers written with each side's port numbers, bounded by `idleMs`: the answers by side. */
async function routed(port: number, path: string, headers: (at: At) => Record<string, string> = () => ({}), idleMs = 10_000) {
  const out = {} as Record<Side, { status: number; text: string; peer: string | undefined }>;
  for (const side of SIDES) {
    const at = (p: number) => portOf(side, p);
    const res = await viaProxy(`http://127.0.0.1:${at(port)}`, `${pair.targetUrl}/${side}${path}`, { headers: headers(at), idleMs });
    out[side] = { status: res.status, text: res.text.replaceAll(`/${side}`, ''), peer: res.headers['x-brd-ip'] as string | undefined };
  }
  return out;
}

/**
 * How long a request routed to a port that does not exist is waited on, each side's at the same time.
 * The real manager never answers it: its worker finds no server of that port and drops the request
 * (lib/worker.js 255-260: it logs `retry failed: no server <port>` and returns; nothing writes to the
 * client after), and each case checks that line in its output. So the wait only has to outlast what comes
 * before the drop (for a 5xx rule, the round trip to the target, asked once; for x-lpm-route, the
 * request's arrival): such a round trip through either side took at most 190 ms in this file's cases at
 * load 20 on 2 cores (21 of them in a row, 360 ms), so 2 s leaves it ten times over.
 */
const NO_ANSWER_MS = 2000;

/** How often the real manager's worker has dropped a request routed to `port` (lib/worker.js 255-260). */
const drops = (port: number | string) => pair.manager.output().split(`retry failed: no server ${port}\n`).length - 1;

/** Waits until the real manager's worker has dropped `more` requests routed to `port` since it had dropped `from`. */
async function dropped(port: number | string, from: number, more = 1): Promise<void> {
  await expect.poll(() => drops(port), { message: `the real manager logs that it found no server ${port}` }).toBe(from + more);
}

/** `routed`, both sides at the same time, each bounded by NO_ANSWER_MS. */
async function unanswered(port: number, path: string, headers: (at: At) => Record<string, string> = () => ({})) {
  const [real, sandbox] = await Promise.all(
    SIDES.map(async (side) => {
      const at = (p: number) => portOf(side, p);
      const res = await viaProxy(`http://127.0.0.1:${at(port)}`, `${pair.targetUrl}/${side}${path}`, {
        headers: headers(at),
        idleMs: NO_ANSWER_MS,
      });
      return { status: res.status, text: res.text.replaceAll(`/${side}`, ''), peer: res.headers['x-brd-ip'] as string | undefined };
    }),
  );
  return { real, sandbox } as Record<Side, { status: number; text: string; peer: string | undefined }>;
}

/** A sandbox port number (this file's, 25600-25699 + SHIFT) as the real one's, wherever it shows in `v` (a rule, a session, a timeline). */
const asReal = (v: unknown): unknown => JSON.parse(JSON.stringify(v).replace(/(?<!\d)26(6\d\d)(?!\d)/g, '25$1'));

/**
 * The log entries of the request to `/<side><path>` on each of `ports`, by side: the port each is on, its
 * status, the rules it lists, its timeline's ports and sessions, and the `x-` headers it shows (the
 * sandbox's port numbers as the real one's). Read once the real manager holds `count` of them (it writes
 * an entry a moment after it answered) and the sandbox settled. A case that expects none first has a
 * later request through the same port logged (`logsAfter`), so that an entry of its own would be there.
 */
async function entriesOf(path: string, ports: number[], count = 1): Promise<Record<Side, unknown[]>> {
  await expect
    .poll(async () => (await readEntries('real', path, ports)).length, { message: `the real manager logs ${count} ${path}` })
    .toBe(count);
  await pair.sandbox.settled();
  return { real: await readEntries('real', path, ports), sandbox: asReal(await readEntries('sandbox', path, ports)) as unknown[] };
}

async function readEntries(side: Side, path: string, ports: number[]): Promise<unknown[]> {
  const out: unknown[] = [];
  for (const port of ports) {
    const p = portOf(side, port);
    const r = await fetch(`${managerOf(side)}/api/logs?port_from=${p}&port_to=${p}&limit=50`);
    type Entry = {
      request: { url: string; headers: Array<{ name: string; value: string }> };
      response: { status: number };
      details: { port: number; rules?: unknown; timeline: Array<{ port: number; session: string }> };
    };
    const logs = (await r.json()) as { log: { entries: Entry[] } };
    for (const e of logs.log.entries.filter((x) => new URL(x.request.url).pathname === `/${side}${path}`))
      out.push({
        port: e.details.port,
        status: e.response.status,
        rules: e.details.rules,
        timeline: e.details.timeline.map((t) => [t.port, t.session]),
        headers: e.request.headers.filter((h) => h.name.startsWith('x-')),
      });
  }
  return out;
}

/** A rule sending a request whose answer is a 5xx on through the port `to` (retry_port). */
const onTo = (to: unknown, more: Record<string, unknown> = {}) => ({
  action: { retry_port: to, ...more },
  action_type: 'retry_port',
  trigger_type: 'status',
  status: '5..',
});

describe('rules on both, side by side', () => {
  it('ban_ip on a status: the answer is handed on, its peer banned on the port for the rule’s time, the next request gets another peer', async () => {
    const port = 25600;
    await pair.createBoth(port, { rules: [banRule] });
    const a = await through(port, '/ban-a');
    const b = await through(port, '/ban-b');
    for (const side of SIDES) {
      expect(a[side].status, side).toBe(200);
      expect(a[side].peer, side).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
      // Nothing matched: the same session, the same peer.
      expect(b[side].peer, side).toBe(a[side].peer);
    }
    const failed = await through(port, '/ban-c?st=503');
    expect(failed.sandbox).toEqual({ ...failed.real, peer: failed.sandbox.peer });
    expect(failed.real.status).toBe(503);
    const list = await bans(port);
    const t0 = Date.now();
    for (const side of SIDES) {
      const ips = (list[side].body as { ips: Ban[] }).ips;
      expect(ips, side).toHaveLength(1);
      expect(ips[0], side).toMatchObject({ ip: failed[side].peer, domain: '' });
      expect((ips[0] as Ban).to, side).toBeGreaterThan(t0 + 50_000);
      expect((ips[0] as Ban).to, side).toBeLessThanOrEqual(t0 + 60_000);
    }
    const next = await through(port, '/ban-d');
    for (const side of SIDES) {
      expect(next[side].status, side).toBe(200);
      expect(next[side].peer, side).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
      expect(next[side].peer, side).not.toBe(failed[side].peer);
    }
    const logged = await loggedRules(port, '/ban-c');
    expect(logged.real).toEqual([{ ...banRule, type: 'after_hdr' }]);
    expect(logged.sandbox).toEqual(logged.real);
    const quiet = await loggedRules(port, '/ban-d');
    expect(quiet.real).toEqual([]);
    expect(quiet.sandbox).toEqual(quiet.real);
  });

  it('ban_ip_domain bans the peer for the request’s domain; an inactive rule does nothing', async () => {
    const port = 25610;
    await pair.createBoth(port, {
      rules: [
        { ...banRule, action: { ban_ip_domain: 0 }, action_type: 'ban_ip_domain' },
        { ...banRule, status: '4..', active: false },
      ],
    });
    const res = await through(port, '/dom-a?st=500');
    await through(port, '/dom-b?st=404');
    const list = await bans(port);
    for (const side of SIDES) expect(list[side].body, side).toEqual({ ips: [{ ip: res[side].peer, domain: '127.0.0.1' }] });
  });

  it('retry on a status: sent again as often as the rule says, the last answer handed on', async () => {
    const port = 25620;
    const rule = { action: { retry: true, retries: 2 }, action_type: 'retry', trigger_type: 'status', status: '502' };
    await pair.createBoth(port, { rules: [rule] });
    const res = await through(port, '/retry-a?st=502');
    expect(res.real.status).toBe(502);
    expect(res.sandbox).toEqual({ ...res.real, peer: res.sandbox.peer });
    expect(pair.asked.get('/real/retry-a')).toBe(3);
    expect(pair.asked.get('/sandbox/retry-a')).toBe(pair.asked.get('/real/retry-a'));
    const logged = await loggedRules(port, '/retry-a');
    expect(logged.sandbox).toEqual(logged.real);
    // A step of the timeline for each time it was sent, each with a new session.
    const steps = await entriesOf('/retry-a', [port]);
    expect(steps.real).toMatchObject([{ timeline: [0, 1, 2].map((n) => [port, `${port}_${n}`]) }]);
    expect(steps.sandbox).toEqual(steps.real);
  });

  it("the port's own 502 (an external proxy that hangs up) runs its rules: a retry sends it once more and logs nothing, a null_response answers unlogged, another rule is listed in the 502's entry", async () => {
    // Counts the requests of this case that reach the stand-in external proxy (not the status checks').
    // With `answerSecond`, it answers every second one (200 `ext`) instead of hanging up.
    let sent = 0;
    let answerSecond = false;
    const hang = createNetServer((c) =>
      c.once('data', (d: Buffer) => {
        if (d.toString().includes('/own-')) sent++;
        if (answerSecond && sent % 2 === 0) c.end('HTTP/1.1 200 OK\r\ncontent-length: 3\r\nconnection: close\r\n\r\next');
        else c.destroy();
      }),
    );
    await new Promise<void>((resolve) => hang.listen(0, '127.0.0.1', resolve));
    const ext_proxies = [`127.0.0.1:${(hang.address() as AddressInfo).port}`];
    const on502 = { action_type: 'retry', trigger_type: 'status', status: '502' };
    const failed = {
      status: 502,
      statusMessage: 'Proxy Manager - Bad Gateway',
      connection: 'close',
      te: 'chunked',
      error: 'socket hang up',
      text: '',
    };
    const ban = { action: { ban_ip: 0 }, action_type: 'ban_ip', trigger_type: 'status', status: '5..' };
    const retry = { ...on502, action: { retry: true, retries: 2 } };
    const cases: Own502Case[] = [
      // Sent twice whatever `retries` says (on an answer, retries: 2 sends it three times: lib/rules.js 220-230), and not logged.
      [25645, retry, failed, 2, []],
      // The second answers: handed on, and logged with the rule.
      [25648, retry, { status: 200, text: 'ext' }, 2, [{ status: 200, rules: [{ ...retry, type: 'after_hdr' }] }], true],
      [
        25646,
        { ...on502, action: { null_response: true }, action_type: 'null_response' },
        { status: 200, statusMessage: 'NULL', text: '' },
        1,
        [],
      ],
      [25647, ban, failed, 1, [{ status: 502, rules: [{ ...ban, type: 'after_hdr' }] }]],
    ];
    try {
      await playOwn502Cases(
        cases,
        { ext_proxies },
        async (side, [port, , , , , second]) => {
          answerSecond = second === true;
          sent = 0;
          return { ...(await rawThrough(portOf(side, port), `${pair.targetUrl}/${side}/own-${port}`)), sent };
        },
        (real, [port, , answer, times]) => expect(real, String(port)).toMatchObject({ ...answer, sent: times }),
      );
    } finally {
      hang.close();
    }
  });

  it("a tunnelled CONNECT's own 502 (an external proxy that hangs up) runs the port's status rules: a retry sends it once more and logs nothing, a null_response answers 501 NULL unlogged, another rule is listed in the 502's entry", async () => {
    // Counts the CONNECTs of this case that reach the stand-in external proxy (not the status checks'), then hangs up.
    const authority = new URL(pair.targetUrl).host;
    const hang = await standInProxy(authority);
    const ext_proxies = [hang.address];
    const on502 = { action_type: 'retry', trigger_type: 'status', status: '502' };
    const failed = { status: 502, statusMessage: 'Proxy Manager - Bad Gateway', error: 'socket hang up' };
    const ban = { action: { ban_ip: 0 }, action_type: 'ban_ip', trigger_type: 'status', status: '5..' };
    const cases: Own502Case[] = [
      // Sent twice whatever `retries` says, the same 502 answered, nothing logged.
      [25641, { ...on502, action: { retry: true, retries: 2 } }, failed, 2, []],
      [
        25642,
        { ...on502, action: { null_response: true }, action_type: 'null_response' },
        { status: 501, statusMessage: 'NULL', error: undefined },
        1,
        [],
      ],
      [25643, ban, failed, 1, [{ status: 502, rules: [{ ...ban, type: 'after_hdr' }] }]],
    ];
    try {
      await playOwn502Cases(
        cases,
        { ext_proxies },
        async (side, [port]) => {
          hang.sent = 0;
          const opened = await tunnelThrough(`http://127.0.0.1:${portOf(side, port)}`, authority);
          return { status: opened.status, statusMessage: opened.statusMessage, error: opened.headers['x-lpm-error'], sent: hang.sent };
        },
        (real, [port, , answer, times]) => expect(real, String(port)).toEqual({ ...answer, sent: times }),
      );
    } finally {
      hang.close();
    }
  });

  it("a tunnelled CONNECT's own 502 sent again by a retry, answered the second time: the tunnel opened and logged with the rule", async () => {
    // A stand-in external proxy that hangs up on the first CONNECT to the target and opens the second as an echo.
    const authority = new URL(pair.targetUrl).host;
    const hang = await standInProxy(authority, 2);
    const ext_proxies = [hang.address];
    const retry = { action: { retry: true }, action_type: 'retry', trigger_type: 'status', status: '502' };
    const port = 25644;
    try {
      await pair.createBoth(port, { ext_proxies, rules: [retry] });
      const seen = {} as Record<Side, Record<string, unknown>>;
      for (const side of SIDES) {
        hang.sent = 0;
        const opened = await tunnelThrough(`http://127.0.0.1:${portOf(side, port)}`, authority);
        seen[side] = { status: opened.status, echoed: opened.echoed, sent: hang.sent };
      }
      expect(seen.real).toEqual({ status: 200, echoed: 'ping through the tunnel\n', sent: 2 });
      expect(seen.sandbox).toEqual(seen.real);
      const log = await portLog(port, 1);
      expect(log.real).toEqual([{ status: 200, rules: [{ ...retry, type: 'after_hdr' }] }]);
      expect(log.sandbox).toEqual(log.real);
      // Each side's entry: a step of the timeline for each time the CONNECT was sent, the second with a new session.
      const detail = {} as Record<Side, unknown>;
      for (const side of SIDES) {
        const p = portOf(side, port);
        const r = await fetch(`${managerOf(side)}/api/logs?port_from=${p}&port_to=${p}&limit=50`);
        const logs = (await r.json()) as { log: { entries: Array<{ details: Record<string, unknown> }> } };
        detail[side] = logs.log.entries.map((e) => ({
          timeline: (e.details.timeline as Array<{ port: number; session: string }>).map((t) => [t.port, t.session]),
        }));
      }
      expect(detail.real).toEqual([
        {
          timeline: [
            [port, `${port}_0`],
            [port, `${port}_1`],
          ],
        },
      ]);
      expect(asReal(detail.sandbox)).toEqual(detail.real);
    } finally {
      hang.close();
    }
  });

  it('a rule on the body: the body tested, handed on whole, the peer banned', async () => {
    const port = 25630;
    const rule = { action: { ban_ip: 0 }, action_type: 'ban_ip', trigger_type: 'body', body: 'captcha' };
    await pair.createBoth(port, { rules: [rule] });
    const plain = await through(port, '/body-a');
    expect(plain.sandbox).toEqual({ ...plain.real, peer: plain.sandbox.peer });
    const hit = await through(port, '/body-b?captcha');
    expect(hit.real).toMatchObject({ status: 200, text: 'please solve the captcha' });
    expect(hit.sandbox).toEqual({ ...hit.real, peer: hit.sandbox.peer });
    const list = await bans(port);
    for (const side of SIDES) expect(list[side].body, side).toEqual({ ips: [{ ip: hit[side].peer, domain: '' }] });
    const logged = await loggedRules(port, '/body-b');
    expect(logged.real).toEqual([{ ...rule, type: 'after_body' }]);
    expect(logged.sandbox).toEqual(logged.real);
  });

  it('null_response on a URL: 200 with no body, the target not asked', async () => {
    const port = 25640;
    const rule = { action: { null_response: true }, action_type: 'null_response', trigger_type: 'url', url: 'blocked' };
    await pair.createBoth(port, { rules: [rule] });
    const res = await through(port, '/blocked-a');
    expect(res.real).toMatchObject({ status: 200, text: '' });
    expect(res.sandbox).toEqual(res.real);
    expect(pair.asked.get('/real/blocked-a')).toBeUndefined();
    expect(pair.asked.get('/sandbox/blocked-a')).toBeUndefined();
    const open = await through(port, '/open-a');
    expect(open.sandbox).toEqual({ ...open.real, peer: open.sandbox.peer });
    const logged = await loggedRules(port, '/blocked-a');
    expect(logged.sandbox).toEqual(logged.real);
  });

  it('a null_response or timeout_response once the answer arrived (a request time, a body): answered, the request logged and counted nowhere', async () => {
    const cases: Array<[number, Record<string, unknown>, Record<string, unknown>]> = [
      [
        25680,
        { action: { null_response: true }, action_type: 'null_response', trigger_type: 'max_req_time', max_req_time: 60_000 },
        { status: 200, statusMessage: 'NULL', text: '' },
      ],
      [
        25681,
        { action: { timeout_response: true }, action_type: 'timeout_response', trigger_type: 'body', body: 'hello' },
        { status: 504, statusMessage: 'Proxy manager tunnel timeout', text: 'Timeout rule triggered' },
      ],
    ];
    // A port whose requests are logged: once one through it is, an entry of the requests before it would be.
    const plain = 25690;
    await pair.createBoth(plain);
    for (const [port, rule, answer] of cases) {
      await pair.createBoth(port, { rules: [rule] });
      const seen = {} as Record<Side, Record<string, unknown>>;
      for (const side of SIDES) seen[side] = await rawThrough(portOf(side, port), `${pair.targetUrl}/${side}/late-${port}`);
      expect(seen.real, String(port)).toMatchObject(answer);
      expect(seen.sandbox, String(port)).toEqual(seen.real);
      // The target was asked: the rule acted on its answer.
      for (const side of SIDES) expect(pair.asked.get(`/${side}/late-${port}`), side).toBe(1);
      await workerCaughtUp(pair.manager.url, pair.targetUrl, plain);
      const log = await portLog(port, 0);
      expect(log.real, String(port)).toEqual([]);
      expect(log.sandbox, String(port)).toEqual([]);
    }
  });

  it('a rule tested before the request is sent whose url is an invalid regular expression fails the request: the port’s own 502 with the RegExp’s message, logged, its answer rules run', async () => {
    const port = 25682;
    const ban = { action: { ban_ip: 0 }, action_type: 'ban_ip', trigger_type: 'status', status: '5..' };
    await pair.createBoth(port, { rules: [{ action: { retry: true }, action_type: 'retry', trigger_type: 'url', url: '(' }, ban] });
    const seen = {} as Record<Side, Record<string, unknown>>;
    for (const side of SIDES) seen[side] = await rawThrough(portOf(side, port), `${pair.targetUrl}/${side}/bad-url`);
    expect(seen.real).toMatchObject({
      status: 502,
      statusMessage: 'Proxy Manager - Bad Gateway',
      error: 'Invalid regular expression: /(/: Unterminated group',
      text: '',
    });
    expect(seen.sandbox).toEqual(seen.real);
    for (const side of SIDES) expect(pair.asked.get(`/${side}/bad-url`), side).toBeUndefined();
    const log = await portLog(port, 1);
    expect(log.real).toEqual([{ status: 502, rules: [{ ...ban, type: 'after_hdr' }] }]);
    expect(log.sandbox).toEqual(log.real);
    // The same url on a rule of the answer (a status trigger) is only a trigger that never matches.
    await pair.createBoth(port + 1, { rules: [{ ...ban, url: '(' }] });
    const fine = await through(port + 1, '/bad-url-b?st=503');
    expect(fine.real.status).toBe(503);
    expect(fine.sandbox).toEqual({ ...fine.real, peer: fine.sandbox.peer });
  });

  it('a rule with no action, or one that is no object, fails every request where the action is read: the port’s own 502 with the TypeError, logged', async () => {
    const body = { action: { timeout_response: true }, action_type: 'timeout_response', trigger_type: 'body', body: 'hello' };
    const cases: Array<[number, unknown[], string, number]> = [
      // No condition (a text or a number copied into a rule): it matches, runs and reads its action.
      [25693, ['x1'], 'malware', 1],
      [25694, [7, body], 'malware', 1],
      [25695, [{ trigger_type: 'url', url: '/no-action' }], 'malware', 1],
      // A rule that did not match, or one on the answer, is asked whether it caches first.
      [25696, [{ trigger_type: 'url', url: 'nomatch' }], 'cache', 0],
      [25697, [{ trigger_type: 'status', status: '200' }], 'cache', 0],
      [25698, [{ trigger_type: 'status', status: '200', action: null }], 'cache', 0],
    ];
    for (const [port, rules, field, listed] of cases) {
      await pair.createBoth(port, { rules });
      const seen = {} as Record<Side, Record<string, unknown>>;
      for (const side of SIDES) seen[side] = await rawThrough(portOf(side, port), `${pair.targetUrl}/${side}/no-action-${port}`);
      const of = (rules.at(-1) as { action?: unknown })?.action === null ? 'null' : 'undefined';
      expect(seen.real, String(port)).toMatchObject({
        status: 502,
        error: `Cannot read properties of ${of} (reading '${field}')`,
        text: '',
      });
      expect(seen.sandbox, String(port)).toEqual(seen.real);
      for (const side of SIDES) expect(pair.asked.get(`/${side}/no-action-${port}`), side).toBeUndefined();
      const log = await portLog(port, 1);
      expect(log.real.map((e) => [(e as { status: number }).status, ((e as { rules?: unknown[] }).rules ?? []).length])).toEqual([
        [502, listed],
      ]);
      expect(log.sandbox.length, String(port)).toBe(1);
      expect((log.sandbox[0] as { status: number }).status, String(port)).toBe(502);
    }
  });

  it('a rule that fails the request before it is sent, with a retry rule on the answer: sent again as the retry says, the last failure logged (issue 34, differential)', async () => {
    // lib/rules.js 59-109: "x1" (a rule with no condition and no action) throws where its action is read;
    // lib/server.js 862-867: the 502 runs the answer rules, whose retry sends the request again
    // (lib/rules.js 187-257); the last attempt, which may not retry, is logged with both rules.
    const onTime = { trigger_type: 'max_req_time', max_req_time: 60_000, action_type: 'retry', action: { retry: true } };
    const on502 = { trigger_type: 'status', status: '502', action_type: 'retry', action: { retry: true, retries: 2 } };
    const cases: Array<[number, unknown[], number]> = [
      [25700, ['x1', onTime], 1],
      [25701, ['x1', on502], 1],
    ];
    for (const [port, rules, logged] of cases) {
      await pair.createBoth(port, { rules });
      const seen = {} as Record<Side, Record<string, unknown>>;
      for (const side of SIDES) seen[side] = await rawThrough(portOf(side, port), `${pair.targetUrl}/${side}/x1-retry-${port}`);
      expect(seen.real, String(port)).toMatchObject({
        status: 502,
        error: "Cannot read properties of undefined (reading 'malware')",
        text: '',
      });
      expect(seen.sandbox, String(port)).toEqual(seen.real);
      for (const side of SIDES) expect(pair.asked.get(`/${side}/x1-retry-${port}`), side).toBeUndefined();
      const log = await portLog(port, logged);
      expect(log.real.length, String(port)).toBe(logged);
      expect(log.sandbox, String(port)).toEqual(log.real);
    }
  });

  it('retry_port: sent again through the other port, whose answer it is and whose log has it, with both ports’ headers; the first port keeps its session', async () => {
    await createWith(25661, () => ({ headers: [{ name: 'x-second', value: 'two' }] }));
    await createWith(25660, (at) => ({ rules: [onTo(at(25661))], headers: [{ name: 'x-first', value: 'one' }] }));
    const first = await through(25660, '/wf-0');
    const other = await through(25661, '/wf-1');
    const moved = await routed(25660, '/wf-a?st=503&hdr=x-second');
    const sent = await routed(25660, '/wf-b?st=503&hdr=x-first');
    const after = await through(25660, '/wf-c');
    expect(moved.real).toEqual({ status: 503, text: 'hello /wf-a?st=503&hdr=x-second x-second=two', peer: other.real.peer });
    expect(sent.real.text).toBe('hello /wf-b?st=503&hdr=x-first x-first=one');
    for (const side of SIDES) {
      expect(moved[side], side).toEqual({ ...moved.real, peer: other[side].peer });
      expect(sent[side].text, side).toBe(sent.real.text);
      expect(after[side].peer, side).toBe(first[side].peer);
      expect(pair.asked.get(`/${side}/wf-a`), side).toBe(2);
    }
    const logged = await entriesOf('/wf-a', [25660, 25661]);
    expect(logged.real).toEqual([
      {
        port: 25661,
        status: 503,
        rules: [{ ...onTo(25661), type: 'after_hdr' }],
        timeline: [
          [25660, '25660_0'],
          [25661, '25661_0'],
        ],
        headers: [{ name: 'x-first', value: 'one' }],
      },
    ]);
    expect(logged.sandbox).toEqual(logged.real);
    const bans = await pair.both((at) => ['GET', `/api/banlist/${at(25660)}?full=1`]);
    expect(bans[1].body).toEqual(bans[0].body);
  });

  it('retry_port after a ban_ip: the first port bans its own peer, the other port answers and bans nothing', async () => {
    await createWith(25673, () => ({}));
    await createWith(25672, (at) => ({ rules: [onTo(at(25673)), banRule] }));
    const first = await through(25672, '/wb-0');
    const moved = await routed(25672, '/wb-a?st=503');
    const other = await through(25673, '/wb-1');
    for (const side of SIDES) {
      expect(moved[side], side).toEqual({ status: 503, text: 'hello /wb-a?st=503', peer: other[side].peer });
      expect(pair.asked.get(`/${side}/wb-a`), side).toBe(2);
    }
    for (const [port, peerOf] of [
      [25672, (side: Side) => [first[side].peer]],
      [25673, () => []],
    ] as const) {
      const list = await bans(port);
      for (const side of SIDES)
        expect(
          ((list[side].body as { ips: Ban[] }).ips ?? []).map((b) => b.ip),
          `${side} ${port}`,
        ).toEqual(peerOf(side));
    }
    const logged = await entriesOf('/wb-a', [25672, 25673]);
    expect(logged.real).toMatchObject([
      {
        port: 25673,
        rules: [
          { ...banRule, type: 'after_hdr' },
          { ...onTo(25673), type: 'after_hdr' },
        ],
      },
    ]);
    expect(logged.sandbox).toEqual(logged.real);
  });

  it('retry_port to its own port: a new session; a loop of two ports ends when each rule ran once; with retry, 20 retries', async () => {
    await createWith(25662, (at) => ({ rules: [onTo(at(25662))] }));
    await createWith(25663, (at) => ({ rules: [onTo(at(25664))] }));
    await createWith(25664, (at) => ({ rules: [onTo(String(at(25663)))] }));
    await createWith(25665, (at) => ({ rules: [onTo(at(25665), { retry: true })] }));
    const answers = [await routed(25662, '/self-a?st=503'), await routed(25663, '/loop-a?st=503'), await routed(25665, '/many-a?st=503')];
    for (const a of answers) {
      expect(a.real.status).toBe(503);
      expect({ ...a.sandbox, peer: undefined }).toEqual({ ...a.real, peer: undefined });
    }
    for (const [path, times] of [
      ['self-a', 2],
      ['loop-a', 3],
      ['many-a', 21],
    ] as const) {
      expect(pair.asked.get(`/real/${path}`), path).toBe(times);
      expect(pair.asked.get(`/sandbox/${path}`), path).toBe(times);
    }
    const self = await entriesOf('/self-a', [25662]);
    expect(self.real).toMatchObject([
      {
        port: 25662,
        timeline: [
          [25662, '25662_0'],
          [25662, '25662_1'],
        ],
      },
    ]);
    expect(self.sandbox).toEqual(self.real);
    const loop = await entriesOf('/loop-a', [25663, 25664]);
    expect(loop.real).toMatchObject([
      {
        port: 25663,
        rules: [
          { ...onTo(25664), type: 'after_hdr' },
          { ...onTo('25663'), type: 'after_hdr' },
        ],
        timeline: [
          [25663, '25663_0'],
          [25664, '25664_0'],
          [25663, '25663_0'],
        ],
      },
    ]);
    expect(loop.sandbox).toEqual(loop.real);
    const many = await entriesOf('/many-a', [25665]);
    expect((many.real[0] as { timeline: unknown[] }).timeline).toHaveLength(21);
    expect(many.sandbox).toEqual(many.real);
  });

  it('retry_port before the request is sent (a URL rule), and to a port that does not exist: no answer, nothing logged', async () => {
    await createWith(25666, () => ({}));
    await createWith(25667, (at) => ({
      rules: [{ action: { retry_port: at(25666) }, action_type: 'retry_port', trigger_type: 'url', url: 'pre' }, onTo(at(25699))],
    }));
    const pre = await routed(25667, '/pre-a');
    expect(pre.real.status).toBe(200);
    expect({ ...pre.sandbox, peer: undefined }).toEqual({ ...pre.real, peer: undefined });
    const prelog = await entriesOf('/pre-a', [25666, 25667]);
    expect(prelog.real).toMatchObject([{ port: 25666, rules: [{ url: 'pre', type: 'before_send' }] }]);
    expect(prelog.sandbox).toEqual(prelog.real);
    const from = drops(25699);
    const gone = await unanswered(25667, '/gone-a?st=503');
    await dropped(25699, from);
    for (const side of SIDES) {
      expect(gone[side], side).toEqual({ status: 0, text: `no answer in ${NO_ANSWER_MS} ms`, peer: undefined });
      expect(pair.asked.get(`/${side}/gone-a`), side).toBe(1);
    }
    // A request through the same port after it, logged: by then an entry of the one unanswered would be there.
    const later = await routed(25667, '/gone-b');
    expect(later.sandbox.status).toBe(later.real.status);
    await entriesOf('/gone-b', [25666, 25667]);
    const gonelog = await entriesOf('/gone-a', [25666, 25667], 0);
    expect(gonelog.real).toEqual([]);
    expect(gonelog.sandbox).toEqual([]);
  });

  it('x-lpm-route: the request goes through the port it names before any rule, the header not passed on; its own port refreshes the session; an unknown one gets no answer', async () => {
    await createWith(25668, (at) => ({ rules: [onTo(at(25669))] }));
    await createWith(25669, () => ({}));
    const to = (port: number | string) => (at: At) => ({ 'x-lpm-route': typeof port === 'number' ? String(at(port)) : port });
    const other = await through(25669, '/rt-0');
    const a = await routed(25668, '/rt-a?hdr=x-lpm-route', to(25669));
    const b = await routed(25668, '/rt-b?st=503', to(25669));
    const c = await routed(25669, '/rt-c', to(25669));
    const from = drops('nowhere');
    const d = await unanswered(25669, '/rt-d', to('nowhere'));
    await dropped('nowhere', from);
    expect(a.real).toEqual({ status: 200, text: 'hello /rt-a?hdr=x-lpm-route x-lpm-route=', peer: other.real.peer });
    expect(b.real).toMatchObject({ status: 503, peer: other.real.peer });
    expect(c.real.peer).not.toBe(other.real.peer);
    for (const side of SIDES) {
      expect(a[side], side).toEqual({ ...a.real, peer: other[side].peer });
      expect(b[side], side).toEqual({ ...b.real, peer: other[side].peer });
      expect(c[side].peer, side).not.toBe(other[side].peer);
      expect(d[side], side).toEqual({ status: 0, text: `no answer in ${NO_ANSWER_MS} ms`, peer: undefined });
      expect(pair.asked.get(`/${side}/rt-b`), side).toBe(1);
      expect(pair.asked.get(`/${side}/rt-d`), side).toBeUndefined();
    }
    for (const [path, expected] of [
      [
        '/rt-a',
        {
          port: 25669,
          rules: [],
          timeline: [
            [25668, '25668_0'],
            [25669, '25669_0'],
          ],
          headers: [],
        },
      ],
      [
        '/rt-b',
        {
          port: 25669,
          rules: [],
          timeline: [
            [25668, '25668_0'],
            [25669, '25669_0'],
          ],
        },
      ],
      [
        '/rt-c',
        {
          port: 25669,
          timeline: [
            [25669, '25669_0'],
            [25669, '25669_1'],
          ],
        },
      ],
    ] as const) {
      const logged = await entriesOf(path, [25668, 25669]);
      expect(logged.real, path).toMatchObject([expected]);
      expect(logged.sandbox, path).toEqual(logged.real);
    }
    await pair.sandbox.settled();
    expect(await readEntries('sandbox', '/rt-d', [25668, 25669])).toEqual([]);
  });

  it('x-lpm-route on a CONNECT: the tunnel goes through the port it names and is logged there; an unknown one gets no answer', async () => {
    await createWith(25670, () => ({}));
    await createWith(25671, () => ({}));
    const authority = new URL(pair.targetUrl).host;
    const line = (side: Side, path: string) => `GET /${side}/${path} HTTP/1.1\r\nhost: ${authority}\r\nconnection: close\r\n\r\n`;
    for (const side of SIDES) {
      const at = (p: number) => portOf(side, p);
      const opened = await tunnelThrough(`http://127.0.0.1:${at(25670)}`, authority, {
        line: line(side, 'tun-a'),
        headers: { 'x-lpm-route': String(at(25671)) },
      });
      expect(opened.status, side).toBe(200);
      expect(opened.echoed, side).toContain(`hello /${side}/tun-a`);
    }
    // Routed nowhere, both sides at the same time: the real manager's worker drops it (NO_ANSWER_MS).
    const from = drops('nowhere');
    await Promise.all(
      SIDES.map((side) =>
        expect(
          tunnelThrough(`http://127.0.0.1:${portOf(side, 25670)}`, authority, {
            line: line(side, 'tun-b'),
            timeoutMs: NO_ANSWER_MS,
            headers: { 'x-lpm-route': 'nowhere' },
          }),
          side,
        ).rejects.toThrow(`no answer to the CONNECT to ${authority}`),
      ),
    );
    await dropped('nowhere', from);
    // Then a tunnel through the port it was to go to, logged there: by then an entry of the dropped one would be there.
    for (const side of SIDES) {
      const later = await tunnelThrough(`http://127.0.0.1:${portOf(side, 25671)}`, authority, { line: line(side, 'tun-c') });
      expect(later.status, side).toBe(200);
    }
    await pair.sandbox.settled();
    const logged = {} as Record<Side, unknown[]>;
    const read = async (side: Side) => {
      const out: unknown[] = [];
      for (const port of [25670, 25671]) {
        const p = portOf(side, port);
        const r = await fetch(`${managerOf(side)}/api/logs?port_from=${p}&port_to=${p}&limit=50`);
        const logs = (await r.json()) as { log: { entries: Array<{ request: { url: string }; details: Record<string, unknown> }> } };
        for (const e of logs.log.entries)
          out.push({
            url: e.request.url,
            port: e.details.port,
            timeline: (e.details.timeline as Array<{ port: number; session: string }>).map((t) => [t.port, t.session]),
          });
      }
      return out;
    };
    // The real manager writes a tunnel's entry a moment after it closed.
    await expect.poll(async () => (await read('real')).length, { message: 'the real manager logs the two tunnels' }).toBe(2);
    // Sorted: a tunnel's entry is written when it closes, and which of the two is first varies.
    for (const side of SIDES) logged[side] = (await read(side)).sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
    // The routed tunnel logged on the port it was routed to, the later one on its own; the one routed nowhere is not.
    expect(logged.real).toContainEqual({ url: authority, port: 25671, timeline: [[25671, '25671_0']] });
    expect(logged.real).toContainEqual({
      url: authority,
      port: 25671,
      timeline: [
        [25670, '25670_0'],
        [25671, '25671_0'],
      ],
    });
    expect((asReal(logged.sandbox) as unknown[]).sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)))).toEqual(logged.real);
  });
});
