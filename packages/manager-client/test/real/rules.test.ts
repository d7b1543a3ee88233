import { request as httpRequest } from 'node:http';
import { type AddressInfo, createServer as createNetServer } from 'node:net';
import { viaProxy } from '@zone-api/testkit';
import { describe, expect, it } from 'vitest';
import { type Reply, SHIFT, usePair } from './pair.js';

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

/** Each side's log entries of a port (its status and the rules listed), after the sandbox settled and the real one had a second. */
async function portLog(port: number): Promise<Record<Side, unknown[]>> {
  await pair.sandbox.settled();
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const out = {} as Record<Side, unknown[]>;
  for (const side of SIDES) {
    const p = portOf(side, port);
    const r = await fetch(`${managerOf(side)}/api/logs?port_from=${p}&port_to=${p}&limit=50`);
    const logs = (await r.json()) as { log: { entries: Array<{ response: { status: number }; details: { rules?: unknown } }> } };
    out[side] = logs.log.entries.map((e) => ({ status: e.response.status, rules: e.details.rules }));
  }
  return out;
}

const bans = async (port: number): Promise<Record<Side, Reply>> => {
  const [real, sandbox] = await pair.both((at) => ['GET', `/api/banlist/${at(port)}?full=1`]);
  return { real, sandbox };
};
type Ban = { ip: string; domain: string; to?: number };

const banRule = { action: { ban_ip: 60_000 }, action_type: 'ban_ip', trigger_type: 'status', status: '5..' };

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
    const cases: Array<[number, Record<string, unknown>, Record<string, unknown>, number, unknown[], boolean?]> = [
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
      for (const [port, rule, answer, times, logged, second] of cases) {
        answerSecond = second === true;
        await pair.createBoth(port, { ext_proxies, rules: [rule] });
        const seen = {} as Record<Side, Record<string, unknown>>;
        for (const side of SIDES) {
          sent = 0;
          seen[side] = { ...(await rawThrough(portOf(side, port), `${pair.targetUrl}/${side}/own-${port}`)), sent };
        }
        expect(seen.real, String(port)).toMatchObject({ ...answer, sent: times });
        expect(seen.sandbox, String(port)).toEqual(seen.real);
        const log = await portLog(port);
        expect(log.real, String(port)).toEqual(logged);
        expect(log.sandbox, String(port)).toEqual(log.real);
      }
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
});
