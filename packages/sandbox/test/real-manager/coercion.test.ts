import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { createServer as createNetServer, connect as netConnect } from 'node:net';
import { join } from 'node:path';
import { loadBundle, schemaValidator, viaProxy } from '@zone-api/testkit';
import { realManagerPackageDir } from '@zone-api/testkit/real-manager';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { whitelistEntryAsStored } from '../../src/manager/netmask.js';
import { type At, call, fieldsOf, type Reply, SHIFT, usePair, withoutAddresses, workerCaughtUp } from './pair.js';

// How the real local proxy manager 1.570.247 reads request bodies and keeps port configurations, and the
// sandbox (default, not strict) the same: each case plays the same calls against both and compares the
// answers and the stored configurations value by value, and asserts the real answer too, so that a case
// cannot pass by both being wrong alike. Each case uses ports of its own (the sandbox's are + SHIFT).

const s = usePair();

type Config = Record<string, unknown>;
const FORM = 'application/x-www-form-urlencoded';

/** The stored configuration of a port (GET /api/proxies) on each side, the sandbox's port number taken back to the real one's. */
async function stored(port: number): Promise<[Config | undefined, Config | undefined]> {
  const [real, sbx] = await s.both(() => ['GET', '/api/proxies']);
  const find = (r: Reply, p: number) => (r.body as Config[]).find((c) => c.port === p);
  const back = (c: Config | undefined) => (c ? { ...c, port: (c.port as number) - SHIFT } : c);
  return [find(real, port), back(find(sbx, port + SHIFT))];
}

/** A port as GET /api/proxies_running lists it on each side, as `stored`. */
async function running(port: number): Promise<[Config | undefined, Config | undefined]> {
  const [real, sbx] = await s.both(() => ['GET', '/api/proxies_running']);
  const find = (r: Reply, p: number) => (r.body as Config[]).find((c) => c.port === p);
  const back = (c: Config | undefined) => (c ? { ...c, port: (c.port as number) - SHIFT } : c);
  return [find(real, port), back(find(sbx, port + SHIFT))];
}

const created = (r: Reply) => ({ status: r.status, media: r.media });

/** One request through a proxy port: its status, status text, headers and body. */
function through(
  port: number,
  url: string,
): Promise<{ status: number; statusMessage: string; headers: IncomingHttpHeaders; text: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path: url, headers: { host: new URL(url).host }, agent: false }, (res) => {
      let text = '';
      res.on('data', (c) => {
        text += c;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, statusMessage: res.statusMessage ?? '', headers: res.headers, text }));
    });
    req.setTimeout(10_000, () => req.destroy(new Error(`no answer through port ${port}`)));
    req.once('error', reject);
    req.end();
  });
}

/** A CONNECT to `authority` through a proxy port: what the port wrote until it closed the connection (at most 10 s). */
function rawConnect(port: number, authority: string): Promise<string> {
  return new Promise((resolve) => {
    const socket = netConnect(port, '127.0.0.1', () => socket.write(`CONNECT ${authority} HTTP/1.1\r\nhost: ${authority}\r\n\r\n`));
    let got = '';
    socket.on('data', (d: Buffer) => {
      got += d.toString();
    });
    socket.setTimeout(10_000, () => socket.destroy());
    socket.once('error', () => undefined);
    socket.once('close', () => resolve(got));
  });
}

interface LogEntry {
  details: { port: number; context: string; success: number; in_bw: number; out_bw: number; super_proxy: string };
  request: { method: string; url: string };
  response: {
    status: number;
    statusText: string;
    headers: { name: string; value: string }[];
    content: { size: number; text: string; mimeType: string };
  };
}

/** The log entries of these ports (the sandbox's numbers + `shift`) under a context. */
async function portEntries(base: string, shift: number, ports: number[], context = 'RESPONSE'): Promise<LogEntry[]> {
  const all = ((await call(base, 'GET', '/api/logs?limit=0')).body as { log: { entries: LogEntry[] } }).log.entries;
  return all.filter((e) => e.details.context === context && ports.includes(e.details.port - shift));
}

/** What is compared of a logged 502 the port answered itself: all but times and ids, the machine's addresses normalised. */
const failedEntry = (shift: number) => (e: LogEntry) =>
  JSON.stringify({
    method: e.request.method,
    port: e.details.port - shift,
    url: withoutAddresses(e.request.url),
    status: e.response.status,
    statusText: e.response.statusText,
    headers: Object.fromEntries(e.response.headers.map((h) => [h.name, withoutAddresses(h.value)])),
    size: e.response.content.size,
    text: e.response.content.text,
    mime: e.response.content.mimeType,
    success: e.details.success,
    bw: [e.details.in_bw, e.details.out_bw],
    context: e.details.context,
    super_proxy: withoutAddresses(e.details.super_proxy),
  });

