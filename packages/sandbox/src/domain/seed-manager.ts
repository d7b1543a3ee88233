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
    const query = url.includes('?') ? [{ name: 'q', value: 'sandbox' }] : [];
    return {
      uuid: `${(i + 1).toString(16).padStart(8, '0')}-5a4d-4b0c-9e1f-00000000${(i + 1).toString().padStart(4, '0')}`,
      startedDateTime: new Date(ts).toISOString(),
      time,
      request: {
        method: i % 5 === 4 ? 'POST' : 'GET',
        url,
        httpVersion: 'HTTP/1.1',
        cookies: [],
        headers: [
          { name: 'host', value: host },
          { name: 'user-agent', value: 'curl/8.5.0' },
        ],
        queryString: query,
        headersSize: 120,
        bodySize: i % 5 === 4 ? 64 : 0,
      },
      response: {
        status,
        statusText,
        httpVersion: 'HTTP/1.1',
        cookies: [],
        headers: [{ name: 'content-type', value: 'text/html' }],
        content: { size: inBw, mimeType: 'text/html' },
        redirectURL: status === 302 ? `https://${host}/` : '',
        headersSize: 180,
        bodySize: inBw,
      },
      cache: {},
      timings: { blocked: 0, dns: 2, connect: 12, send: 1, wait: time - 30, receive: 15, ssl: https ? 8 : -1 },
      details: {
        port,
        protocol: https ? 'https' : 'http',
        timestamp: new Date(ts).toISOString(),
        bw: inBw + outBw,
        in_bw: inBw,
        out_bw: outBw,
        proxy_peer: `198.18.0.${10 + (i % 6)}`,
        context: 'RESPONSE',
        content_type: 'html',
        success: status < 400,
        remote_address: '127.0.0.1',
      },
    };
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
      fixed_whitelist_ips: ['127.0.0.1'],
      pending_ips: [],
      pending_www_ips: [],
      read_only: false,
      config: 'zone-api-sandbox (in memory)',
      test_url: 'https://example.com/myip.json',
      logs: 1000,
      log: 'notice',
      har_limit: 1024,
      request_stats: true,
      dropin: true,
      zagent: false,
      sync_config: true,
    },
    token: null,
    token_issued: [],
    ports: [
      { port: 24000, zone: 'static_zone', proxy_type: 'persist' },
      { port: 24001, zone: 'res_zone', proxy_type: 'persist', country: 'us', rotate_session: true },
    ],
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
