import { HAR_LIMITS } from '../domain/har.js';
import { isWhitelistEntry } from '../domain/net.js';
import { badRequest, HttpError } from '../errors.js';
import type { ManagerContext, ManagerHandlers } from './context.js';
import { defaultWhitelistChanged } from './users-access.js';

// Settings: the manager's own settings (default Zone, whitelists, logging).

export function settingsHandlers(c: ManagerContext) {
  const { store, m, log, options } = c;
  /**
   * The settings as `GET`/`PUT /api/settings` answer them: the stored ones, plus the fields the real
   * manager 1.570.247 always sends that the sandbox does not act on, with the values it sends offline.
   * Not sent: `mail_domain` and `cloud_url_address`, the provider's own host names (see parity.yaml).
   */
  function settingsView() {
    const s = m().settings;
    return {
      ...s,
      // The whitelist of the command line and the admin whitelist (lib/manager.js 508-511): not set through the API.
      fixed_whitelist_ips: [...new Set([...(s.fixed_whitelist_ips ?? []), ...(s.www_whitelist_ips ?? [])])],
      debug: 'none',
      lpm_auth: 'none',
      av_server: false,
      reseller: false,
      cache_report: [0],
      cache_limit: 100_000_000,
      server_conf: { client: {} },
      proxy_port: 22225,
      logs_settings: {},
      use_custom_cert: false,
      socket_inactivity_timeout: 120_000,
      new_ui: false,
    };
  }

  return {
    getSettings: () => ({ body: settingsView() }),

    updateSettings: (ctx) => {
      const b = ctx.body as {
        zone?: string;
        www_whitelist_ips?: string[];
        whitelist_ips?: string[];
        logs?: boolean | number;
        har_limit?: number;
        request_stats?: boolean;
        logs_settings?: object | null;
      };
      // A Cloud Proxy Manager setting: the local manager refuses it before looking at anything else.
      if (b.logs_settings) throw new HttpError(400, 'Available only in Cloud Proxy Manager');
      // The real manager stores a Zone it does not know (lib/mixins/mgr_config.js 116-129); `--strict` refuses it.
      if (options.strict && b.zone !== undefined && !store.zones.has(b.zone))
        throw badRequest('body.zone', `Zone ${b.zone} does not exist`);
      for (const key of ['www_whitelist_ips', 'whitelist_ips'] as const) {
        const details = (b[key] ?? [])
          .map((ip, i) =>
            ip !== 'any' && isWhitelistEntry(ip) ? undefined : { field: `body.${key}[${i}]`, reason: `${ip} is not an IP or subnet` },
          )
          .filter((d) => d !== undefined);
        if (details.length) throw new HttpError(400, 'Invalid request', { details });
      }
      const s = m().settings;
      if (b.zone !== undefined) s.zone = b.zone;
      const prev = c.portFacts({}).whitelist;
      if (b.www_whitelist_ips) s.www_whitelist_ips = [...new Set(b.www_whitelist_ips)];
      if (b.whitelist_ips) s.whitelist_ips = [...new Set(b.whitelist_ips)];
      if (b.www_whitelist_ips || b.whitelist_ips) defaultWhitelistChanged(c, prev);
      // The manager keeps `logs` as the number of requests its HAR log keeps, 0 for none; a boolean
      // becomes a number as its settings coercion makes it (`Number(true)`: 1), lib/middleware.js 102-111.
      if (b.logs !== undefined) {
        // The log holds at most HAR_LIMITS.entries whatever is asked; `--strict` refuses more.
        if (options.strict && Number(b.logs) > HAR_LIMITS.entries)
          throw badRequest('body.logs', `is more than the ${HAR_LIMITS.entries} entries the sandbox's log keeps`);
        s.logs = Number(b.logs);
        // A smaller number trims the log to its newest entries at once; 0 keeps what is there (loki.js 91-99).
        const har = m().har;
        if (s.logs > 0 && har.length > s.logs) {
          har.splice(0, har.length - s.logs);
          store.touch('har');
        }
      }
      // The size of the response bodies the HAR log keeps, applied to every port's next request (mgr_config.js 130-134).
      if (b.har_limit !== undefined) s.har_limit = b.har_limit;
      if (b.request_stats !== undefined) s.request_stats = b.request_stats;
      log(`settings changed: ${Object.keys(b).join(', ') || '(nothing)'}`);
      return { body: settingsView() };
    },
  } satisfies ManagerHandlers;
}