describe('createProxy stores what it is given', () => {
  it('wrong types, strings for booleans and numbers, values outside the lists, below the minimum, a scalar for a list: stored as given', async () => {
    const port = 25300;
    const proxy = {
      ssl: 'false',
      proxy_retry: '3',
      dns: true,
      multiply_ips: 'x',
      debug: 'not-in-enum',
      max_ban_retries: -1,
      country: ['us'],
      whitelist_ips: '10.1.1.1',
      unknown_field: 'kept?',
    };
    await s.same((at) => ['POST', '/api/proxies', { proxy: { port: at(port), ...proxy } }], { status: 200 }, created);
    const [real, sbx] = await stored(port);
    // A single value for the whitelist joins the default whitelist (empty here) as one entry.
    expect(real).toEqual({ ...proxy, whitelist_ips: ['10.1.1.1'], port, proxy_type: 'persist', password: 'z8x7c6v5b4n3', gb_cost: 0.6 });
    expect(sbx).toEqual(real);
  });

  it('empty strings are left out, proxy_type "" runs as persist, a port given as a string is stored as its number', async () => {
    const port = 25310;
    await s.same(
      (at) => ['POST', '/api/proxies', { proxy: { port: String(at(port)), asn: '', proxy_type: '', country: null, zone: 'res_zone' } }],
      { status: 200 },
      created,
    );
    const [real, sbx] = await stored(port);
    expect(real).toEqual({ port, zone: 'res_zone', proxy_type: 'persist', password: 'r3s1d3nt9x7w', gb_cost: 8.4, whitelist_ips: [] });
    expect(sbx).toEqual(real);
    const [realRun, sbxRun] = await running(port);
    expect(realRun).toEqual({
      ...real,
      dns: 'local',
      tls_lib: 'open_ssl',
      route_err: 'pass_dyn',
      proxy_connection_type: 'http',
    });
    expect(sbxRun).toEqual(realRun);
  });

  it('a proxy_type other than persist: the port runs without being stored, cannot be updated, is deleted', async () => {
    const port = 25315;
    await s.same(
      (at) => ['POST', '/api/proxies', { proxy: { port: at(port), proxy_type: 'x1', country: 'us' } }],
      { status: 200 },
      created,
    );
    const [real, sbx] = await stored(port);
    expect(real).toBeUndefined();
    expect(sbx).toBeUndefined();
    const [realRun, sbxRun] = await running(port);
    // Only what the running port says of itself (web_api.js 866-895): no stored configuration to show.
    expect(realRun).toMatchObject({ proxy_type: 'x1', port, dns: 'local' });
    expect(realRun).not.toHaveProperty('country');
    expect(sbxRun).toEqual(realRun);
    await s.same(
      (at) => ['PUT', `/api/proxies/${at(port)}`, { proxy: { country: 'de' } }],
      { status: 400 },
      (r) => JSON.stringify(r.body).replace(/\d{5}/g, 'N'),
    );
    await s.same((at) => ['DELETE', `/api/proxies/${at(port)}`], { status: 204 });
    await s.same((at) => ['POST', '/api/proxies', { proxy: { port: at(port + 1), proxy_type: 'duplicate' } }], { status: 200 }, created);
    await s.same((at) => ['DELETE', `/api/proxies/${at(port + 1)}`], { status: 500, body: 'Server error: cannot delete this port' });
  });

  it('a form body is read as its JSON; port 0 takes the next free port', async () => {
    const port = 25320;
    await s.same(
      (at) => ['POST', '/api/proxies', `proxy[port]=${at(port)}&proxy[ssl]=true&proxy[zone]=res_zone`, FORM],
      { status: 200 },
      created,
    );
    const [real, sbx] = await stored(port);
    expect(real).toMatchObject({ port, ssl: 'true', zone: 'res_zone' });
    expect(sbx).toEqual(real);
    const [zeroReal, zeroSbx] = await s.both(() => ['POST', '/api/proxies', { proxy: { port: 0, zone: 'res_zone' } }]);
    expect([zeroReal.status, zeroSbx.status]).toEqual([200, 200]);
    for (const r of [zeroReal, zeroSbx]) expect((r.body as { data: { port: number } }).data.port).toBeGreaterThanOrEqual(24000);
  });

  it('multiply as text reaches past the manager API port by its digits: "Proxy port conflict UI port" (mgr_proxy.js 151-160)', async () => {
    // port+(multiply||1)-1 in JavaScript: 24000+"0"-1 is 239999, past either side's API port (a free
    // port above the proxy ports), so the create is refused before any port opens.
    for (const url of [s.manager.url, s.sandbox.managerUrl]) expect(Number(new URL(url).port)).toBeGreaterThan(25330 + SHIFT);
    const refused = { status: 400, body: { errors: [{ msg: 'Proxy port conflict UI port' }] } };
    await s.same(() => ['POST', '/api/proxies', 'proxy[multiply]=0&proxy[zone]=res_zone', FORM], refused);
    await s.same((at) => ['POST', '/api/proxies', `proxy[port]=${at(25330)}&proxy[multiply]=1`, FORM], refused);
    await s.same((at) => ['POST', '/api/proxies', { proxy: { port: at(25330), multiply: '2' } }], refused);
  });

  it("a port on the manager API's own port: 'port N in use by the UI/API and UI/WebSocket' (mgr_proxy.js 611-612)", async () => {
    // Each side its own API port: `at` gives the real side its number unchanged.
    const www = (at: (p: number) => number) => Number(new URL(at(0) === 0 ? s.manager.url : s.sandbox.managerUrl).port);
    const [real, sbx] = await s.both((at) => ['POST', '/api/proxies', { proxy: { port: www(at), zone: 'res_zone' } }]);
    const msg = (r: Reply, at: number) => JSON.stringify(r.body).replace(String(at), 'WWW');
    expect(real).toMatchObject({
      status: 400,
      body: { errors: [{ msg: `port ${www((p) => p)} in use by the UI/API and UI/WebSocket`, field: 'port' }] },
    });
    expect(sbx.status).toBe(real.status);
    expect(
      msg(
        sbx,
        www((p) => p + SHIFT),
      ),
    ).toBe(
      msg(
        real,
        www((p) => p),
      ),
    );
  });

  it('no body, no proxy, a text body, bad JSON, users that is no list: the real crashes, 500 text', async () => {
    const crash = { status: 500, media: 'text/html', body: "Server error: Cannot read properties of undefined (reading 'port')" };
    await s.same(() => ['POST', '/api/proxies'], crash);
    await s.same(() => ['POST', '/api/proxies', {}], crash);
    await s.same(() => ['POST', '/api/proxies', { unknown_field: 1 }], crash);
    await s.same(() => ['POST', '/api/proxies', '{"proxy":{}}', 'text/plain'], crash);
    await s.same(() => ['POST', '/api/proxies', '{"proxy": {', 'application/json'], {
      status: 500,
      media: 'text/html',
      body: 'Server Error',
    });
    await s.same(() => ['POST', '/api/proxies', { proxy: { users: 'x' } }], {
      status: 500,
      body: 'Server error: req.body.proxy.users.map is not a function',
    });
    await s.same(() => ['POST', '/api/proxies', { proxy: { port: 'abc' } }], {
      status: 400,
      body: { errors: [{ msg: 'Invalid port. It must be a number >= 1000', field: 'port' }] },
    });
  });
});

