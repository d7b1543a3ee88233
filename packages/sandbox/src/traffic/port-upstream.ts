import { RequestError } from 'proxy-chain';
import { PORT_DEFAULTS } from '../domain/port-defaults.js';
import { NETWORK_REALM, PEER_IP_HEADERS } from '../shared/brand.js';
import type { PortRequest } from './port-context.js';
import { portError, UpstreamFailure } from './port-failure.js';

// A port's request or tunnel sent through its upstream (see port-request.ts): the session's credentials,
// once more while the upstream cannot be reached, a new session while the exit peer is banned; what the
// upstream's answer names (its exit peer, its connection headers).

/**
 * Runs `send` with the port's session, once while the upstream cannot be reached (UpstreamFailure,
 * whatever `proxy_retry` says, as the real manager), and again with a new session while the exit peer it
 * names is banned for the port and the target's host (up to `max_ban_retries`, then 502 Too many banned IPs). `drop` lets go of
 * an answer that is not used. `checkBans: false` takes the first answer whatever its peer (a tunnel the
 * port does not open, as the real manager).
 */
export async function throughUpstream<T>(
  ctx: PortRequest,
  target: { host: string; authority: string },
  send: (session: string) => Promise<T>,
  peerOf: (answer: T) => string | null,
  drop: (answer: T) => void,
  checkBans = true,
): Promise<{ answer: T; peer: string | null; session: string }> {
  const { store, cfg, port, session, now, gate } = ctx;
  const { host } = target;
  const retries = cfg.max_ban_retries ?? PORT_DEFAULTS.max_ban_retries;
  /** One attempt through the upstream; one that cannot reach it is not sent again, whatever `proxy_retry` says (UpstreamFailure). */
  const attemptOnce = async (current: string) => {
    try {
      return await (gate ? gate.run(() => send(current)) : send(current));
    } catch (err) {
      // An answer already (a body that cannot be sent again).
      if (err instanceof RequestError) throw err;
      const code = (err as NodeJS.ErrnoException).code ?? 'error';
      // The target's TLS (or a tunnel the upstream refused) is not the upstream failing.
      if (/TLS|CERT|ETUNNEL|SELF_SIGNED|UNABLE_TO/.test(code))
        throw portError(502, `The HTTPS target ${target.authority} failed: ${code} (${(err as Error).message})`);
      throw new UpstreamFailure((err as Error).message || code);
    }
  };
  let current = session;
  for (let attempt = 0; ; attempt++) {
    const answer = await attemptOnce(current);
    const peer = peerOf(answer);
    const banned =
      checkBans && peer !== null && store.activeBans(port, now()).some((b) => b.ip === peer && (b.domain === null || b.domain === host));
    if (!banned) return { answer, peer, session: current };
    drop(answer);
    if (attempt >= retries) throw portError(502, 'Too many banned IPs');
    current = `${session}_b${attempt + 1}`;
  }
}

/** The upstream username of a session: an external proxy's own, else the port's login. */
export function upstreamUser(ctx: PortRequest, session: string): string {
  const own = ctx.upstream.authorization?.replace(/^Basic /, '');
  if (own) return Buffer.from(own, 'base64').toString('utf8').split(':')[0] ?? '';
  return ctx.login(session).username;
}

/** The upstream `Proxy-Authorization` of a session: an external proxy's own, else the port's login. */
export function authorization(ctx: PortRequest, session: string): string {
  if (ctx.upstream.authorization) return ctx.upstream.authorization;
  const { username, password } = ctx.login(session);
  return `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
}

/** The exit peer an upstream's answer names, if any (PEER_IP_HEADERS: the real manager reads either). */
export function peerOf(headers: Record<string, string | string[] | undefined> | undefined): string | null {
  for (const name of PEER_IP_HEADERS) {
    const value = [headers?.[name]].flat()[0];
    if (value) return value;
  }
  return null;
}

/**
 * An answer of the sandbox's own network reached in process, with the connection headers the network
 * writes over TCP to a port that keeps its connection open, as the real manager's keep-alive connection
 * to its upstream gets them: Node's `keep-alive` (5 s), or `close` after a refusal of the network (its
 * `server` header), or a request that asked for `close` (`closes`: the real manager sends on a client's
 * `connection` spelled so, logged-headers.ts), which end the connection.
 */
export async function keptAlive<T extends { rawHeaders: string[]; headers: Record<string, string> }>(
  answer: Promise<T>,
  closes = false,
): Promise<T> {
  const a = await answer;
  const refused = closes || a.headers.server === NETWORK_REALM;
  const kept: string[] = [];
  for (let i = 0; i + 1 < a.rawHeaders.length; i += 2)
    if (!/^(connection|keep-alive)$/i.test(a.rawHeaders[i] as string)) kept.push(a.rawHeaders[i] as string, a.rawHeaders[i + 1] as string);
  return { ...a, rawHeaders: [...kept, ...(refused ? ['connection', 'close'] : ['connection', 'keep-alive', 'keep-alive', 'timeout=5'])] };
}

/** The `connection` and `keep-alive` headers of an upstream's answer, names in lower case, as it sent them. */
export function connectionHeaders(res: { rawHeaders: string[] }): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i + 1 < res.rawHeaders.length; i += 2) {
    const name = (res.rawHeaders[i] as string).toLowerCase();
    if (name === 'connection' || name === 'keep-alive') out[name] = res.rawHeaders[i + 1] as string;
  }
  return out;
}
