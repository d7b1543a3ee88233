import { PROVIDER_TEST_URL } from '../shared/brand.js';
import { harEntry } from './har.js';
import { lcg, SEED } from './seed-ids.js';
import type { HarEntry, StateData } from './types.js';

// The manager's part of the built-in seed: its version and releases, settings, two ports, a user, and
// HAR logs of past requests.

function har(): HarEntry[] {
  const rnd = lcg(23);
  const hosts = ['example.com', 'example.org', 'api.example.net'];
  const statuses: Array<[number, string]> = [
    [200, 'OK'],
    [200, 'OK'],
    [204, 'No Content'],
    [302, 'Found'],
    [404, 'Not Found'],
    [502, 'Bad Gateway'],
  ];
  const start = Date.parse('2024-05-02T12:00:00.000Z');
  return Array.from({ length: 40 }, (_, i) => {
    const port = 24000 + (i % 3);
    const host = hosts[i % hosts.length] as string;
    const https = i % 2 === 0;
    const url = `${https ? 'https' : 'http'}://${host}/${['', 'item/42', 'search?q=sandbox', 'api/v1/status'][i % 4]}`;
    const [status, statusText] = statuses[Math.floor(rnd() * statuses.length)] as [number, string];
    const time = 50 + Math.floor(rnd() * 900);
    const inBw = 200 + Math.floor(rnd() * 20_000);
    const outBw = 100 + Math.floor(rnd() * 800);
    const ts = start + i * 60_000;
    const post = i % 5 === 4;
    const uuid = `${(i + 1).toString(16).padStart(8, '0')}-5a4d-4b0c-9e1f-00000000${(i + 1).toString().padStart(4, '0')}`;
    const session = `${port}_${i % 4}`;
    return harEntry(
      {
        port,
        started: ts,
        time,
        method: post ? 'POST' : 'GET',
        url,
        requestHeaders: { host, 'user-agent': 'curl/8.5.0', ...(post ? { 'content-type': 'application/json' } : {}) },
        requestBody: Buffer.from(post ? JSON.stringify({ q: 'sandbox', page: i }) : ''),
        status,
        statusText,
        responseHeaders: { 'content-type': 'text/html' },
        responseBody: Buffer.from(status === 204 ? '' : `<!doctype html><title>${statusText}</title>`),
        inBw,
        outBw,
        peer: `198.18.0.${10 + (i % 6)}`,
        upstream: '127.0.0.1:22225',
        username: `brd-customer-${SEED.customer}-zone-static_zone-session-${session}`,
        session,
        answered: time - 15,
        clientIp: '127.0.0.1',
        protocol: https ? 'https' : 'http',
        harLimit: 1024,
      },
      uuid,
    );
  });
}

export function managerSeed(): StateData['manager'] {
  return {
    version: '1.570.247',
    releases: [
      {
        ver: '1.571.3',
        type: 'stable',
        changes: [
          { type: 'star', text: 'Faster HAR log search' },
          { type: 'bug_fix', text: 'Ports keep their whitelist after a move' },
        ],
      },
      { ver: '1.570.247', type: 'stable', changes: [{ type: 'bug_fix', text: 'Session refresh keeps the port numbering' }] },
    ],
    settings: {
      customer: SEED.customer,
      zone: 'static_zone',
      password: SEED.zones.static_zone,
      www_whitelist_ips: [],
      whitelist_ips: [],
      // As a real manager started without `--whitelist_ips`: none (127.0.0.1 is let through anyway).
      fixed_whitelist_ips: [],
      pending_ips: [],
      pending_www_ips: [],
      read_only: false,
      config: 'zone-api-sandbox (in memory)',
      test_url: PROVIDER_TEST_URL,
      logs: 1000,
      log: 'notice',
      har_limit: 1024,
      request_stats: true,
      dropin: true,
      zagent: false,
      sync_config: false,
    },
    token: null,
    token_issued: [],
    ports: [
      { port: 24000, zone: 'static_zone', proxy_type: 'persist' },
      { port: 24001, zone: 'res_zone', proxy_type: 'persist', country: 'us', rotate_session: true },
    ],
    // The ban that the spec's unbanIp example lifts (port 24000, 192.0.2.10 for example.com).
    bans: [{ port: 24000, ip: '192.0.2.10', domain: 'example.com', to: 0 }],
    sessions: {},
    users: [{ email: 'admin@example.com', password: 'sandbox-pm-0001' }],
    har: har(),
    general_log: [
      'NOTICE:Manager: Proxy Manager 1.570.247 starting',
      'NOTICE:Manager: Port 24000 ready (static_zone)',
      'NOTICE:Manager: Port 24001 ready (res_zone)',
    ],
  };
}