describe('updateProxy converts the fields to their types', () => {
  it('strings for booleans and numbers become them, other values stay; a body without proxy is the observed 400', async () => {
    const port = 25330;
    await s.same((at) => ['POST', '/api/proxies', { proxy: { port: at(port), zone: 'res_zone' } }], { status: 200 }, created);
    const update = { ssl: 'true', proxy_retry: '5', dns: 'not-in-enum', sticky_ip: '0', country: 'de' };
    await s.same((at) => ['PUT', `/api/proxies/${at(port)}`, { proxy: update }], { status: 200 }, created);
    const [real, sbx] = await stored(port);
    const sent = (c: Config | undefined) => Object.fromEntries(Object.keys(update).map((k) => [k, c?.[k]]));
    expect(sent(real)).toEqual({ ssl: true, proxy_retry: 5, dns: 'not-in-enum', sticky_ip: false, country: 'de' });
    expect(sent(sbx)).toEqual(sent(real));
    // What an update in place adds: the plan's kind, the cloud's super proxy ports and antivirus server.
    expect(real).toMatchObject({ static: false, mobile: false, unblock: false, super_proxy_ports: [], av_server_url: '127.0.0.1:1343' });
    expect(sbx).toEqual(real);
    await s.same((at) => ['PUT', `/api/proxies/${at(port)}`, 'proxy[rotate_session]=true', FORM], { status: 200 }, created);
    expect((await stored(port)).map((c) => c?.rotate_session)).toEqual([true, true]);
    await s.same((at) => ['PUT', `/api/proxies/${at(port)}`, {}], {
      status: 400,
      body: { errors: [{ msg: "Request body should contain 'proxy' field", body: '{}' }] },
    });
  });

  it('an update in place to another proxy_type: the port stays stored with it; it is then read-only', async () => {
    // proxy_update_in_place (mgr_proxy.js 402-423) assigns the update to the stored entry: whatever
    // proxy_type it now has, the port stays in GET /api/proxies; the next update finds it, and refuses a
    // proxy_type other than persist (web_api.js 398-399). Found by random seed 1136855369.
    const port = 25332;
    await s.same((at) => ['POST', '/api/proxies', { proxy: { port: at(port), zone: 'res_zone' } }], { status: 200 }, created);
    const update = { proxy: { proxy_type: '', zone: 'static_zone' } };
    // The answer's fields of the update itself (the real one answers the port's whole running options).
    const answer = (r: Reply) => {
      const data = (r.body as { data: Config }).data;
      return { status: r.status, proxy_type: data.proxy_type, zone: data.zone, password: data.password };
    };
    const [realPut, sbxPut] = await s.both((at) => ['PUT', `/api/proxies/${at(port)}`, update]);
    expect(answer(realPut)).toEqual({ status: 200, proxy_type: '', zone: 'static_zone', password: 'z8x7c6v5b4n3' });
    expect(answer(sbxPut)).toEqual(answer(realPut));
    const [real, sbx] = await stored(port);
    expect(real).toMatchObject({ port, proxy_type: '', zone: 'static_zone' });
    expect(sbx).toEqual(real);
    const [realRun, sbxRun] = await running(port);
    expect(realRun).toMatchObject({ port, proxy_type: '', zone: 'static_zone' });
    expect(sbxRun).toEqual(realRun);
    await s.same((at) => ['PUT', `/api/proxies/${at(port)}`, { proxy: { country: 'de' } }], {
      status: 400,
      body: { errors: [{ msg: 'Proxy is read-only' }] },
    });
  });

  it('enable_ssl updates in place each port without SSL analyzing; a port without a Zone then runs without one', async () => {
    const port = 25335;
    await s.same((at) => ['POST', '/api/proxies', { proxy: { port: at(port) } }], { status: 200 }, created);
    await s.same(() => ['POST', '/api/enable_ssl'], { status: 200, body: 'ok' });
    const [real, sbx] = await stored(port);
    expect(real).toMatchObject({ ssl: true, static: true });
    expect(sbx).toEqual(real);
    const [realRun, sbxRun] = await running(port);
    expect(realRun).not.toHaveProperty('zone');
    expect(sbxRun).toEqual(realRun);
  });

  it('enable_ssl with a port in any body turns on that port alone, its number compared loosely (web_api.js 257-273)', async () => {
    const [one, other] = [25390, 25392];
    for (const port of [one, other]) {
      await s.same((at) => ['POST', '/api/proxies', { proxy: { port: at(port), zone: 'res_zone' } }], { status: 200 }, created);
    }
    await s.same((at) => ['POST', '/api/enable_ssl', { port: String(at(one)) }], { status: 200, body: 'ok' });
    const [realOne, sbxOne] = await stored(one);
    const [realOther, sbxOther] = await stored(other);
    expect(realOne).toMatchObject({ ssl: true });
    expect(realOther).not.toHaveProperty('ssl');
    expect(sbxOne).toEqual(realOne);
    expect(sbxOther).toEqual(realOther);
    // As a form body too.
    await s.same((at) => ['POST', '/api/enable_ssl', `port=${at(other)}`, FORM], { status: 200, body: 'ok' });
    const [realAfter, sbxAfter] = await stored(other);
    expect(realAfter).toMatchObject({ ssl: true });
    expect(sbxAfter).toEqual(realAfter);
  });

  it("enable_ssl on a multiplied port: a duplicate runs with its master's configuration, without its whitelist; a duplicate named is no stored port", async () => {
    const port = 25337;
    await s.same((at) => ['POST', '/api/proxies', { proxy: { port: at(port), zone: 'res_zone', multiply: 2 } }], { status: 200 }, created);
    // The ports turned on are looked up among the stored configurations (web_api.js 257-273): a duplicate is none of them.
    await s.same((at) => ['POST', '/api/enable_ssl', { port: at(port + 1) }], { status: 200, body: 'ok' });
    const [realDup, sbxDup] = await running(port + 1);
    expect(realDup).toMatchObject({ master_port: port });
    expect(realDup).not.toHaveProperty('ssl');
    expect({ ...sbxDup, master_port: (sbxDup?.master_port as number) - SHIFT }).toEqual(realDup);
    const [realMaster, sbxMaster] = await stored(port);
    expect(realMaster).not.toHaveProperty('ssl');
    expect(sbxMaster).toEqual(realMaster);
    await s.same(() => ['POST', '/api/enable_ssl'], { status: 200, body: 'ok' });
    const [realRun, sbxRun] = await running(port + 1);
    expect(realRun).toMatchObject({ master_port: port, ssl: true });
    expect(realRun).not.toHaveProperty('whitelist_ips');
    expect({ ...sbxRun, master_port: (sbxRun?.master_port as number) - SHIFT }).toEqual(realRun);
    // The master, stored and running, with it (mgr_proxy.js 402-425).
    const [realStored, sbxStored] = await stored(port);
    expect(realStored).toMatchObject({ ssl: true, multiply: 2 });
    expect(sbxStored).toEqual(realStored);
    const [realMasterRun, sbxMasterRun] = await running(port);
    expect(realMasterRun).toMatchObject({ ssl: true });
    expect(sbxMasterRun).toEqual(realMasterRun);
  });
});

