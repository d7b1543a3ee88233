import { type ChildProcess, spawn } from 'node:child_process';
import { createServer, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { type AddressInfo, connect, type Socket } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type ApiName, bundlePath } from '@zone-api/spec/model';
import { freePort } from './ports.js';

// Bundles, `$ref`s, operations, schema validation and the check of an answer (`Conformance`) come from
// the operation model of `@zone-api/spec/model`, the one the sandbox, the probe and the build scripts use.
export {
  type ApiName,
  type BundleName,
  bundlePath,
  Conformance,
  deref,
  esc,
  HTTP_METHODS,
  loadBundle,
  type OpenApiDoc,
  type Operation,
  operations as listOperations,
  resolvePointer,
  responseSchemaPointer,
  schemaValidator,
} from '@zone-api/spec/model';

export const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '../../..');

export { testCacheDir } from './cache.js';
export { freePort } from './ports.js';
export { type StandInProxy, standInProxy } from './stand-in-proxy.js';

/** A `Proxy-Authorization` (or `Authorization`) value for HTTP basic credentials. */
export const basicAuth = (user: string, password: string): string => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

/** The exit peer an answer through the proxy network names (`x-luminati-ip`, or `x-<brand>-ip`). */
export const peerOf = (headers: Record<string, unknown>, brand = 'luminati'): string | undefined =>
  headers[`x-${brand}-ip`] as string | undefined;

export interface Running {
  url: string;
  stop(): Promise<void>;
  output(): string;
}

/**
 * Spawns a command and waits for a line matching `ready`; fails with its output if it exits or stalls.
 * The bound is for a stall, not a start: on a 2-core machine at a load of 20, the four Prisms of the
 * contract projects' global setups took over 60 s to start together (and a failed global setup ends
 * the whole run), and one that is ready ends the wait at once.
 */
