import type { ManagerClient } from '../../../manager-client/src/index.js';

// One scenario per answer worth knowing: every operation's ordinary call and the bad inputs a client
// meets (unknown port, missing body, bad JSON, port in use, invalid port, wrong token, unknown Zone,
// ban/unban errors, cloud-only settings). Run in this order against the real manager and against the
// sandbox; only the last request of each scenario is recorded (earlier ones prepare its state).

export const PORT = 25100;
const SPARE = 25101;
const UNKNOWN = 25999;
export const ZONE = 'static_zone';

export interface ScenarioContext {
  /** The client as a user makes it for the target (the real program's brand, no retries). */
  client: ManagerClient;
  /** A client with a token, or a wrong one. */
  withToken: (token: string) => ManagerClient;
  /** A raw request, for what the typed client refuses to send. */
  raw: (method: string, path: string, body?: string) => Promise<unknown>;
  token?: string;
}

export interface Scenario {
  id: string;
  operationId: string;
  run: (ctx: ScenarioContext) => Promise<unknown>;
}

const json = (v: unknown) => JSON.stringify(v);

export const scenarios: Scenario[] = [
  { id: 'getVersion', operationId: 'getVersion', run: ({ client }) => client.getVersion() },
  { id: 'getNodeVersion', operationId: 'getNodeVersion', run: ({ client }) => client.getNodeVersion() },
  { id: 'getLatestVersion', operationId: 'getLatestVersion', run: ({ client }) => client.getLatestVersion() },
  {
    id: 'getNewToken',
    operationId: 'getNewToken',
    run: async (ctx) => {
      const r = await ctx.client.getNewToken();
      ctx.token = r.data?.token;
      return r;
    },
  },
  {
    id: 'addWhitelistIp',
    operationId: 'addWhitelistIp',
    run: (ctx) => ctx.withToken(ctx.token ?? 'no-token').addWhitelistIp({ body: { ip: '10.0.0.1' } }),
  },
  {
    id: 'addWhitelistIp.wrongToken',
    operationId: 'addWhitelistIp',
    run: (ctx) => ctx.withToken('wrong-token-00').addWhitelistIp({ body: { ip: '10.0.0.1' } }),
  },
  {
    id: 'addWhitelistIp.noToken',
    operationId: 'addWhitelistIp',
    run: ({ client }) => client.addWhitelistIp({ body: { ip: '10.0.0.1' } }),
  },
  {
    id: 'addWhitelistIp.noIp',
    operationId: 'addWhitelistIp',
    run: (ctx) => ctx.withToken(ctx.token ?? 'no-token').addWhitelistIp({ body: {} as { ip: string } }),
  },
  {
    id: 'addWhitelistIp.badIp',
    operationId: 'addWhitelistIp',
    run: (ctx) => ctx.withToken(ctx.token ?? 'no-token').addWhitelistIp({ body: { ip: 'not-an-ip' } }),
  },
  {
    id: 'addAdminWhitelistIp',
    operationId: 'addAdminWhitelistIp',
    run: ({ client }) => client.addAdminWhitelistIp({ body: { ip: '10.0.0.2' } }),
  },
  { id: 'addAdminWhitelistIp.noIp', operationId: 'addAdminWhitelistIp', run: ({ raw }) => raw('POST', '/api/add_whitelist_ip', '{}') },
  {
    id: 'addAdminWhitelistIp.badIp',
    operationId: 'addAdminWhitelistIp',
    run: ({ client }) => client.addAdminWhitelistIp({ body: { ip: 'nope' } }),
  },
  {
    id: 'createProxy',
    operationId: 'createProxy',
    run: ({ client }) => client.createProxy({ body: { proxy: { port: PORT, zone: ZONE, proxy_type: 'persist' } } }),
  },
  { id: 'createProxy.portInUse', operationId: 'createProxy', run: ({ client }) => client.createProxy({ body: { proxy: { port: PORT } } }) },
  {
    id: 'createProxy.portBelow1000',
    operationId: 'createProxy',
    run: ({ raw }) => raw('POST', '/api/proxies', json({ proxy: { port: 80 } })),
  },
  {
    id: 'createProxy.portNotNumber',
    operationId: 'createProxy',
    run: ({ raw }) => raw('POST', '/api/proxies', json({ proxy: { port: 'abc' } })),
  },
  { id: 'createProxy.emptyBody', operationId: 'createProxy', run: ({ raw }) => raw('POST', '/api/proxies', '{}') },
  { id: 'createProxy.badJson', operationId: 'createProxy', run: ({ raw }) => raw('POST', '/api/proxies', '{"proxy": {') },
  {
    id: 'createProxy.unknownZone',
    operationId: 'createProxy',
    run: ({ client }) => client.createProxy({ body: { proxy: { port: SPARE, zone: 'no_such_zone' } } }),
  },
  { id: 'listProxies', operationId: 'listProxies', run: ({ client }) => client.listProxies() },
  { id: 'listRunningProxies', operationId: 'listRunningProxies', run: ({ client }) => client.listRunningProxies() },
  {
    id: 'updateProxy',
    operationId: 'updateProxy',
    run: ({ client }) => client.updateProxy({ params: { path: { port: PORT } }, body: { proxy: { country: 'us' } } }),
  },
  {
    id: 'updateProxy.unknownPort',
    operationId: 'updateProxy',
    run: ({ client }) => client.updateProxy({ params: { path: { port: UNKNOWN } }, body: { proxy: { country: 'us' } } }),
  },
  { id: 'updateProxy.noProxy', operationId: 'updateProxy', run: ({ raw }) => raw('PUT', `/api/proxies/${PORT}`, '{}') },
  { id: 'getProxyStatus', operationId: 'getProxyStatus', run: ({ client }) => client.getProxyStatus({ params: { path: { port: PORT } } }) },
  {
    id: 'getProxyStatus.unknownPort',
    operationId: 'getProxyStatus',
    run: ({ client }) => client.getProxyStatus({ params: { path: { port: UNKNOWN } } }),
  },
  // Not named `getProxy`: the probe compares its own call of an operation with the scenario of the operation's
  // name, and calls this one on the sandbox's seed port, which stores only what the seed gives (no password,
  // `gb_cost` or whitelist, as a port read from a configuration file), not a port created and updated here.
  {
    id: 'getProxy.afterUpdate',
    operationId: 'getProxy',
    run: ({ client }) => client.getProxy({ params: { path: { port: PORT } } }),
  },
  { id: 'getProxy.unknownPort', operationId: 'getProxy', run: ({ client }) => client.getProxy({ params: { path: { port: UNKNOWN } } }) },
  { id: 'createProxyCopy', operationId: 'createProxyCopy', run: ({ client }) => client.createProxyCopy({ body: { port: PORT } }) },
  {
    id: 'createProxyCopy.unknownPort',
    operationId: 'createProxyCopy',
    run: ({ client }) => client.createProxyCopy({ body: { port: UNKNOWN } }),
  },
  {
    id: 'banIp',
    operationId: 'banIp',
    run: ({ client }) => client.banIp({ params: { path: { port: PORT } }, body: { ip: '10.1.1.1', ms: 600_000 } }),
  },
  { id: 'banIp.noIp', operationId: 'banIp', run: ({ raw }) => raw('POST', `/api/proxies/${PORT}/banip`, '{}') },
  {
    id: 'banIp.unknownPort',
    operationId: 'banIp',
    run: ({ client }) => client.banIp({ params: { path: { port: UNKNOWN } }, body: { ip: '10.1.1.1' } }),
  },
  {
    id: 'banIps',
    operationId: 'banIps',
    run: ({ client }) => client.banIps({ params: { path: { port: PORT } }, body: { ips: ['10.1.1.2', '10.1.1.3'], ms: 600_000 } }),
  },
  {
    id: 'unbanIp',
    operationId: 'unbanIp',
    run: ({ client }) => client.unbanIp({ params: { path: { port: PORT } }, body: { ip: '10.1.1.1' } }),
  },
  {
    id: 'unbanIp.notBanned',
    operationId: 'unbanIp',
    run: ({ client }) => client.unbanIp({ params: { path: { port: PORT } }, body: { ip: '10.9.9.9' } }),
  },
  {
    id: 'unbanIps',
    operationId: 'unbanIps',
    run: ({ client }) => client.unbanIps({ params: { path: { port: PORT } }, body: { ip: ['10.1.1.2'] } }),
  },
  { id: 'banIpAllPorts', operationId: 'banIpAllPorts', run: ({ client }) => client.banIpAllPorts({ body: { ip: '10.2.2.2' } }) },
  { id: 'getBanList', operationId: 'getBanList', run: ({ client }) => client.getBanList({ params: { path: { port: PORT } } }) },
  {
    id: 'getBanList.unknownPort',
    operationId: 'getBanList',
    run: ({ client }) => client.getBanList({ params: { path: { port: UNKNOWN }, query: { full: '1' } } }),
  },
  {
    id: 'refreshSessions',
    operationId: 'refreshSessions',
    run: ({ client }) => client.refreshSessions({ params: { path: { port: PORT } } }),
  },
  {
    id: 'getRefreshSessions',
    operationId: 'getRefreshSessions',
    run: ({ client }) => client.getRefreshSessions({ params: { path: { port: PORT } } }),
  },
  {
    id: 'refreshSessions.unknownPort',
    operationId: 'refreshSessions',
    run: ({ client }) => client.refreshSessions({ params: { path: { port: UNKNOWN } } }),
  },
  { id: 'getSettings', operationId: 'getSettings', run: ({ client }) => client.getSettings() },
  { id: 'updateSettings', operationId: 'updateSettings', run: ({ client }) => client.updateSettings({ body: { request_stats: true } }) },
  {
    id: 'updateSettings.cloudOnly',
    operationId: 'updateSettings',
    run: ({ raw }) => raw('PUT', '/api/settings', json({ logs_settings: {} })),
  },
  { id: 'listZones', operationId: 'listZones', run: ({ client }) => client.listZones() },
  { id: 'refreshZones', operationId: 'refreshZones', run: ({ client }) => client.refreshZones() },
  {
    id: 'listAllocatedIps',
    operationId: 'listAllocatedIps',
    run: ({ client }) => client.listAllocatedIps({ params: { query: { zone: ZONE } } }),
  },
  {
    id: 'listAllocatedVips',
    operationId: 'listAllocatedVips',
    run: ({ client }) => client.listAllocatedVips({ params: { query: { zone: 'res_zone' } } }),
  },
  {
    id: 'refreshIps',
    operationId: 'refreshIps',
    // An IP the Zone holds where the target can list them (the sandbox); the real manager asks its cloud for both.
    run: async ({ client }) => {
      const held = (await client.listAllocatedIps({ params: { query: { zone: ZONE } } })).data?.ips?.[0];
      return client.refreshIps({ body: { zone: ZONE, ips: [typeof held === 'string' ? held : '198.51.100.5'] } });
    },
  },
  {
    id: 'refreshIps.notArray',
    operationId: 'refreshIps',
    run: ({ raw }) => raw('POST', '/api/refresh_ips', json({ zone: ZONE, ips: '1.2.3.4' })),
  },
  { id: 'enableSsl', operationId: 'enableSsl', run: ({ client }) => client.enableSsl() },
  { id: 'listUsers', operationId: 'listUsers', run: ({ client }) => client.listUsers() },
  { id: 'addUser', operationId: 'addUser', run: ({ client }) => client.addUser({ body: { email: 'user@example.com' } }) },
  { id: 'getGeneralLogs', operationId: 'getGeneralLogs', run: ({ client }) => client.getGeneralLogs({ params: { query: { limit: 5 } } }) },
  { id: 'getLogs', operationId: 'getLogs', run: ({ client }) => client.getLogs() },
  { id: 'getRecentStats', operationId: 'getRecentStats', run: ({ client }) => client.getRecentStats() },
  // The routes of the real manager's own web interface (tag "Web interface").
  { id: 'getMode', operationId: 'getMode', run: ({ client }) => client.getMode() },
  { id: 'getConnection', operationId: 'getConnection', run: ({ client }) => client.getConnection() },
  { id: 'getDefaults', operationId: 'getDefaults', run: ({ client }) => client.getDefaults() },
  { id: 'getConsts', operationId: 'getConsts', run: ({ client }) => client.getConsts() },
  { id: 'getTlsWarning', operationId: 'getTlsWarning', run: ({ client }) => client.getTlsWarning() },
  { id: 'getLogsSuggestions', operationId: 'getLogsSuggestions', run: ({ client }) => client.getLogsSuggestions() },
  { id: 'getAllLocations', operationId: 'getAllLocations', run: ({ client }) => client.getAllLocations() },
  { id: 'getAllCarriers', operationId: 'getAllCarriers', run: ({ client }) => client.getAllCarriers() },
  { id: 'getLanguageResources', operationId: 'getLanguageResources', run: ({ client }) => client.getLanguageResources() },
  { id: 'getSessions', operationId: 'getSessions', run: ({ client }) => client.getSessions({ params: { path: { port: PORT } } }) },
  {
    id: 'getSessions.unknownPort',
    operationId: 'getSessions',
    run: ({ client }) => client.getSessions({ params: { path: { port: UNKNOWN } } }),
  },
  {
    id: 'changeProxyIps',
    operationId: 'changeProxyIps',
    run: ({ client }) => client.changeProxyIps({ body: { port: PORT, ips: ['192.0.2.21'] } }),
  },
  { id: 'resetLogs', operationId: 'resetLogs', run: ({ client }) => client.resetLogs() },
  { id: 'getLogsReset', operationId: 'getLogsReset', run: ({ client }) => client.getLogsReset() },
  {
    id: 'createErrorReport',
    operationId: 'createErrorReport',
    run: ({ client }) => client.createErrorReport({ body: { type: 'fe_error', message: 'render failed' } }),
  },
  {
    id: 'deleteProxies.unknownPort',
    operationId: 'deleteProxies',
    run: ({ client }) => client.deleteProxies({ body: { ports: [UNKNOWN] } }),
  },
  {
    id: 'deleteProxies',
    operationId: 'deleteProxies',
    run: async ({ client }) => {
      await client.createProxy({ body: { proxy: { port: SPARE, zone: ZONE, proxy_type: 'persist' } } });
      return client.deleteProxies({ body: { ports: [SPARE] } });
    },
  },
  {
    id: 'deleteProxy.unknownPort',
    operationId: 'deleteProxy',
    run: ({ client }) => client.deleteProxy({ params: { path: { port: UNKNOWN } } }),
  },
  { id: 'deleteProxy', operationId: 'deleteProxy', run: ({ client }) => client.deleteProxy({ params: { path: { port: PORT } } }) },
  {
    // Over the real manager's body limit (its api_body_limit, 2 MB by default).
    id: 'createProxy.bodyTooLarge',
    operationId: 'createProxy',
    run: ({ raw }) => raw('POST', '/api/proxies', json({ proxy: { port: SPARE, zone: ZONE, note: 'x'.repeat(3 * 1024 * 1024) } })),
  },
  { id: 'upgradeManager', operationId: 'upgradeManager', run: ({ client }) => client.upgradeManager() },
  { id: 'restartManager', operationId: 'restartManager', run: ({ client }) => client.restartManager() },
  { id: 'shutdownManager', operationId: 'shutdownManager', run: ({ client }) => client.shutdownManager() },
];