describe('deleting and banning read the port first and the body as the real manager does', () => {
  it('deleteProxies without ports deletes nothing; with a form body it deletes the ports named', async () => {
    const port = 25340;
    await s.same(() => ['POST', '/api/proxies/delete', {}], { status: 204 });
    await s.same((at) => ['POST', '/api/proxies', { proxy: { port: at(port), zone: 'res_zone' } }], { status: 200 }, created);
    await s.same((at) => ['POST', '/api/proxies/delete', `ports[0]=${at(port)}`, FORM], { status: 204 });
    expect(await stored(port)).toEqual([undefined, undefined]);
    await s.same(() => ['POST', '/api/proxies/delete', { ports: [25998] }], {
      status: 500,
      body: 'Server error: this proxy does not exist',
    });
  });

  it('a port that does not exist is answered before the body is read', async () => {
    const gone = (at: At) => at(25999);
    await s.same(
      (at) => ['POST', `/api/proxies/${gone(at)}/unbanips`, {}],
      { status: 500, body: 'Server error: No proxy at port 25999' },
      portless,
    );
    await s.same(
      (at) => ['POST', `/api/proxies/${gone(at)}/unbanip`],
      { status: 500, body: 'Server error: No proxy at port 25999' },
      portless,
    );
    await s.same(
      (at) => ['POST', `/api/proxies/${gone(at)}/banip`, { ips: 'x' }],
      { status: 400, body: 'No proxy at port 25999' },
      portless,
    );
    await s.same(() => ['POST', '/api/proxies/abc/banips', {}], { status: 400, body: 'No proxy at port abc' });
    await s.same(() => ['POST', '/api/proxies/0/banip', 'ip=10.1.1.1', FORM], { status: 400, body: 'No proxy at port 0' });
    // A port that is no number: deleteProxy reads it as NaN, getSessions looks it up as given (web_api.js 508-525).
    await s.same(() => ['DELETE', '/api/proxies/abc'], { status: 500, body: 'Server error: this proxy does not exist' });
    await s.same(() => ['GET', '/api/sessions/abc'], { status: 400, media: 'text/html', body: 'server does not exist' });
    // deleteProxy reads the port as a number (`+port`: hexadecimal names it too).
    await s.same((at) => ['POST', '/api/proxies', { proxy: { port: at(25396) } }], { status: 200 }, created);
    await s.same((at) => ['DELETE', `/api/proxies/0x${at(25396).toString(16)}`], { status: 204 });
    const [real, sbx] = await stored(25396);
    expect(real).toBeUndefined();
    expect(sbx).toBeUndefined();
  });

  it('a port named with a leading zero: a key most handlers look up as given, updateProxy by ==, deleteProxy by +port', async () => {
    const port = 25397;
    await s.same((at) => ['POST', '/api/proxies', { proxy: { port: at(port), zone: 'res_zone' } }], { status: 200 }, created);
    const zero = (at: At) => `0${at(port)}`;
    // `this.proxy_ports[port]` (web_api.js 437-514, 553-556): `025397` is no key of the running ports.
    await s.same((at) => ['GET', `/api/sessions/${zero(at)}`], { status: 400, media: 'text/html', body: 'server does not exist' });
    await s.same((at) => ['GET', `/api/proxy_status/${zero(at)}`], { status: 200, body: { status: 'Unknown proxy' } });
    await s.same(() => ['GET', '/api/proxy_status/abc'], { status: 200, body: { status: 'Unknown proxy' } });
    await s.same((at) => ['GET', `/api/banlist/${zero(at)}`], { status: 400, media: 'text/html', body: 'server does not exist' });
    await s.same((at) => ['POST', `/api/refresh_sessions/${zero(at)}`], { status: 400, media: null, body: '' });
    await s.same((at) => ['GET', `/api/refresh_sessions/${zero(at)}`], { status: 400, media: null, body: '' });
    const zeroless = (r: Reply) => (typeof r.body === 'string' ? { ...r, body: r.body.replace(String(port + SHIFT), String(port)) } : r);
    await s.same(
      (at) => ['POST', `/api/proxies/${zero(at)}/banip`, { ip: '10.1.1.1' }],
      { status: 400, body: `No proxy at port 0${port}` },
      zeroless,
    );
    await s.same(
      (at) => ['POST', `/api/proxies/${zero(at)}/unbanips`],
      { status: 500, body: `Server error: No proxy at port 0${port}` },
      zeroless,
    );
    // `p.port==old_port` (web_api.js 391-392): the update finds the port.
    await s.same((at) => ['PUT', `/api/proxies/${zero(at)}`, { proxy: { country: 'us' } }], { status: 200 }, created);
    const [real, sbx] = await stored(port);
    expect(real?.country).toBe('us');
    expect(sbx).toEqual(real);
  });

  it('on a port that exists: a subnet is no IP, unbanips ignores its body, a ban on all ports needs an ip, form bodies are read', async () => {
    const port = 25350;
    await s.same((at) => ['POST', '/api/proxies', { proxy: { port: at(port), zone: 'res_zone' } }], { status: 200 }, created);
    await s.same((at) => ['POST', `/api/proxies/${at(port)}/banip`, 'ip=10.1.1.1', FORM], { status: 204 });
    await s.same((at) => ['GET', `/api/banlist/${at(port)}`], { status: 200, body: { ips: ['10.1.1.1'] } });
    await s.same((at) => ['POST', `/api/proxies/${at(port)}/unbanip`, { ip: '10.9.0.0/16' }], { status: 400, body: 'No IP provided' });
    await s.same(() => ['POST', '/api/banip', { domain: 'x1', ports: [] }], { status: 400, body: 'No IP provided' });
    await s.same(() => ['POST', '/api/banip', 'domain=x1', FORM], { status: 400, body: 'No IP provided' });
    // The real manager's worker echoes a ban back to it a moment later; an unban before the echo is undone by it.
    await workerCaughtUp(s.manager.url, s.targetUrl, port);
    await s.same((at) => ['POST', `/api/proxies/${at(port)}/unbanips`, { ip: 'not-an-ip' }], { status: 200, body: 'OK' });
    await s.same((at) => ['GET', `/api/banlist/${at(port)}`], { status: 200, body: { ips: [] } });
    await s.same((at) => ['POST', `/api/proxies/${at(port)}/banips`, '{bad', 'application/json'], { status: 500, body: 'Server Error' });
  });
});

