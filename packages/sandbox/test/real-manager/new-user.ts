import type { Step } from '@zone-api/testkit/differential';

// Issue 18's "tried as a new user would": a sequence of calls written for the real manager 1.570.247
// from its documentation, as a new user plays it (create a port with multiply, send traffic through it
// and its duplicate, ban and unban IPs, filter the logs after the traffic, change settings, send more
// traffic, delete the port). differential.test.ts plays it on the real manager and on the sandbox from
// the same start, as it plays a drawn sequence: after every step it compares the answers (status,
// media type, headers, body values) and the state read back through the API (stored and running ports, ban
// lists, settings, the logs under each filter, the statistics); a divergence that parity.yaml does not
// list fails with its reproduction.

const PORT = 24000;

const call = (operationId: string, method: string, path: string, value?: unknown, query: Array<[string, string]> = []): Step => ({
  kind: 'call',
  operationId,
  method,
  path,
  query,
  ...(value === undefined ? {} : { body: { encoding: 'json' as const, value } }),
  classes: query.length ? [`query:${query.map(([k]) => k).join('+')}`] : ['valid'],
});
const traffic = (port: number, path: string): Step => ({
  kind: 'traffic',
  port,
  path,
  classes: [path.startsWith('/status/') ? 'target-error' : 'plain'],
});

export const NEW_USER_SEQUENCE: Step[] = [
  call('createProxy', 'POST', '/api/proxies', { proxy: { port: PORT, multiply: 2 } }),
  traffic(PORT, '/t/1'),
  traffic(PORT + 1, '/t/2'),
  traffic(PORT, '/status/404'),
  call('banIp', 'POST', `/api/proxies/${PORT}/banip`, { ip: '10.20.30.40' }),
  call('banIps', 'POST', `/api/proxies/${PORT}/banips`, { ips: ['10.20.30.41', '10.20.30.42'] }),
  call('unbanIp', 'POST', `/api/proxies/${PORT}/unbanip`, { ip: '10.20.30.40' }),
  call('getLogs', 'GET', '/api/logs', undefined, [
    ['port_from', String(PORT)],
    ['port_to', String(PORT + 1)],
    ['status_code', '404'],
  ]),
  call('getLogs', 'GET', '/api/logs', undefined, [
    ['search', '/t/'],
    ['sort', 'url'],
  ]),
  call('updateSettings', 'PUT', '/api/settings', { logs: 500, har_limit: 2048 }),
  traffic(PORT, '/t/3'),
  call('deleteProxy', 'DELETE', `/api/proxies/${PORT}`),
];
