// Rows of the hostile part of the bench for issue 39 (connections, rules, loops, TLS), each runnable alone:
// `node bench/hostile.mjs --only <name>` (the machine is shared: one row at a time costs less than the part).
// Each takes the hostile target (hostile-target.mjs) and returns its row: label, reading, ok/OVER, detail.
import { fork } from 'node:child_process';
import { createServer, request as httpRequest } from 'node:http';
import { connect, createServer as createNetServer } from 'node:net';
import { createGzip } from 'node:zlib';

const MB = 1024 * 1024;

/** Polls `ask` every 100 ms until `ok(value)` or `ms` passed: the value and the time it took. */
async function until(ask, ok, ms) {
  const started = performance.now();
  let value = await ask();
  while (!ok(value) && performance.now() - started < ms) {
    await new Promise((r) => setTimeout(r, 100));
    value = await ask();
  }
  return { value, ms: performance.now() - started };
}

/** A loopback port no one listens on now. */
const freePort = () =>
  new Promise((resolve) => {
    const s = createNetServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });

/** `n` connections to loopback `port`, resolved once each is connected. */
const connections = (port, n) =>
  Promise.all(
    Array.from(
      { length: n },
      () =>
        new Promise((resolve, reject) => {
          const s = connect(port, '127.0.0.1', () => resolve(s));
          s.once('error', reject);
        }),
    ),
  );

/**
 * How long the sandbox holds `sockets` from now: the longest time until one of them closes. Each is read,
 * so that the sandbox's end is seen (a socket never read never learns of it). Bounded: sockets still open
 * after 120 s are let go of then, and read as held 120 s.
 */
async function heldFor(sockets) {
  const started = performance.now();
  const closed = sockets.map(
    (s) =>
      new Promise((resolve) => {
        s.on('error', () => undefined);
        s.resume();
        s.once('close', () => resolve(performance.now() - started));
      }),
  );
  const timer = setTimeout(() => {
    for (const s of sockets) s.destroy();
  }, 120_000);
  const longest = Math.max(...(await Promise.all(closed)));
  clearTimeout(timer);
  return longest;
}