describe('what a port runs and sends upstream', () => {
  it('a number field given as no number runs as NaN: proxies_running shows null where the stored config keeps the string', async () => {
    const port = 25360;
    await s.same((at) => ['POST', '/api/proxies', { proxy: { port: at(port), zone: 'res_zone', vip: 'abc' } }], { status: 200 }, created);
    const [real, sbx] = await stored(port);
    expect(real?.vip).toBe('abc');
    expect(sbx).toEqual(real);
    const [realRun, sbxRun] = await running(port);
    expect(realRun).toHaveProperty('vip', null);
    expect(sbxRun).toEqual(realRun);
  });

  it('headers that is text, no list: the real port fails before it has an answer to fill (server.js 816, 862-872): 502, empty body, not logged; a CONNECT alike', async () => {
    const port = 25363;
    await s.same((at) => ['POST', '/api/proxies', { proxy: { port: at(port), zone: 'res_zone', headers: 'x' } }], { status: 200 }, created);
    const [real, sbx] = [await through(port, `${s.targetUrl}/hdr-as-text`), await through(port + SHIFT, `${s.targetUrl}/hdr-as-text`)];
    const seen = (r: typeof real) => [r.status, r.statusMessage, r.text, r.headers['x-lpm-error'], r.headers.connection];
    const message = "Cannot set properties of undefined (setting 'status_code')";
    expect(seen(real)).toEqual([502, 'Proxy Manager - Bad Gateway', '', message, 'close']);
    expect(seen(sbx)).toEqual(seen(real));
    // A CONNECT without SSL analyzing runs the same handler (lib/server.js 813-818): the same answer, its head alone.
    const authority = new URL(s.targetUrl).host;
    const [realConnect, sbxConnect] = [await rawConnect(port, authority), await rawConnect(port + SHIFT, authority)];
    expect(realConnect).toBe(`HTTP/1.1 502 Proxy Manager - Bad Gateway\r\nConnection: close\r\nx-lpm-error: ${message}\r\n\r\n`);
    expect(sbxConnect).toBe(realConnect);
    // Neither is logged.
    await s.sandbox.settled();
    expect((await portEntries(s.manager.url, 0, [port])).length).toBe(0);
    expect((await portEntries(s.sandbox.managerUrl, SHIFT, [port])).length).toBe(0);
  });

  it("a port's own customer goes upstream in its username: a customer the network does not know is refused there (407)", async () => {
    const port = 25362;
    await s.same(
      (at) => ['POST', '/api/proxies', { proxy: { port: at(port), zone: 'res_zone', customer: 'Someone Else' } }],
      { status: 200 },
      created,
    );
    const real = await viaProxy(`http://127.0.0.1:${port}`, `${s.targetUrl}/t/1`);
    const sbx = await viaProxy(`http://127.0.0.1:${port + SHIFT}`, `${s.targetUrl}/t/1`);
    expect(real.status, real.text).toBe(407);
    expect(sbx.status, sbx.text).toBe(real.status);
  });

  it("ext_proxies: a text entry is an external proxy; the documented {proxy} form fails each request (502); one that refuses or hangs up: the port's own 502, logged, checked three times", async () => {
    // A stand-in external proxy on loopback: answers any request 200 `ext`; another hangs up on each.
    const ext = createNetServer((c) =>
      c.once('data', () => c.end('HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 3\r\nconnection: close\r\n\r\next')),
    );
    let hangups = 0;
    const hang = createNetServer((c) => {
      hangups++;
      c.once('data', () => c.destroy());
    });
    const at = async (server: typeof ext) => {
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      return `127.0.0.1:${(server.address() as AddressInfo).port}`;
    };
    const [extAt, hangAt] = [await at(ext), await at(hang)];
    const refused = 'connection refused (may have been caused due to firewall settings)';
    try {
      // port, ext_proxies, proxy_retry, status and x-lpm-error through the port, its status check
      const cases: Array<[number, unknown[], number | undefined, number, string | undefined, string]> = [
        [25364, [extAt], undefined, 200, undefined, 'ok'],
        [25365, [{ proxy: extAt }], undefined, 502, '_url.match is not a function', '_url.match is not a function'],
        [25366, [7], undefined, 502, '_url.match is not a function', '_url.match is not a function'],
        // The port's own 502: Node's message (lib/server.js 862-872), sent once whatever proxy_retry says.
        [25367, ['127.0.0.1:1'], undefined, 502, 'connect ECONNREFUSED <address>', refused],
        [25368, [hangAt], 3, 502, 'socket hang up', 'socket hang up'],
      ];
      for (const [port, ext_proxies, proxy_retry, status, error] of cases) {
        const label = JSON.stringify(ext_proxies);
        await s.same(
          (at) => ['POST', '/api/proxies', { proxy: { port: at(port), zone: 'res_zone', ext_proxies, proxy_retry } }],
          { status: 200 },
          created,
        );
        const seen = async (p: number) => {
          hangups = 0;
          const r = await through(p, `${s.targetUrl}/t/ext`);
          return { ...r, error: r.headers['x-lpm-error'] && withoutAddresses(String(r.headers['x-lpm-error'])), sent: hangups };
        };
        const [real, sbx] = [await seen(port), await seen(port + SHIFT)];
        expect([real.status, real.error], label).toEqual([status, error]);
        const answer = (r: typeof real) => [
          r.status,
          r.statusMessage,
          r.error,
          r.text,
          r.headers['transfer-encoding'],
          r.headers.connection,
        ];
        if (status === 502) {
          // No body, chunked; the status text is the real manager's own (lib/mixins/server_send.js 54-83).
          expect(answer(real), label).toEqual([502, 'Proxy Manager - Bad Gateway', error, '', 'chunked', 'close']);
          expect(answer(sbx), label).toEqual(answer(real));
        } else expect([sbx.status, sbx.text, sbx.error], label).toEqual([real.status, real.text, real.error]);
        if (ext_proxies[0] === hangAt) expect([real.sent, sbx.sent], 'sent once, not again').toEqual([1, 1]);
      }
      // A CONNECT through the port that cannot reach its upstream: the same 502, its head alone.
      const authority = new URL(s.targetUrl).host;
      const [realConnect, sbxConnect] = [await rawConnect(25367, authority), await rawConnect(25367 + SHIFT, authority)];
      expect(withoutAddresses(realConnect)).toBe(
        'HTTP/1.1 502 Proxy Manager - Bad Gateway\r\nConnection: close\r\nx-lpm-error: connect ECONNREFUSED <address>\r\n\r\n',
      );
      expect(withoutAddresses(sbxConnect)).toBe(withoutAddresses(realConnect));
      // Each is logged with the 502's own headers and no body, the CONNECT too (lib/server.js 862-872); an
      // entry that is no text fails before there is a response to log (as headers that are no list).
      const entries = async (base: string, shift: number) => {
        await s.sandbox.settled();
        return (await portEntries(base, shift, [25365, 25366, 25367, 25368])).map(failedEntry(shift)).sort();
      };
      const failed = (method: string, port: number, url: string, message: string) =>
        JSON.stringify({
          method,
          port,
          url,
          status: 502,
          statusText: '',
          headers: { Connection: 'close', 'x-lpm-error': message },
          size: 0,
          text: '',
          mime: 'unknown',
          success: 0,
          bw: [0, 0],
          context: 'RESPONSE',
          super_proxy: '<address>',
        });
      // The real manager writes each entry a moment after it answered: its log is read until it holds them.
      const realLog = [
        failed('CONNECT', 25367, '<address>', 'connect ECONNREFUSED <address>'),
        failed('GET', 25367, `${withoutAddresses(s.targetUrl)}/t/ext`, 'connect ECONNREFUSED <address>'),
        failed('GET', 25368, `${withoutAddresses(s.targetUrl)}/t/ext`, 'socket hang up'),
      ];
      await expect.poll(() => entries(s.manager.url, 0)).toEqual(realLog);
      expect(await entries(s.sandbox.managerUrl, SHIFT)).toEqual(realLog);
      // The status checks, both sides at once: a failed one is sent three times (got's retry, 1 s and 2 s
      // apart), each logged as a STATUS CHECK; the status is read from the last.
      await Promise.all(
        cases.map(async ([port, , , , , checked]) => {
          const [real, sbx] = await Promise.all([
            call(s.manager.url, 'GET', `/api/proxy_status/${port}`),
            call(s.sandbox.managerUrl, 'GET', `/api/proxy_status/${port + SHIFT}`),
          ]);
          expect(real, String(port)).toMatchObject({ status: 200, body: { status: checked, status_details: [] } });
          expect(sbx, String(port)).toEqual(real);
        }),
      );
      const checks = async (base: string, shift: number) =>
        (
          await portEntries(
            base,
            shift,
            cases.map(([port]) => port),
            'STATUS CHECK',
          )
        )
          .map((e) => `${e.details.port - shift} ${e.response.status}`)
          .sort();
      // Only the ports whose requests are logged: 25364's request succeeded, so its status is `ok` without a
      // check (lib/manager.js 322-326); 25365's and 25366's fail before anything is logged. The real manager
      // writes a check's entry a moment after it: read until it holds them.
      const realChecks = [25367, 25368].flatMap((port) => [`${port} 502`, `${port} 502`, `${port} 502`]);
      await expect.poll(() => checks(s.manager.url, 0)).toEqual(realChecks);
      await s.sandbox.settled();
      expect(await checks(s.sandbox.managerUrl, SHIFT)).toEqual(realChecks);
    } finally {
      ext.close();
      hang.close();
    }
  });
});

