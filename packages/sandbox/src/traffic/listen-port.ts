import type { ProxyPortConfig } from '../domain/types.js';

// Where a proxy port listens, as the real manager 1.570.247 decides it. Its port server takes
// `listen_port || port` (lib/server.js 106) and hands that value, as given, to Node's
// `net.Server.listen(value, iface)` (lib/server.js 656-660); the number it listens on is also the one
// its requests are logged and counted under and its sessions are named after (lib/server.js 328, 352,
// 451; lib/context.js 25; lib/session.js 53). A value Node cannot listen on (an object, a boolean, a
// number out of range, text that is no number: Node takes that for a socket path) makes the port
// listen nowhere, and the port is kept all the same (lib/mixins/mgr_proxy.js 158-166: the create goes
// on after the port's `error`). Its status check still asks `port` (lib/manager.js 636-639).

/** Node's reading of a listen argument as text (net.js `toNumber`): a number, else a socket path. */
function asNumber(text: string): number | undefined {
  const n = Number(text);
  return n >= 0 ? n : undefined;
}

/** Whether Node's `listen` takes `value` as a TCP port (net.js validatePort, zero allowed: a free port). */
function tcpPort(value: number | string): number | undefined {
  if (typeof value === 'string' && value.trim() === '') return undefined;
  const n = +value;
  return n === n >>> 0 && n <= 0xffff ? n : undefined;
}

/**
 * The TCP port a port's server listens on: its `listen_port` when set (not 0, `""`, `false`, `null`),
 * else its `port`; undefined when the value is one Node's `listen` refuses or takes for a socket path.
 * `0` (or `"0"`) is a port the system picks.
 */
export function listenPortOf(cfg: Pick<ProxyPortConfig, 'port'> & { listen_port?: unknown }): number | undefined {
  const given = cfg.listen_port || cfg.port;
  if (typeof given === 'number') return tcpPort(given);
  if (typeof given === 'string') return asNumber(given) === undefined ? undefined : tcpPort(given);
  return undefined;
}
