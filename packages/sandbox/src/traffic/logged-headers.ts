import type { IncomingMessage } from 'node:http';
import { PORT_ROUTE_HEADER } from '../shared/brand.js';
import { CONTROL_HEADERS } from './control-headers.js';

// The headers a port's log entry names, as the real manager 1.570.247 logs them (compared in
// test/real-manager/log-values.test.ts): the request's as the client spelled them, its hop-by-hop ones
// kept, with the `Connection` the real manager writes over them; the answer's as its upstream sent them,
// in name order.

type Headers = Record<string, string | string[] | undefined>;

/**
 * Each header under the first spelling of its name, raw (the client's) spellings first, then the
 * object's; its value the first non-empty one among those spellings in that order; a name with none is
 * left out. The real manager's restore_case (util/takeup_util.js 9-34, used at lib/context.js 143).
 */
function spelledAsSent(headers: Headers, raw: readonly string[]): Record<string, string | string[]> {
  const spellings = new Map<string, string[]>();
  const add = (name: string) => {
    const key = name.toLowerCase();
    const seen = spellings.get(key);
    if (seen) seen.push(name);
    else spellings.set(key, [name]);
  };
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i] as string;
    // A later raw spelling of a name replaces an earlier one, in the earlier one's place.
    spellings.set(name.toLowerCase(), [name]);
  }
  for (const name of Object.keys(headers)) add(name);
  const out: Record<string, string | string[]> = {};
  for (const names of spellings.values()) {
    const value = names.map((n) => headers[n]).find((v) => (Array.isArray(v) ? v.length > 0 : Boolean(v)));
    if (value !== undefined) out[names[0] as string] = value;
  }
  return out;
}

/**
 * A request's headers as the real manager logs them: its own headers taken off (lib/context.js 13-15 and
 * 134-139: `proxy-authorization` among them), `Connection: keep-alive` set beside the client's own
 * `connection` (lib/context.js 131-133: under that spelling, so a client's `Connection` reads
 * `keep-alive` and a client's `connection` keeps its value), the port's `headers` set over them
 * (lib/server.js 966-975, before the log's copy, lib/server.js 816-818), then every name spelled as the
 * client sent it. The hop-by-hop ones stay: the real manager logs them (`Proxy-Connection`, `Keep-Alive`).
 */
export function loggedRequestHeaders(
  req: Pick<IncomingMessage, 'headers' | 'rawHeaders' | 'method'>,
  portHeaders: readonly { name: string; value: string }[] = [],
): Record<string, string | string[]> {
  const headers: Headers = { ...req.headers };
  for (const name of [...CONTROL_HEADERS, 'proxy-authorization', PORT_ROUTE_HEADER]) delete headers[name];
  const upgrade = req.method === 'GET' && req.headers.upgrade === 'websocket';
  headers.Connection = upgrade ? 'keep-alive,upgrade' : 'keep-alive';
  for (const h of portHeaders) headers[h.name] = h.value;
  const ua = portHeaders.find((h) => h.name.toLowerCase() === 'user-agent' && h.value);
  if (ua) headers['user-agent'] = ua.value;
  return spelledAsSent(headers, req.rawHeaders);
}

/**
 * An upstream's answer headers as the real manager logs them: all it sent, `connection`, `keep-alive` and
 * `transfer-encoding` among them, names in lower case (node's), stored through json-stable-stringify and
 * so in name order (lib/server.js 11 and 456).
 */
export function loggedAnswerHeaders(rawHeaders: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const name = (rawHeaders[i] as string).toLowerCase();
    const value = rawHeaders[i + 1] as string;
    out[name] = name in out ? `${out[name]}, ${value}` : value;
  }
  return out;
}