describe('a port with an smtp list relays each connection', () => {
  it('to a text entry (host[:port], 25 by default) through a tunnel of its own: what the client sent reaches it as sent; a CONNECT refused hangs up', async () => {
    const targetAt = new URL(s.targetUrl).host;
    const cases: Array<[number, unknown, number, string]> = [
      [25370, ['x1'], 0, 'socket hang up'],
      [25371, 'x', 0, 'socket hang up'],
      // The request line the client sent, absolute URL and all, reaches the target through the tunnel.
      [25372, [targetAt], 200, `hello ${s.targetUrl}/t/smtp`],
    ];
    for (const [port, smtp, status, text] of cases) {
      const label = JSON.stringify(smtp);
      await s.same((at) => ['POST', '/api/proxies', { proxy: { port: at(port), zone: 'res_zone', smtp } }], { status: 200 }, created);
      const real = await viaProxy(`http://127.0.0.1:${port}`, `${s.targetUrl}/t/smtp`);
      const sbx = await viaProxy(`http://127.0.0.1:${port + SHIFT}`, `${s.targetUrl}/t/smtp`);
      expect([real.status, real.text], label).toEqual([status, text]);
      expect([sbx.status, sbx.text], label).toEqual([real.status, real.text]);
    }
    // Each is logged as the CONNECT the port sent upstream: to x1:25, x:25 and the target.
    const connects = async (url: string, shift: number) => {
      const log = (await fetch(`${url}/api/logs?limit=50`).then((r) => r.json())) as {
        log: { entries: Array<{ request: { method: string; url: string }; response: { status: number }; details: { port: number } }> };
      };
      return log.log.entries
        .filter((e) => e.details.port - shift >= 25370 && e.details.port - shift <= 25372)
        .map((e) => `${e.details.port - shift} ${e.request.method} ${e.request.url} ${e.response.status}`)
        .sort();
    };
    // The real manager writes an entry after it answered (asynchronously): its log is read until it holds the three.
    const realLog = ['25370 CONNECT x1:25 403', '25371 CONNECT x:25 403', `25372 CONNECT ${targetAt} 200`];
    await expect.poll(() => connects(s.manager.url, 0)).toEqual(realLog);
    await expect.poll(() => connects(s.sandbox.managerUrl, SHIFT)).toEqual(realLog);
    // Its status check is not made: answered so, and not kept as the port's status (web_api.js 563-564).
    await s.same((at) => ['GET', `/api/proxy_status/${at(25370)}`], {
      status: 200,
      body: { status: 'ok', status_details: [{ msg: 'SMTP proxy' }] },
    });
    const [realRun, sbxRun] = await running(25370);
    expect(realRun).toMatchObject({ smtp: ['x1'] });
    expect(realRun).not.toHaveProperty('status');
    expect(sbxRun).toEqual(realRun);
  });
});

