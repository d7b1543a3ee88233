import { describe, expect, it } from 'vitest';
import { MANAGER_BUILT_INS } from '../../src/manager/manager-options.js';
import { RES, type Rec, raw, useTrafficSandbox } from '../helpers.js';

// The manager's built-in values have one home (manager-options.ts MANAGER_BUILT_INS): `GET /api/settings`,
// `GET /api/defaults` and a create's complete configuration read them there, and show the port of the
// manager's upstream as the real manager does (mgr_config.js 41-45: the one it runs with).
const t = useTrafficSandbox();

describe("the manager's built-in values", () => {
  it("settings, defaults and a create's {data} answer the same values, and the upstream's port is the sandbox's network", async () => {
    const get = async (path: string) => {
      const r = await raw(t.sandbox.managerUrl, 'GET', path);
      expect(r.status, path).toBe(200);
      return r.json();
    };
    const settings = await get('/api/settings');
    const defaults = await get('/api/defaults');
    const created = await raw(t.sandbox.managerUrl, 'POST', '/api/proxies', { body: { proxy: { zone: RES } } });
    expect(created.status).toBe(200);
    const data = (created.json() as { data: Rec }).data;
    const network = Number(new URL(t.sandbox.networkUrl as string).port);
    expect(network).toBeGreaterThan(0);
    const shared = ['debug', 'lpm_auth', 'reseller', 'new_ui', 'socket_inactivity_timeout', 'logs_settings', 'proxy_port'];
    for (const key of shared) {
      expect(settings[key], key).toBeDefined();
      expect(settings[key], key).toEqual(defaults[key]);
    }
    for (const [key, value] of Object.entries(MANAGER_BUILT_INS)) expect(settings[key], key).toBe(value);
    expect(data.av_server).toBe(settings.av_server);
    expect(data.reseller).toBe(settings.reseller);
    // The port the manager runs its upstream on: the sandbox's network here, not the built-in 22225.
    expect(settings.proxy_port).toBe(network);
    expect(data.proxy_port).toBe(network);
  });
});
