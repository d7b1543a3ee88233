import { type ClientRequest, request as httpRequest, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';

// A port's upstream: the external proxies it names (in turn), how it is spoken to, and its throttle.

/** Where a port sends its traffic: a proxy, spoken to over TLS when `tls` (a port's `proxy_connection_type: "https"`). */
export interface ProxyHop {
  host: string;
  port: number;
  tls?: boolean;
}

/**
 * A request to the upstream proxy `via`, in the clear or over TLS. Over TLS as the real manager speaks
 * it to its upstream with `proxy_connection_type: "https"` (lib/requester.js 12-29, lib/mixins/server_send.js
 * 271-279): TLS 1.2 (`TLSv1_2_method`) and no check of the upstream's certificate (`rejectUnauthorized: false`).
 * An upstream that does not speak TLS fails the handshake with OpenSSL's own error (`EPROTO`, "wrong version
 * number"), which the port answers as the real manager does (port-failure.ts).
 */
export function requestUpstream(via: ProxyHop, options: RequestOptions): ClientRequest {
  const to = { ...options, host: via.host, port: via.port };
  return via.tls ? httpsRequest({ ...to, rejectUnauthorized: false, minVersion: 'TLSv1.2', maxVersion: 'TLSv1.2' }) : httpRequest(to);
}

/** At most `limit` at once; the others wait their turn (a port's `throttle`). */
export class Gate {
  private active = 0;
  private readonly waiting: (() => void)[] = [];
  constructor(readonly limit: number) {}
  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.active >= this.limit) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.active++;
    try {
      return await work();
    } finally {
      this.active--;
      this.waiting.shift()?.();
    }
  }
}

export interface ExtDefaults {
  ext_proxy_username?: string;
  ext_proxy_password?: string;
  ext_proxy_port?: number;
}

/**
 * The error of the real manager's reading of an `ext_proxies` entry that is no text (lib/session.js
 * 215-217, `_url.match(…)`): each request of the port answers 502 with it, and the port's status check
 * reports it (observed on 1.570.247).
 */
export const EXT_PROXY_NOT_TEXT = '_url.match is not a function';

/**
 * An external proxy of `ext_proxies` as the real manager reads an entry (lib/session.js 82-90, 215-233):
 * a text `[scheme://][username:password@]host[:port]`, with the port's defaults. Undefined for an entry
 * that is no text (EXT_PROXY_NOT_TEXT), the documented `{proxy: "…"}` included.
 */
export function extProxy(entry: unknown, d: ExtDefaults): { host: string; port: number; authorization?: string } | undefined {
  if (typeof entry !== 'string') return undefined;
  const text = entry.replace(/^(https?|socks5?):\/\//, '');
  const at = text.lastIndexOf('@');
  const given = at >= 0 ? text.slice(0, at) : undefined;
  const [host, port] = (at >= 0 ? text.slice(at + 1) : text).split(':');
  const cred = given ?? (d.ext_proxy_username !== undefined ? `${d.ext_proxy_username}:${d.ext_proxy_password ?? ''}` : undefined);
  return {
    host: host as string,
    port: Number(port) || d.ext_proxy_port || 24000,
    ...(cred ? { authorization: `Basic ${Buffer.from(cred).toString('base64')}` } : {}),
  };
}