describe('the admin whitelist', () => {
  it('add_wip reads its body before its token: a body that is no JSON is a 500 first, any other without the token a 403', async () => {
    // The real manager's body parsers run before its API routes (web_server.js 166-176), the token check
    // in the route (web_api.js 1121-1126). Found by random seed 1270690568.
    await s.same(() => ['POST', '/api/add_wip', '{"ip": "10.', 'application/json'], {
      status: 500,
      media: 'text/html',
      body: 'Server Error',
    });
    await s.same(() => ['POST', '/api/add_wip', '10.1.1.1', 'text/plain'], { status: 403, body: 'Token required' });
    await s.same(() => ['POST', '/api/add_wip', { ip: '10.1.1.1' }], { status: 403, body: 'Token required' });
  });

  it('answers a missing or unreadable IP with its texts as sent, each ending in a line break (web_api.js 1060-1062, 1129-1134)', async () => {
    const need = 'You need to pass an IP to add\n';
    await s.same(() => ['POST', '/api/add_whitelist_ip', {}], { status: 400, media: 'text/html', body: need });
    await s.same(() => ['POST', '/api/add_whitelist_ip', { ip: 'nope' }], { status: 422, media: 'text/html', body: 'Wrong format\n' });
  });

  it('a subnet is stored as its network address', async () => {
    await s.same(() => ['POST', '/api/add_whitelist_ip', { ip: '10.9.1.5/16' }], { status: 200, body: 'OK' });
    const [real, sbx] = await s.both(() => ['GET', '/api/settings']);
    const www = (r: Reply) => (r.body as { www_whitelist_ips: string[] }).www_whitelist_ips;
    expect(www(real)).toEqual(['10.9.0.0']);
    expect(www(sbx)).toEqual(www(real));
  });

  it('a change of the default whitelist reaches the ports: stored and running', async () => {
    const port = 25380;
    await s.same((at) => ['POST', '/api/proxies', { proxy: { port: at(port), whitelist_ips: ['10.2.2.2'] } }], { status: 200 }, created);
    await s.same(() => ['POST', '/api/add_whitelist_ip', { ip: '192.0.2.7' }], { status: 200, body: 'OK' });
    const [real, sbx] = await stored(port);
    expect(real?.whitelist_ips).toContain('192.0.2.7');
    expect(sbx?.whitelist_ips).toEqual(real?.whitelist_ips);
    const [realRun, sbxRun] = await running(port);
    expect(realRun?.whitelist_ips).toEqual(real?.whitelist_ips);
    expect(sbxRun?.whitelist_ips).toEqual(realRun?.whitelist_ips);
  });
});

describe('settings', () => {
  const pick = fieldsOf('logs', 'har_limit', 'request_stats', 'whitelist_ips', 'www_whitelist_ips');
  it('strings for numbers and booleans converted, form and text bodies read, invalid whitelist entries dropped, the admin whitelist as given', async () => {
    await s.same(
      () => ['PUT', '/api/settings', { request_stats: 'false', logs: '5', har_limit: '100', unknown_field: 1 }],
      { status: 200 },
      pick,
    );
    await s.same(() => ['PUT', '/api/settings', 'har_limit=200&logs=3&request_stats=true', FORM], { status: 200 }, pick);
    await s.same(() => ['PUT', '/api/settings', { logs: true }], { status: 200 }, pick);
    await s.same(() => ['PUT', '/api/settings', 'hello', 'text/plain'], { status: 200 }, pick);
    const real = await s.same(
      () => ['PUT', '/api/settings', { whitelist_ips: ['300.1.1.1', '10.1.1.1', '127.0.0.1', '10.9.1.5/16'] }],
      { status: 200 },
      pick,
    );
    expect(pick(real).whitelist_ips).toEqual(['10.1.1.1', '10.9.0.0/16']);
    await s.same(() => ['PUT', '/api/settings', { www_whitelist_ips: ['not-an-ip'] }], { status: 200 }, pick);
    await s.same(
      () => ['PUT', '/api/settings', { www_whitelist_ips: [], whitelist_ips: [], logs: 1000, har_limit: 1024 }],
      { status: 200 },
      pick,
    );
  });

  it('a text where a whitelist is expected: spread into its characters, each read as an address by netmask 2.0.1 (seed 1814808411)', async () => {
    // The divergence random seed 1814808411 found: the sandbox dropped `1` and `0`, which the real one keeps.
    const real = await s.same(
      () => ['PUT', '/api/settings', { www_whitelist_ips: ['10.1.1.1'], whitelist_ips: '10.1.1.1' }],
      { status: 200 },
      pick,
    );
    expect(pick(real).whitelist_ips).toEqual(['0.0.0.1', '0.0.0.0']);
    expect(pick(real).www_whitelist_ips).toEqual(['10.1.1.1']);
    // Short, octal and hexadecimal forms, masks written as addresses, and entries netmask refuses.
    const entries = ['1.2', '010.1', '0x1F', '08', '10.0.0.0/255.0.0.0', '10.1.2.3/0.0.0.0', '1.2.3.4/8/9', '1./8', 'a'];
    const [r2, s2] = await s.both(() => ['PUT', '/api/settings', { www_whitelist_ips: [], whitelist_ips: entries }]);
    expect(pick(r2).whitelist_ips).toEqual(['0.0.1.2', '0.0.8.1', '0.0.0.31', '0.0.0.8', '10.0.0.0/8', '1.0.0.0/8']);
    expect(pick(s2)).toEqual(pick(r2));
    await s.same(() => ['PUT', '/api/settings', { www_whitelist_ips: [], whitelist_ips: [] }], { status: 200 }, pick);
  });

  it("the sandbox reads a whitelist entry as the real manager's own netmask package does, for any text (fast-check)", () => {
    // The package the real manager loads, from its installation (its lockfile pins 2.0.1).
    const { Netmask } = createRequire(join(realManagerPackageDir(), 'package.json'))('netmask') as {
      Netmask: new (net: string) => { base: string; bitmask: number };
    };
    const asReal = (entry: string) => {
      try {
        const n = new Netmask(entry);
        return n.bitmask === 32 ? n.base : `${n.base}/${n.bitmask}`;
      } catch {
        return undefined;
      }
    };
    const alphabet = fc.constantFrom(...'0123456789abcdefxX./-+ '.split(''));
    const entry = fc.oneof(
      fc.string({ unit: alphabet, maxLength: 24 }),
      fc.ipV4().map((ip) => `${ip}/${ip.split('.')[0]}`),
    );
    let kept = 0;
    fc.assert(
      fc.property(entry, (e) => {
        const want = asReal(e);
        if (want !== undefined) kept++;
        expect(whitelistEntryAsStored(e), JSON.stringify(e)).toBe(want);
      }),
      { numRuns: 5000 },
    );
    // The draw reached entries the package keeps, not only ones it refuses.
    expect(kept).toBeGreaterThan(500);
  });
});

