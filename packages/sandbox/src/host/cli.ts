#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { isLoopbackHost } from '../control/control.js';
import { defaultSeed, SEED } from '../domain/seed.js';
import { LEGACY_BRAND } from '../shared/brand.js';
import { DEFAULT_NETWORK_PORT } from '../traffic/index.js';
import { DEFAULT_ACCOUNT_PORT, DEFAULT_HOST, DEFAULT_MANAGER_PORT, startSandbox } from './sandbox.js';

const HELP = `zone-api-sandbox: the account API and the proxy manager API, stateful, on loopback

Usage: zone-api-sandbox [options]

  --account-port N   account API port (env ZONE_API_SANDBOX_ACCOUNT_PORT, default ${DEFAULT_ACCOUNT_PORT}; 0 = free port)
  --manager-port N   manager API port (env ZONE_API_SANDBOX_MANAGER_PORT, default ${DEFAULT_MANAGER_PORT}; 0 = free port)
  --host HOST        interface (env ZONE_API_SANDBOX_HOST, default ${DEFAULT_HOST}); beyond loopback the
                     control endpoints need a token (env ZONE_API_SANDBOX_CONTROL_TOKEN, else a random
                     one, printed in the banner)
  --data FILE        keep the state in FILE across restarts (env ZONE_API_SANDBOX_DATA; default: memory):
                     a snapshot and FILE.journal; each change is written before its answer
  --fsync WHEN       with --data: interval (default; fsync once a second, a change survives the process
                     being killed) or always (fsync before each answer, survives a power loss too)
                     (env ZONE_API_SANDBOX_FSYNC)
  --seed FILE        start from this seed instead of the built-in one (env ZONE_API_SANDBOX_SEED)
  --spec-dir DIR     read the bundles from DIR (env ZONE_API_SANDBOX_SPEC_DIR; default: @zone-api/spec)
  --network-port N   the emulated proxy network (the provider's super proxy) on port N (env
                     ZONE_API_SANDBOX_NETWORK_PORT, default ${DEFAULT_NETWORK_PORT}, the real upstream's; 0 = free port)
  --free-ports       every listener on a free port (env ZONE_API_SANDBOX_FREE_PORTS=1): both APIs, the
                     network, and the seed's proxy ports, moved to free ones; the banner prints each
                     port, and the state holds the new numbers (for sandboxes side by side in CI)
  --proxy HOST       the proxy ports' upstream, manager-wide, as the real manager's --proxy (env
                     ZONE_API_SANDBOX_PROXY; default: the network); a port's own proxy is stored, not followed
  --proxy-port N     its port, as the real manager's --proxy_port (env ZONE_API_SANDBOX_PROXY_PORT, default ${DEFAULT_NETWORK_PORT})
  --no-proxy-ports   manager proxy ports do not listen (default: each port of the state is an HTTP proxy
                     on its iface, loopback by default, forwarding through the network)
  --no-traffic       neither the network nor listening ports (env ZONE_API_SANDBOX_TRAFFIC=off)
  --egress-allow L   targets beyond loopback that traffic may reach, comma-separated: *, host names,
                     .domain suffixes, IPs, ranges, subnets (env ZONE_API_SANDBOX_EGRESS_ALLOW; default
                     none: traffic stays on this machine's loopback); \`loopback\` also opens loopback
                     targets to clients from beyond loopback (with --host), who are refused them otherwise
  --target-ca FILE   CA certificates (PEM) the network trusts for HTTPS targets beside the system's
                     (env ZONE_API_SANDBOX_TARGET_CA), e.g. a local HTTPS service's own CA
  --print-seed       print the built-in seed as JSON (a starting point for --seed) and exit
  --answer-forms F   the account API's answers where the seed documentation and the provider's API
                     reference disagree: live (default; the reference's forms, which live clients read:
                     route_ips one IP per line, a Zone's ips an array) or seed (a range, a summary string)
                     (env ZONE_API_SANDBOX_ANSWER_FORMS)
  --strict           refuse request fields the provider's documentation does not name (default: accept, ignore and list them
                     in the X-Sandbox-Ignored-Fields response header) and a proxy port created for a
                     Zone the account does not have (the real manager creates it)
  --exit-on-shutdown let POST /api/shutdown of the manager end this process (default: simulated only)
  --log              log every request (fastify's logger; slower)
  -h, --help         this text
`;

