import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PROVIDER_API_HOST } from '@zone-api/sandbox';
import { type CompletedRequest, generateCACertificate, getLocal, type Mockttp } from 'mockttp';

// The provider's own npm clients (SDK, MCP server, CLI), run unmodified against a sandbox: their fixed
// host names reach it through a loopback forward proxy (mockttp) that terminates TLS with a CA made for
// the run, and a guard (preload.cjs, inside a network namespace with only loopback) refuses anything else.

export {
  assertRealClientsInstalled,
  ensureRealClientsInstalled,
  REAL_CLIENTS,
  realClientDir,
  realClientsCacheDir,
} from './install.mjs';

/** The preload every client process gets: undici through the proxy, and the loopback guard. */
export const PRELOAD = fileURLToPath(new URL('./preload.cjs', import.meta.url));

/**
 * Refuses to go on unless this process sits in a network namespace whose only interface is loopback
 * (`pnpm test:real-clients` makes one): a client that tried to reach the provider could not.
 */
export function assertLoopbackOnly(): void {
  const outside = Object.entries(networkInterfaces()).filter(([, addrs]) => (addrs ?? []).some((a) => !a.internal));
  if (outside.length) {
    throw new Error(
      `the real clients run only inside a network namespace with nothing but loopback, and this one has ${outside
        .map(([name]) => name)
        .join(', ')}: run \`pnpm test:real-clients\`, which starts one (root and unshare needed)`,
    );
  }
  if (!(networkInterfaces().lo ?? []).some((a) => a.address === '127.0.0.1')) throw new Error('loopback is down in this namespace');
}

/** One request a client sent through the proxy. */
export interface Exchange {
  method: string;
  /** The URL the client meant (its host and path). */
  url: string;
  status?: number;
}

export interface ClientProxy {
  /** `http://127.0.0.1:<port>`, for HTTPS_PROXY. */
  url: string;
  /** The run's CA certificate (PEM file), for NODE_EXTRA_CA_CERTS. */
  caFile: string;
  /** Requests to the provider's host, forwarded to the sandbox, with the status it answered. */
  exchanges: Exchange[];
  /** Requests to any other host: answered 502, never forwarded. */
  refused: string[];
  /** TLS handshakes that failed (a client that did not trust the run's CA). */
  tlsFailures: string[];
  close(): Promise<void>;
}

/**
 * A forward proxy on loopback that sends requests for `hosts` (HTTP, HTTPS through CONNECT with TLS
 * terminated by its own CA, or absolute-form) to `target` (the sandbox's account URL) and refuses every
 * other host with a 502 that names it.
 */
export async function startClientProxy(options: { target: string; hosts?: string[]; dir: string }): Promise<ClientProxy> {
  const hosts = options.hosts ?? [PROVIDER_API_HOST];
  const ca = await generateCACertificate({ subject: { commonName: 'zone-api real-clients test CA' }, bits: 2048 });
  const caFile = join(options.dir, 'proxy-ca.pem');
  writeFileSync(caFile, ca.cert);
  const server: Mockttp = getLocal({ https: { key: ca.key, cert: ca.cert }, recordTraffic: false });
  const exchanges: Exchange[] = [];
  const refused: string[] = [];
  const tlsFailures: string[] = [];
  const byId = new Map<string, Exchange>();
  for (const host of hosts) await server.forAnyRequest().forHostname(host).thenForwardTo(options.target);
  await server.forUnmatchedRequest().thenCallback((req: CompletedRequest) => {
    refused.push(`${req.method} ${req.url}`);
    return { statusCode: 502, body: `refused by the real-clients test proxy: only ${hosts.join(', ')} reach the sandbox` };
  });
  await server.on('request', (req) => {
    if (!hosts.includes(new URL(req.url).hostname)) return;
    const e: Exchange = { method: req.method, url: req.url };
    exchanges.push(e);
    byId.set(req.id, e);
  });
  await server.on('response', (res) => {
    const e = byId.get(res.id);
    if (e) e.status = res.statusCode;
  });
  await server.on('tls-client-error', (f) => {
    tlsFailures.push(`${f.destination?.hostname ?? '?'}: ${f.failureCause}`);
  });
  await server.start();
  return {
    url: `http://127.0.0.1:${server.port}`,
    caFile,
    exchanges,
    refused,
    tlsFailures,
    close: () => server.stop(),
  };
}

/** What a client process showed its user. */
export interface ClientRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** What the guard refused in this process (and its children). */
  guarded: string[];
}

/** A private folder for one client process: its HOME (the CLI keeps its config there) and the guard's log. */
export function clientHome(): string {
  return mkdtempSync(join(tmpdir(), 'zone-api-real-client-'));
}

/**
 * The environment a client process gets: nothing of this process's beyond PATH, a HOME of its own, the
 * proxy in the ways clients honour one (HTTPS_PROXY for axios, the preload for undici and fetch), the
 * proxy's CA (NODE_EXTRA_CA_CERTS), and the guard.
 */
export function clientEnv(proxy: ClientProxy, home: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    HTTPS_PROXY: proxy.url,
    https_proxy: proxy.url,
    NODE_EXTRA_CA_CERTS: proxy.caFile,
    // Quoted: a checkout path may hold spaces (NODE_OPTIONS splits on them otherwise).
    NODE_OPTIONS: `--require ${JSON.stringify(PRELOAD)}`,
    ZONE_API_GUARD_LOG: join(home, 'guard.log'),
    NO_COLOR: '1',
    FORCE_COLOR: '0',
    ...extra,
  };
}

/** The guard's log of one HOME: each refused lookup or connection. */
export function guardLog(home: string): string[] {
  const file = join(home, 'guard.log');
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => (JSON.parse(l) as { what: string }).what);
}

/** Runs `node <args>` to its end (bounded by `timeoutMs`, then killed by pid): exit code and output. */
export async function runNode(args: string[], env: Record<string, string>, timeoutMs = 60_000): Promise<ClientRun> {
  const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => {
    stdout += d;
  });
  child.stderr.setEncoding('utf8').on('data', (d: string) => {
    stderr += d;
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const code = await new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)));
  clearTimeout(timer);
  if (code === null) stderr += `\n(killed after ${timeoutMs} ms)`;
  return { code, stdout, stderr, guarded: guardLog(env.HOME as string) };
}

/** Removes a client's private folder. */
export function removeHome(home: string): void {
  rmSync(home, { recursive: true, force: true });
}