export function spawnUntil(cmd: string, args: string[], ready: RegExp, url: string, timeoutMs = 240_000): Promise<Running> {
  return new Promise((resolve, reject) => {
    const child: ChildProcess = spawn(cmd, args, { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
    let log = '';
    let done = false;
    const timer = setTimeout(() => finish(new Error(`${cmd} not ready after ${timeoutMs} ms:\n${log}`)), timeoutMs);
    const stop = () =>
      new Promise<void>((res) => {
        if (child.exitCode !== null || child.signalCode !== null) return res();
        child.once('exit', () => res());
        child.kill('SIGTERM');
        setTimeout(() => child.kill('SIGKILL'), 3000).unref();
      });
    function finish(err?: Error) {
      if (done) return;
      done = true;
      clearTimeout(timer);
      if (err) {
        void stop();
        reject(err);
      } else resolve({ url, stop, output: () => log });
    }
    const onData = (chunk: Buffer) => {
      log += chunk.toString();
      if (ready.test(log)) finish();
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.on('exit', (code) => finish(new Error(`${cmd} exited (${code}) before it was ready:\n${log}`)));
  });
}

/** Prism serving a bundle as a mock on a free loopback port. */
export async function startPrism(api: ApiName, extraArgs: string[] = []): Promise<Running> {
  const port = await freePort();
  const bin = join(repoRoot, 'node_modules/.bin/prism');
  return spawnUntil(
    bin,
    ['mock', bundlePath(api, { ext: 'yaml' }), '-p', String(port), '-h', '127.0.0.1', ...extraArgs],
    /Prism is listening on/,
    `http://127.0.0.1:${port}`,
  );
}

export interface PrismViolation {
  location: string[];
  severity: string;
  code?: string | number;
  message: string;
}

/**
 * The violations Prism reported for one exchange (its `sl-violations` header), split by side.
 * Prism's mock reports request violations; `prism proxy` in front of a server also reports where
 * the server's response breaks the spec.
 */
export function prismViolations(response: Response): { request: PrismViolation[]; response: PrismViolation[] } {
  const raw = response.headers.get('sl-violations');
  const all: PrismViolation[] = raw ? JSON.parse(raw) : [];
  return {
    request: all.filter((v) => v.location?.[0] === 'request'),
    response: all.filter((v) => v.location?.[0] !== 'request'),
  };
}

/** Prism in proxy mode: forwards to `upstream` and reports spec violations of both sides. */
export async function startPrismProxy(api: ApiName, upstream: string): Promise<Running> {
  const port = await freePort();
  const bin = join(repoRoot, 'node_modules/.bin/prism');
  return spawnUntil(
    bin,
    ['proxy', bundlePath(api, { ext: 'yaml' }), upstream, '-p', String(port), '-h', '127.0.0.1'],
    /Prism is listening on/,
    `http://127.0.0.1:${port}`,
  );
}

/**
 * An openapi-fetch middleware that records every response-side Prism violation into `sink`
 * (`METHOD path: message`), so a suite can assert after each test that no response broke the spec.
 */
export function recordResponseViolations(sink: string[]) {
  return {
    onResponse({ request, response }: { request: Request; response: Response }) {
      for (const v of prismViolations(response).response) {
        sink.push(`${request.method} ${new URL(request.url).pathname}: ${v.location.join('.')} ${v.message}`);
      }
      return undefined;
    },
  };
}

/**
 * A fetch for unit tests with an injected fetch (openapi-fetch's createObservedClient pattern):
 * the client runs for real; this records a copy of each Request it is given and answers from `answer`.
 */
export function recordingFetch(answer: (req: Request) => Response | Promise<Response> = () => Response.json({})) {
  const seen: Request[] = [];
  const fetch = (async (input: Parameters<typeof globalThis.fetch>[0], init?: RequestInit) => {
    const req = new Request(input, init);
    seen.push(req.clone());
    return answer(req);
  }) as typeof globalThis.fetch;
  return { fetch, seen, last: () => seen.at(-1) as Request };
}

/**
 * One request through an HTTP proxy in absolute-URI form (node's http client, which shows the proxy's
 * own answers whole, refusals included). A connection that fails is status 0 with the error's message.
 * `idleMs` bounds it: a connection silent that long is given up (status 0, `no answer in N ms`).
 */
export function viaProxy(
  proxy: string,
  url: string,
  o: { auth?: string; method?: string; body?: string; idleMs?: number; headers?: Record<string, string> } = {},
): Promise<{ status: number; headers: IncomingHttpHeaders; text: string }> {
  const p = new URL(proxy);
  return new Promise((resolve) => {
    const headers: Record<string, string> = { host: new URL(url).host, ...o.headers };
    if (o.auth) headers['proxy-authorization'] = o.auth;
    const req = httpRequest({ host: p.hostname, port: p.port, method: o.method ?? 'GET', path: url, headers, agent: false }, (res) => {
      let text = '';
      res.on('data', (c) => {
        text += c;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
    });
    req.on('error', (err) => resolve({ status: 0, headers: {}, text: err.message }));
    const idle = o.idleMs;
    if (idle) req.setTimeout(idle, () => req.destroy(new Error(`no answer in ${idle} ms`)));
    req.end(o.body);
  });
}

/**
 * What a server (a proxy port) answers to `text` sent raw on a new loopback connection, read as latin1
 * until the connection closes; 5 s of silence end it (what came by then is the answer).
 */
export function rawAnswer(port: number, text: string): Promise<string> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1', () => s.write(text));
    let got = '';
    s.on('data', (d: Buffer) => {
      got += d.toString('latin1');
    });
    s.once('close', () => resolve(got));
    s.once('error', () => undefined);
    s.setTimeout(5000, () => s.destroy());
  });
}

/** What a CONNECT through a proxy gave: the answer and, when it is 200, what came back through the tunnel. */
export interface TunnelAnswer {
  status: number;
  statusMessage: string;
  headers: IncomingHttpHeaders;
  /** What the (echo) target sent back for `line`, up to its newline; only when the tunnel opened. */
  echoed?: string;
}

/**
 * A raw CONNECT to `authority` through `proxy` (node's http client, which shows the proxy's own answer
 * whole): the answer's status, status text and headers, and, when it is 200, what an echo target sends
 * back for `line` written through the tunnel. Bounded: no answer within `timeoutMs` is an error.
 */
export function tunnelThrough(
  proxy: string,
  authority: string,
  o: { auth?: string; line?: string; timeoutMs?: number; headers?: Record<string, string> } = {},
): Promise<TunnelAnswer> {
  const p = new URL(proxy);
  const line = o.line ?? 'ping through the tunnel\n';
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { ...(o.auth ? { 'proxy-authorization': o.auth } : {}), ...o.headers };
    const req = httpRequest({ host: p.hostname, port: p.port, method: 'CONNECT', path: authority, headers, agent: false });
    req.setTimeout(o.timeoutMs ?? 10_000, () => req.destroy(new Error(`no answer to the CONNECT to ${authority}`)));
    req.once('error', reject);
    req.once('connect', (res, socket: Socket) => {
      const answer = { status: res.statusCode ?? 0, statusMessage: res.statusMessage ?? '', headers: res.headers };
      if (answer.status !== 200) {
        socket.destroy();
        resolve(answer);
        return;
      }
      let got = '';
      socket.on('data', (d: Buffer) => {
        got += d.toString();
        if (got.endsWith('\n')) socket.end();
      });
      socket.once('close', () => resolve({ ...answer, echoed: got }));
      socket.write(line);
    });
    req.end();
  });
}