function port(value: string | undefined, name: string, fallback: number): number {
  if (value === undefined || value === '') return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new Error(`${name} must be a port number (0-65535), not ${value}`);
  return n;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      'account-port': { type: 'string' },
      'manager-port': { type: 'string' },
      host: { type: 'string' },
      data: { type: 'string' },
      fsync: { type: 'string' },
      seed: { type: 'string' },
      'spec-dir': { type: 'string' },
      'print-seed': { type: 'boolean' },
      'answer-forms': { type: 'string' },
      'network-port': { type: 'string' },
      proxy: { type: 'string' },
      'proxy-port': { type: 'string' },
      'no-proxy-ports': { type: 'boolean' },
      'free-ports': { type: 'boolean' },
      'no-traffic': { type: 'boolean' },
      'egress-allow': { type: 'string' },
      'target-ca': { type: 'string' },
      'exit-on-shutdown': { type: 'boolean' },
      strict: { type: 'boolean' },
      log: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(HELP);
    return;
  }
  if (values['print-seed']) {
    process.stdout.write(`${JSON.stringify(defaultSeed(), null, 2)}\n`);
    return;
  }
  const env = process.env;
  // --free-ports: every port not given explicitly is a free one.
  const free = values['free-ports'] === true || env.ZONE_API_SANDBOX_FREE_PORTS === '1';
  const accountPort = port(values['account-port'] ?? env.ZONE_API_SANDBOX_ACCOUNT_PORT, '--account-port', free ? 0 : DEFAULT_ACCOUNT_PORT);
  const managerPort = port(values['manager-port'] ?? env.ZONE_API_SANDBOX_MANAGER_PORT, '--manager-port', free ? 0 : DEFAULT_MANAGER_PORT);
  const traffic = !(values['no-traffic'] || env.ZONE_API_SANDBOX_TRAFFIC === 'off');
  const networkPort = port(values['network-port'] ?? env.ZONE_API_SANDBOX_NETWORK_PORT, '--network-port', free ? 0 : DEFAULT_NETWORK_PORT);
  const upstreamHost = values.proxy ?? env.ZONE_API_SANDBOX_PROXY;
  const upstreamPort = values['proxy-port'] ?? env.ZONE_API_SANDBOX_PROXY_PORT;
  if (upstreamPort !== undefined && !upstreamHost) throw new Error('--proxy-port needs --proxy (the upstream host)');
  const upstream = upstreamHost ? { host: upstreamHost, port: port(upstreamPort, '--proxy-port', DEFAULT_NETWORK_PORT) } : undefined;
  const egressAllow = (values['egress-allow'] ?? env.ZONE_API_SANDBOX_EGRESS_ALLOW ?? '')
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean);
  const targetCaFile = values['target-ca'] ?? env.ZONE_API_SANDBOX_TARGET_CA;
  const fsync = values.fsync ?? env.ZONE_API_SANDBOX_FSYNC ?? 'interval';
  if (fsync !== 'always' && fsync !== 'interval') throw new Error(`--fsync must be always or interval, not ${JSON.stringify(fsync)}`);
  const answerForms = values['answer-forms'] ?? env.ZONE_API_SANDBOX_ANSWER_FORMS;
  if (answerForms !== undefined && answerForms !== 'live' && answerForms !== 'seed')
    throw new Error(`--answer-forms must be live or seed, not ${JSON.stringify(answerForms)}`);
  let stopping = false;
  const sandbox = await startSandbox({
    host: values.host ?? env.ZONE_API_SANDBOX_HOST ?? DEFAULT_HOST,
    controlToken: env.ZONE_API_SANDBOX_CONTROL_TOKEN,
    accountPort,
    managerPort,
    dataFile: values.data ?? env.ZONE_API_SANDBOX_DATA,
    fsync,
    seed: values.seed ?? env.ZONE_API_SANDBOX_SEED,
    specDir: values['spec-dir'] ?? env.ZONE_API_SANDBOX_SPEC_DIR,
    strict: values.strict === true,
    ...(answerForms ? { answerForms } : {}),
    logger: values.log === true,
    argv: process.argv.slice(2).join(' '),
    ...(traffic ? { networkPort, proxyPorts: !values['no-proxy-ports'], freeProxyPorts: free, ...(upstream ? { upstream } : {}) } : {}),
    egressAllow,
    ...(targetCaFile ? { targetCa: [readFileSync(targetCaFile, 'utf8')] } : {}),
    onShutdown: values['exit-on-shutdown'] ? () => void stop('POST /api/shutdown') : undefined,
  });
  // Before the banner: a caller that stops the sandbox as soon as it reads the banner gets a clean stop.
  process.once('SIGINT', () => void stop('SIGINT'));
  process.once('SIGTERM', () => void stop('SIGTERM'));
  const c = sandbox.credentials;
  // Only the built-in seed's credentials are printed: they are public, documented fixtures. Credentials
  // from a user's seed or data file are never logged; they are in that file (or GET /__sandbox/state).
  const fixtures = new Set<string>([SEED.token, SEED.limitedToken, SEED.basic.password, ...Object.values(SEED.zones)]);
  const shown = (secret: string) => (fixtures.has(secret) ? secret : '<from your seed>');
  const zones = Object.entries(c.zones)
    .map(([zone, pw]) => `${zone}:${shown(pw[0] ?? '')}`)
    .join('  ');
  const host = values.host ?? env.ZONE_API_SANDBOX_HOST ?? DEFAULT_HOST;
  const beyondLoopback = !isLoopbackHost(host);
  process.stdout.write(
    [
      'zone-api sandbox ready',
      ...(beyondLoopback
        ? [
            `  WARNING      listening on ${host}, beyond loopback: anyone who can reach this machine can use both APIs;`,
            '               the control endpoints need the token below. Bound as:',
            `               account ${host.includes(':') ? `[${host}]` : host}:${new URL(sandbox.accountUrl).port}, manager ${host.includes(':') ? `[${host}]` : host}:${new URL(sandbox.managerUrl).port}`,
          ]
        : []),
      `  account API  ${sandbox.accountUrl}   Authorization: Bearer ${shown(c.token)}   customer ${c.customer}`,
      `  manager API  ${sandbox.managerUrl}`,
      ...(sandbox.networkUrl
        ? [
            `  network      ${sandbox.networkUrl}   proxy user ${LEGACY_BRAND}-customer-${c.customer}-zone-<ZONE>[-session-<ID>], password: the Zone's`,
            `               curl -x ${sandbox.networkUrl} -U ${LEGACY_BRAND}-customer-${c.customer}-zone-dc_zone_2:<password> http://127.0.0.1:<port>/`,
          ]
        : ['  network      off (--network-port N starts the emulated proxy network)']),
      `  proxy ports  ${traffic && !values['no-proxy-ports'] ? `${sandbox.listeningPorts().join(' ') || '(none yet)'} listening; created ports listen too` : 'not listening (--no-proxy-ports / --no-traffic)'}`,
      ...(free && traffic && !values['no-proxy-ports'] && Object.keys(sandbox.ports.proxy).length
        ? [
            `               seed port -> port: ${Object.entries(sandbox.ports.proxy)
              .map(([from, to]) => `${from}->${to}`)
              .join(' ')}`,
          ]
        : []),
      `  ports        ${JSON.stringify(sandbox.ports)}`,
      `  egress       ${egressAllow.length ? `loopback and ${egressAllow.join(', ')}` : 'loopback only (--egress-allow widens it)'}`,
      ...(beyondLoopback
        ? [
            egressAllow.some((e) => e.toLowerCase() === 'loopback')
              ? "               loopback open to clients from beyond loopback too (--egress-allow names it): they reach this machine's own services"
              : '               loopback, for clients on this machine only (a client from beyond loopback is refused loopback targets unless --egress-allow names loopback)',
          ]
        : []),
      `  basic        ${c.basic.map((b) => `${b.username}:${shown(b.password)}`).join('  ') || '(none)'}   (deprecated scheme)`,
      `  zones        ${zones}`,
      `  requests     ${values.strict ? 'strict: fields the documentation does not name are refused (400)' : 'lenient: fields the documentation does not name are ignored and listed in X-Sandbox-Ignored-Fields (--strict refuses them)'}`,
      `  state        ${sandbox.dataFile ? `kept in ${sandbox.dataFile}` : 'in memory (use --data FILE to keep it)'}`,
      '  control      GET /__sandbox/state, POST /__sandbox/reset, GET|POST|DELETE /__sandbox/faults, GET|POST|DELETE /__sandbox/clock,',
      '               GET /__sandbox/ca (the CA of ssl: true ports; on both ports)',
      ...(sandbox.controlToken ? [`               with header X-Sandbox-Control-Token: ${sandbox.controlToken}`] : []),
      '',
    ].join('\n'),
  );

  async function stop(why: string): Promise<void> {
    if (stopping) return;
    stopping = true;
    process.stdout.write(`zone-api sandbox stopping (${why})\n`);
    try {
      await sandbox.close();
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      process.stderr.write(
        `zone-api sandbox: the final save to ${sandbox.dataFile} failed (${e.code ?? e.message}); the last changes are not on disk\n`,
      );
      process.exit(1);
    }
    process.exit(0);
  }
}

main().catch((err: Error) => {
  process.stderr.write(`zone-api sandbox: ${err.message}\n`);
  process.exit(1);
});