/** A loopback target answering `answer(req, res)`, until `stop()`. */
async function target(answer) {
  const server = createServer(answer);
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${server.address().port}`, stop: () => server.close() };
}

/** A GET through the proxy at `port` (loopback): its status and the bytes of its body as sent. */
function through(port, url) {
  return new Promise((resolve) => {
    const req = httpRequest({ host: '127.0.0.1', port, path: url, headers: { host: new URL(url).host }, agent: false }, (res) => {
      let bytes = 0;
      res.on('data', (c) => {
        bytes += c.length;
      });
      res.on('end', () => resolve({ status: res.statusCode, bytes }));
    });
    req.on('error', () => resolve({ status: 0, bytes: 0 }));
    req.end();
  });
}

/** `mb` MiB of zeros gzipped (level 9), made in pieces. */
async function gzipBomb(mb) {
  const parts = [];
  const gz = createGzip({ level: 9 });
  gz.on('data', (c) => parts.push(c));
  const done = new Promise((r) => gz.once('end', r));
  const zeros = Buffer.alloc(MB);
  for (let i = 0; i < mb; i++) if (!gz.write(zeros)) await new Promise((r) => gz.once('drain', r));
  gz.end();
  await done;
  return Buffer.concat(parts);
}

const banOnBody = (body) => [{ action: { ban_ip: 0 }, action_type: 'ban_ip', trigger_type: 'body', body }];

export const clientRows = {
  /** 200 TLS handshakes to the network, each with a name of its own (SNI), no credential: the manager API's slowest answer meanwhile. */
  async 'tls-names'(t) {
    const port = Number(new URL(t.networkUrl).port);
    const run = `${Date.now().toString(36)}`;
    let probing = true;
    let slowest = 0;
    let probes = 0;
    const probe = (async () => {
      while (probing) {
        const started = performance.now();
        await (await fetch(`${t.managerUrl}/api/version`)).text();
        slowest = Math.max(slowest, performance.now() - started);
        probes++;
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    await t.ask('reset', 'reset');
    const clients = fork(new URL('./hostile-tls-clients.mjs', import.meta.url), [String(port), '200', run], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const { done, ms: took } = await new Promise((resolve, reject) => {
      clients.once('message', resolve);
      clients.once('exit', (code) => reject(new Error(`the TLS clients exited (${code})`)));
    });
    const lag = await t.ask('lag', 'lag');
    probing = false;
    await probe;
    return [
      '200 TLS handshakes to the network, a name each, no credential',
      `${slowest.toFixed(0)} ms`,
      slowest < 100 ? 'ok' : 'OVER',
      `the manager API's slowest of ${probes} answers meanwhile; the sandbox's event loop's longest delay ${lag.toFixed(0)} ms; ${done} handshakes done (in a process of their own) in ${(took / 1000).toFixed(1)} s (target: < 100 ms)`,
    ];
  },
  /**
   * A manager form body of 9,999 list items by index (99 kB), once, then five at once: qs, which the real
   * manager reads forms with, does work that grows with the square of them (1.08 s once, 5.6 s five at once).
   */
  async 'form-bodies'(t) {
    const text = ['har_limit=1024', ...Array.from({ length: 9_998 }, (_, i) => `a[${i}]=1`)].join('&');
    const put = async (body = text) => {
      const r = await fetch(`${t.managerUrl}/api/settings`, {
        method: 'PUT',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body,
      });
      await r.text();
      return r.status;
    };
    // The route's first request (its schemas compiled) is not the form's.
    await put('har_limit=1024&a[0]=1');
    await t.ask('reset', 'reset');
    const once = await put();
    const onceLag = await t.ask('lag', 'lag');
    await t.ask('reset', 'reset');
    const five = await Promise.all(Array.from({ length: 5 }, put));
    const lag = Math.max(onceLag, await t.ask('lag', 'lag'));
    return [
      `a form body of 9,999 parameters a[i]=1 (${(text.length / 1000).toFixed(0)} kB), once and five at once`,
      `${lag.toFixed(0)} ms`,
      lag < 100 ? 'ok' : 'OVER',
      `answers ${once}; ${five.join(',')}; longest delay once ${onceLag.toFixed(0)} ms (target: delay < 100 ms)`,
    ];
  },
  /**
   * Loops through ext_proxies: a port whose external proxy is itself, and two ports naming each other, 50
   * requests through each (10 at once). Once one request took up to 2,046 fds and filled the HAR log; now the
   * sandbox's fds at their highest meanwhile (sampled every 50 ms) and after, and the log entries they left.
   */
  async 'ext-loops'(t) {
    const create = async (port, ext) => {
      const r = await fetch(`${t.managerUrl}/api/proxies`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ proxy: { port, zone: 'res_zone', ext_proxies: ext.map((p) => `127.0.0.1:${p}`) } }),
      });
      if (r.status !== 200) throw new Error(`port ${port}: ${r.status} ${await r.text()}`);
    };
    const [self, b, c] = [await freePort(), await freePort(), await freePort()];
    await create(self, [self]);
    await create(b, [c]);
    await create(c, [b]);
    const fds0 = await t.ask('fds', 'fds');
    let peak = fds0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        peak = Math.max(peak, await t.ask('fds', 'fds'));
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    const codes = new Set();
    for (const port of [self, b]) {
      for (let round = 0; round < 5; round++) {
        const got = await Promise.all(
          Array.from({ length: 10 }, (_, i) => through(port, `http://127.0.0.1:9/ext-loop/${port}/${round}-${i}`)),
        );
        for (const g of got) codes.add(g.status);
      }
    }
    sampling = false;
    await sampler;
    const after = await until(
      () => t.ask('fds', 'fds'),
      (n) => n <= fds0 + 2,
      20_000,
    );
    const logged = await t.ask({ harMatching: '/ext-loop/' }, 'harMatching');
    const bounded = peak - fds0 <= 64 && after.value - fds0 <= 2 && logged <= 100;
    return [
      'ext_proxies loops (a port to itself; two ports to each other), 100 requests, 10 at once',
      `+${peak - fds0} fds`,
      bounded ? 'ok' : 'OVER',
      `answers ${[...codes].join(',')}; fds at their highest +${peak - fds0}, +${after.value - fds0} after; ${logged} log entries for 100 requests (target: fds back to their start, at most one entry a request)`,
    ];
  },
  /** A body rule on a 1 MB gzip answer of 1 GiB: the event loop's longest delay and the RSS meanwhile. */
  async 'rule-bomb'(t) {
    const bomb = await gzipBomb(1024);
    const site = await target((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'gzip', 'content-length': String(bomb.length) });
      res.end(bomb);
    });
    try {
      const port = await t.ask({ portWith: banOnBody('never-there') }, 'port');
      const rss0 = await t.ask('rss', 'rss');
      await t.ask('reset', 'reset');
      const got = await through(port, `${site.url}/bomb`);
      const lag = await t.ask('lag', 'lag');
      const rss = await t.ask('rss', 'rss');
      return [
        `a body rule on a gzip answer of 1 GiB in ${(bomb.length / MB).toFixed(1)} MB`,
        `${lag.toFixed(0)} ms`,
        lag < 100 ? 'ok' : 'OVER',
        `answer ${got.status}, ${(got.bytes / MB).toFixed(1)} MB as sent; RSS +${((rss - rss0) / MB).toFixed(0)} MB (target: delay < 100 ms, RSS within 64 MB)`,
      ];
    } finally {
      site.stop();
    }
  },
  /** Rule patterns that backtrack in JavaScript: a URL rule (a+)+b on 28 a, a body rule (x+x+)+y on 1,000 x. */
  async 'rule-regex'(t) {
    const site = await target((_req, res) => res.end('x'.repeat(1000)));
    try {
      const urlPort = await t.ask(
        { portWith: [{ action: { null_response: true }, action_type: 'null_response', trigger_type: 'url', url: '(a+)+b' }] },
        'port',
      );
      const bodyPort = await t.ask({ portWith: banOnBody('(x+x+)+y') }, 'port');
      await t.ask('reset', 'reset');
      const a = await through(urlPort, `${site.url}/${'a'.repeat(28)}`);
      const b = await through(bodyPort, `${site.url}/xs`);
      const lag = await t.ask('lag', 'lag');
      return [
        'rule patterns (a+)+b on 28 a, (x+x+)+y on 1,000 x',
        `${lag.toFixed(0)} ms`,
        lag < 100 ? 'ok' : 'OVER',
        `answers ${a.status}, ${b.status} (target: delay < 100 ms)`,
      ];
    } finally {
      site.stop();
    }
  },
  /** 300 connections to the network's port that close before their first byte: the sandbox's fds back to their start. */
  async 'early-close'(t) {
    const port = Number(new URL(t.networkUrl).port);
    const fds0 = await t.ask('fds', 'fds');
    for (let round = 0; round < 3; round++) {
      const sockets = await connections(port, 100);
      for (const s of sockets) {
        s.on('error', () => undefined);
        s.end();
      }
    }
    const after = await until(
      () => t.ask('fds', 'fds'),
      (n) => n <= fds0 + 2,
      20_000,
    );
    const left = after.value - fds0;
    return [
      '300 connections to the network closed before their first byte',
      `+${left} fds`,
      left <= 2 ? 'ok' : 'OVER',
      `back in ${after.ms.toFixed(0)} ms (target: fds back to their start)`,
    ];
  },
  /** 50 manager bodies of 1.9 MB each, then stalled: how long the sandbox holds them, and their memory meanwhile. */
  async 'slow-bodies'(t) {
    const port = Number(new URL(t.managerUrl).port);
    const rss0 = await t.ask('rss', 'rss');
    const sockets = await connections(port, 50);
    const held = heldFor(sockets);
    const body = Buffer.alloc(1.9 * MB, 120);
    await Promise.all(
      sockets.map(
        (s) =>
          new Promise((resolve) => {
            s.write('POST /api/proxies HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 2000000\r\n\r\n');
            s.write(body, resolve);
          }),
      ),
    );
    const rssHeld = await t.ask('rss', 'rss');
    const longest = await held;
    const rssAfter = await t.ask('rss', 'rss');
    return [
      '50 manager bodies of 1.9 MB, then stalled',
      `${(longest / 1000).toFixed(1)} s`,
      longest < 60_000 ? 'ok' : 'OVER',
      `held that long; RSS +${((rssHeld - rss0) / MB).toFixed(0)} MB while held, +${((rssAfter - rss0) / MB).toFixed(0)} MB after (target: let go of within a minute)`,
    ];
  },
  /** 20 connections to a port dripping 1 KB every 5 s of a body: how long the sandbox holds them. */
  async drip(t) {
    const port = await t.ask('port', 'port');
    const sockets = await connections(port, 20);
    const held = heldFor(sockets);
    for (const s of sockets) s.write('POST http://127.0.0.1:9/upload HTTP/1.1\r\nHost: 127.0.0.1:9\r\nContent-Length: 1000000\r\n\r\n');
    const drip = setInterval(() => {
      for (const s of sockets) if (!s.destroyed) s.write(Buffer.alloc(1024, 120));
    }, 5_000);
    const longest = await held;
    clearInterval(drip);
    return [
      '20 bodies through a port, 1 KB every 5 s',
      `${(longest / 1000).toFixed(1)} s`,
      longest < 60_000 ? 'ok' : 'OVER',
      'held that long (target: within a minute)',
    ];
  },
};