/** A loopback target for traffic through ports, and how often it was asked for each path. */
export interface RulesTarget {
  url: string;
  /** How often the target was asked for each path (a retry asks again). */
  asked: Map<string, number>;
  /** How often an exchange for each path ended: answered (a held-back answer once given), or its connection closed first. */
  answered: Map<string, number>;
  close(): Promise<void>;
}

/**
 * The target of the side-by-side suites (pair.ts) and the sandbox's rules suite: it answers
 * the status a `st=NNN` query names (200 otherwise), `please solve the captcha` when the query holds
 * `captcha` (a body trigger), and `hello <url>` else, and counts what each path was asked. `wait=MS`
 * in the query holds the answer back that long (at most 10 s), for a slow target; `ct=TYPE` (URL-encoded)
 * is the answer's `content-type` (`text/plain` otherwise); `hdr=NAME` adds ` NAME=<value>` of the
 * request's header NAME to `hello <url>`, to show what a proxy sent on, and `names=PREFIX` ` names=<a,b>`, the
 * names of the request's headers that start with PREFIX.
 */
export async function startRulesTarget(): Promise<RulesTarget> {
  const asked = new Map<string, number>();
  const answered = new Map<string, number>();
  /** Answers held back (`wait=`): given at once when the target closes. */
  const waiting = new Map<NodeJS.Timeout, () => void>();
  const server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0] as string;
    asked.set(path, (asked.get(path) ?? 0) + 1);
    res.on('close', () => answered.set(path, (answered.get(path) ?? 0) + 1));
    const answer = () => {
      res.statusCode = Number(/[?&]st=(\d{3})/.exec(req.url ?? '')?.[1] ?? 200);
      res.setHeader('content-type', decodeURIComponent(/[?&]ct=([^&]+)/.exec(req.url ?? '')?.[1] ?? 'text/plain'));
      // `hdr=name`: the value of the request's header `name` follows, to show what a proxy sent on.
      const hdr = /[?&]hdr=([^&]+)/.exec(req.url ?? '')?.[1];
      // `names=prefix`: the names of the request's headers that start with `prefix`, sorted, follow.
      const names = /[?&]names=([^&]+)/.exec(req.url ?? '')?.[1];
      const shown =
        (hdr ? ` ${hdr}=${String(req.headers[hdr.toLowerCase()] ?? '')}` : '') +
        (names
          ? ` names=${Object.keys(req.headers)
              .filter((k) => k.startsWith(names.toLowerCase()))
              .sort()
              .join(',')}`
          : '');
      res.end(/[?&]captcha/.test(req.url ?? '') ? 'please solve the captcha' : `hello ${req.url}${shown}`);
    };
    const wait = Math.min(10_000, Number(/[?&]wait=(\d+)/.exec(req.url ?? '')?.[1] ?? 0));
    if (!wait) return answer();
    const timer = setTimeout(() => {
      waiting.delete(timer);
      answer();
    }, wait);
    waiting.set(timer, answer);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    asked,
    answered,
    close: () => {
      for (const [timer, answer] of waiting) {
        clearTimeout(timer);
        answer();
      }
      waiting.clear();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
