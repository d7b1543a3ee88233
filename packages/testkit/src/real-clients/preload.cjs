// Loaded into every real client's process (`NODE_OPTIONS=--require …`) by the real-clients suite:
// - sends undici's requests (the SDK's, and Node's own fetch, which the CLI uses) through the test's
//   forward proxy named in HTTPS_PROXY, as undici does not read that variable itself; axios (the MCP
//   server) reads HTTPS_PROXY on its own;
// - refuses, loudly, every DNS lookup and every TCP connection that is not to loopback: the message goes
//   to stderr and, as one JSON line, to the file named by ZONE_API_GUARD_LOG, which the test reads.
// The suite also runs inside a network namespace with only loopback: this guard makes an attempt to
// leave visible instead of a timeout.
'use strict';
const dns = require('node:dns');
const fs = require('node:fs');
const net = require('node:net');

const logFile = process.env.ZONE_API_GUARD_LOG;
const isLoopback = (host) =>
  host === 'localhost' || (net.isIPv4(host) && host.startsWith('127.')) || host === '::1' || host === '::ffff:127.0.0.1';

function refusal(what, code) {
  const message = `zone-api real-clients guard: refused ${what} (only loopback is allowed)`;
  process.stderr.write(`${message}\n`);
  if (logFile) fs.appendFileSync(logFile, `${JSON.stringify({ pid: process.pid, what })}\n`);
  return Object.assign(new Error(message), { code });
}

const lookup = dns.lookup;
dns.lookup = function guardedLookup(hostname, ...rest) {
  const cb = rest.at(-1);
  if (!isLoopback(String(hostname))) {
    process.nextTick(cb, refusal(`a DNS lookup of ${hostname}`, 'ENOTFOUND'));
    return {};
  }
  return lookup.call(this, hostname, ...rest);
};
const promisesLookup = dns.promises.lookup;
dns.promises.lookup = function guardedPromisesLookup(hostname, ...rest) {
  if (!isLoopback(String(hostname))) return Promise.reject(refusal(`a DNS lookup of ${hostname}`, 'ENOTFOUND'));
  return promisesLookup.call(this, hostname, ...rest);
};
for (const name of ['resolve', 'resolve4', 'resolve6', 'resolveAny']) {
  dns[name] = (hostname, ...rest) => {
    const cb = rest.at(-1);
    if (typeof cb === 'function') process.nextTick(cb, refusal(`a DNS query for ${hostname}`, 'ENOTFOUND'));
  };
}

/** host and port of Socket#connect's argument forms: (options), (port, host), (path), and net's internal [options, cb]. */
function target(args) {
  let first = args[0];
  if (Array.isArray(first)) first = first[0];
  if (first && typeof first === 'object') return first.path ? undefined : { host: first.host ?? 'localhost', port: first.port };
  if (typeof first === 'string' && !/^\d+$/.test(first)) return undefined; // a unix socket path
  return { host: typeof args[1] === 'string' ? args[1] : 'localhost', port: first };
}

const connect = net.Socket.prototype.connect;
net.Socket.prototype.connect = function guardedConnect(...args) {
  const t = target(args);
  if (t && !isLoopback(String(t.host))) {
    const err = refusal(`a connection to ${t.host}:${t.port}`, 'ECONNREFUSED');
    process.nextTick(() => this.destroy(err));
    return this;
  }
  return connect.apply(this, args);
};

const proxy = process.env.HTTPS_PROXY || process.env.https_proxy;
if (proxy) {
  const { ProxyAgent, setGlobalDispatcher } = require('undici');
  setGlobalDispatcher(new ProxyAgent(proxy));
}