describe("bodies the real manager's body parsers cannot read", () => {
  // Its body parsers (body-parser 1.20.3: forms, then JSON, `strict`, a 2 MB limit) run for every request
  // before the API's routes, whatever the method (web_server.js 166-176); each of their errors reaches the
  // app's last error handler: 500 `Server Error` (web_server.js 184-187), without the API's headers.
  const UNKNOWN = 25991;
  const routes: { reads: 'no body' | 'a body'; call: (at: At) => [string, string] }[] = [
    { reads: 'no body', call: () => ['GET', '/api/proxies'] },
    { reads: 'no body', call: () => ['GET', '/api/settings'] },
    { reads: 'no body', call: () => ['GET', '/api/recent_stats'] },
    { reads: 'no body', call: (at) => ['GET', `/api/proxy_status/${at(UNKNOWN)}`] },
    { reads: 'no body', call: (at) => ['POST', `/api/refresh_sessions/${at(UNKNOWN)}`] },
    { reads: 'no body', call: (at) => ['DELETE', `/api/proxies/${at(UNKNOWN)}`] },
    { reads: 'a body', call: () => ['POST', '/api/proxies'] },
    { reads: 'a body', call: (at) => ['PUT', `/api/proxies/${at(UNKNOWN)}`] },
    { reads: 'a body', call: () => ['PUT', '/api/settings'] },
    { reads: 'a body', call: () => ['POST', '/api/perr'] },
    { reads: 'a body', call: () => ['POST', '/api/banip'] },
    { reads: 'a body', call: () => ['POST', '/api/lpm_user'] },
  ];
  const JSON_MEDIA = 'application/json';
  const blank = fc.constantFrom(' ', '\t', '\n', '\r');
  const pad = fc.string({ unit: blank, maxLength: 3 });
  const scalar = fc.oneof(
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.string({ maxLength: 20 }),
    fc.boolean(),
    fc.constant(null),
  );
  const container = fc.oneof(fc.object({ maxDepth: 2 }), fc.array(fc.jsonValue({ maxDepth: 1 }), { maxLength: 3 }));
  const unreadable = fc.oneof(
    // JSON, but no object or array: body-parser's `strict` refuses it before parsing (json.js 81-87).
    fc.tuple(pad, scalar, pad).map(([a, v, b]) => ({ kind: 'no object or array', text: a + JSON.stringify(v) + b, media: JSON_MEDIA })),
    fc.string({ unit: blank, minLength: 1, maxLength: 4 }).map((text) => ({ kind: 'blanks only', text, media: JSON_MEDIA })),
    // An object or array cut short: no proper prefix of one is JSON.
    fc.tuple(container, fc.nat()).map(([v, n]) => {
      const t = JSON.stringify(v);
      return { kind: 'cut short', text: t.slice(0, 1 + (n % (t.length - 1))), media: JSON_MEDIA };
    }),
    // A JSON object in a charset it does not read (json.js 126-135): anything but `utf-…`.
    fc.tuple(fc.object({ maxDepth: 1 }), fc.constantFrom('latin1', 'iso-8859-1', 'us-ascii', 'utf8', 'windows-1252')).map(([v, cs]) => ({
      kind: 'charset',
      text: JSON.stringify(v),
      media: `${JSON_MEDIA}; charset=${cs}`,
    })),
  );

  /** One request with a body, whatever the method (fetch sends none with GET), as the client wrote it. */
  function send(base: string, method: string, path: string, text: string, media: string): Promise<Reply & { deprecation?: string }> {
    return new Promise((resolve, reject) => {
      const u = new URL(path, base);
      const headers = { 'content-type': media, 'content-length': String(Buffer.byteLength(text)) };
      const req = httpRequest({ host: u.hostname, port: u.port, path: u.pathname, method, headers, agent: false }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          body += c;
        });
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            media: res.headers['content-type']?.split(';')[0]?.trim() ?? null,
            body,
            ...(res.headers.deprecation !== undefined ? { deprecation: String(res.headers.deprecation) } : {}),
          }),
        );
      });
      req.setTimeout(10_000, () => req.destroy(new Error(`no answer to ${method} ${path}`)));
      req.once('error', reject);
      req.end(text);
    });
  }

  it('generated bodies that are no object or array, cut short, blanks or in another charset: 500 `Server Error` on routes with and without a body, and every operation declares it', async () => {
    const seen = new Map<string, number>();
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...routes), unreadable, async (route, body) => {
        const [method, path] = route.call((p) => p);
        const real = await send(s.manager.url, method, path, body.text, body.media);
        const [, sbxPath] = route.call((p) => p + SHIFT);
        const sbx = await send(s.sandbox.managerUrl, method, sbxPath, body.text, body.media);
        const label = `${method} ${path} ${JSON.stringify(body)}`;
        expect(real, `real manager: ${label}`).toEqual({ status: 500, media: 'text/html', body: 'Server Error' });
        expect(sbx, `sandbox: ${label}`).toEqual(real);
        for (const key of [route.reads, body.kind]) seen.set(key, (seen.get(key) ?? 0) + 1);
      }),
      { numRuns: 48 },
    );
    for (const kind of ['no body', 'a body', 'no object or array', 'blanks only', 'cut short', 'charset'])
      expect(seen.get(kind), `drawn: ${kind}`).toBeGreaterThan(0);

    // The spec declares the answer on every operation (UnreadableBody, or ServerError or its own 500 where
    // the operation has other 500s), and the real answer validates against it.
    const doc = loadBundle('manager');
    const validator = schemaValidator(doc);
    type Responses = Record<string, { $ref?: string; content?: Record<string, unknown> }>;
    let operations = 0;
    for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, { responses?: Responses }>>))
      for (const [method, op] of Object.entries(item)) {
        if (!op.responses) continue;
        operations++;
        const declared = op.responses['500'];
        const at = `${method.toUpperCase()} ${path}`;
        expect(declared, `${at} declares 500`).toBeDefined();
        const pointer = declared?.$ref ?? `#/paths/${path.replaceAll('/', '~1')}/${method}/responses/500`;
        expect(validator.validate(`${pointer}/content/text~1html/schema`, 'Server Error'), at).toBeNull();
      }
    expect(operations).toBeGreaterThan(45);
  });

  it('a GET with a JSON object or array is answered as without one; a byte order mark before the JSON is read', async () => {
    for (const text of ['{"a":1}', ' \t[]', '\uFEFF{}'])
      for (const route of routes.filter((r) => r.call((p) => p)[0] === 'GET')) {
        const [method, path] = route.call((p) => p);
        const real = await send(s.manager.url, method, path, text, JSON_MEDIA);
        const sbx = await send(s.sandbox.managerUrl, ...route.call((p) => p + SHIFT), text, JSON_MEDIA);
        expect(real.status, `${method} ${path} ${JSON.stringify(text)}`).toBe(200);
        expect({ status: sbx.status, media: sbx.media, deprecation: sbx.deprecation }).toEqual({
          status: real.status,
          media: real.media,
          deprecation: real.deprecation,
        });
      }
  });
});

/** A text answer with the sandbox's port number taken back to the real one's. */
function portless(r: Reply): Reply {
  return typeof r.body === 'string' ? { ...r, body: r.body.replace(String(25999 + SHIFT), '25999') } : r;
}
