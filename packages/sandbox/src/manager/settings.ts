import { HAR_LIMITS } from '../domain/har.js';
import { isWhitelistEntry } from '../domain/net.js';
import { leniencyHeaders } from '../router/lenient-headers.js';
import { cloudUrlAddress, PROVIDER_MAIL_DOMAIN } from '../shared/brand.js';
import { badRequest, HttpError } from '../shared/errors.js';
import type { ManagerContext, ManagerHandlers } from './context.js';
import { MANAGER_BUILT_INS, managerOptions } from './manager-options.js';
import { settingsZoneChanged } from './multiply.js';
import { whitelistEntryAsStored } from './netmask.js';
import { coerceUpdate, type FieldTypes } from './port-config.js';
import { defaultWhitelistChanged } from './users-access.js';

// Settings: the manager's own settings (default Zone, whitelists, logging).

/**
 * The types the real manager converts settings to before it applies them (util/lpm_api_models.js
 * 106-166, `manager_fields`, as lib/util.js 714-724 names them: arrays as `object`), for the fields the
 * sandbox applies (with `zone`, which is not among them: it is stored as given; any other is ignored).
 */
const SETTINGS_FIELD_TYPES: FieldTypes = {
  whitelist_ips: 'object',
  www_whitelist_ips: 'object',
  logs: 'number',
  har_limit: 'number',
  request_stats: 'boolean',
  logs_settings: 'object',
};

/** `[...new Set(value)]`: a list's distinct entries; a string's distinct characters, as the real manager spreads it. */
const listOf = (value: unknown): string[] =>
  typeof value === 'string' || Array.isArray(value) ? [...new Set(value as Iterable<string>)] : [];

export function settingsHandlers(c: ManagerContext) {
  const { store, m, log, options } = c;
  const view = managerOptions(c);
  /**
   * The settings as `GET`/`PUT /api/settings` answer them: the stored ones, plus the fields the real
   * manager 1.570.247 always sends that the sandbox does not act on, with the values it sends offline,
   * but for `cloud_url_address`, which the sandbox names by the real one's rule from its customer, as the
   * real one online (offline it has no customer id: parity.yaml).
   */
  function settingsView() {
    const s = m().settings;
    const b = MANAGER_BUILT_INS;
    return {
      ...s,
      // The whitelist of the command line and the admin whitelist (lib/manager.js 508-511): not set through the API.
      fixed_whitelist_ips: [...new Set([...(s.fixed_whitelist_ips ?? []), ...(s.www_whitelist_ips ?? [])])],
      debug: b.debug,
      lpm_auth: b.lpm_auth,
      av_server: b.av_server,
      reseller: b.reseller,
      mail_domain: PROVIDER_MAIL_DOMAIN,
      // What the real manager's cache holds, and its bound (lib/consts.js `CACHE_LIMIT`): the sandbox keeps no cache.
      cache_report: [0],
      cache_limit: 100_000_000,
      cloud_url_address: cloudUrlAddress(s.customer),
      server_conf: { client: {} },
      proxy_port: view.upstreamPort(),
      logs_settings: view.logsSettings(),
      use_custom_cert: false,
      socket_inactivity_timeout: b.socket_inactivity_timeout,
      new_ui: b.new_ui,
    };
  }

  return {
    getSettings: () => ({ body: settingsView() }),

    updateSettings: (ctx) => {
      // The real manager reads the body without checking it (lib/mixins/web_api.js 767-809): no object
      // (a text body) changes nothing; the fields it knows are converted to their types first
      // (lib/middleware.js 132-139, the types of util/lpm_api_models.js 106-166); then each field it
      // acts on is applied as given, and any other is ignored (lib/mixins/mgr_config.js 97-198).
      const raw = ctx.body;
      const b = (raw && typeof raw === 'object' && !Array.isArray(raw) ? raw : {}) as Record<string, unknown>;
      if (Object.keys(b).length) coerceUpdate(b, SETTINGS_FIELD_TYPES);
      // A Cloud Proxy Manager setting: the local manager refuses it before looking at anything else.
      if (b.logs_settings) throw new HttpError(400, 'Available only in Cloud Proxy Manager');
      // Values the real manager would store and then answer outside the documented settings (a `zone` that
      // is no text, a `logs` or `har_limit` still no number, a `request_stats` no boolean): refused, naming
      // the field, rather than answered outside the spec (parity.yaml lists the difference). A `zone` that is
      // text is stored as given, empty or unknown (lib/mixins/mgr_config.js 116-129): a port without its own
      // Zone then sends no Zone upstream (lib/username.js 98-100), or one the network does not know, and is
      // refused there (407); `--strict` refuses such a Zone here.
      const unanswerable: Array<[string, boolean]> = [
        ['zone', b.zone !== undefined && typeof b.zone !== 'string'],
        ['logs', b.logs !== undefined && !(Number.isInteger(b.logs) && (b.logs as number) >= 0 && (b.logs as number) < 2 ** 31)],
        [
          'har_limit',
          b.har_limit !== undefined &&
            !(Number.isInteger(b.har_limit) && (b.har_limit as number) >= -1 && (b.har_limit as number) < 2 ** 31),
        ],
        ['request_stats', b.request_stats !== undefined && b.request_stats !== '' && typeof b.request_stats !== 'boolean'],
      ];
      for (const [field, bad] of unanswerable)
        if (bad)
          throw badRequest(
            `body.${field}`,
            `${JSON.stringify(b[field])} is no value of this setting (after the real manager's conversion)`,
          );
      // The real manager stores a Zone it does not know (lib/mixins/mgr_config.js 116-129); `--strict` refuses it.
      if (options.strict && b.zone !== undefined && !store.zones.has(b.zone as string))
        throw badRequest('body.zone', b.zone === '' ? 'is empty: name a Zone of the account' : `Zone ${b.zone} does not exist`);
      if (options.strict)
        for (const key of ['www_whitelist_ips', 'whitelist_ips'] as const) {
          const list = (Array.isArray(b[key]) ? b[key] : []) as string[];
          const details = list
            .map((ip, i) =>
              ip !== 'any' && isWhitelistEntry(ip) ? undefined : { field: `body.${key}[${i}]`, reason: `${ip} is not an IP or subnet` },
            )
            .filter((d) => d !== undefined);
          if (details.length) throw new HttpError(400, 'Invalid request', { details });
        }
      const s = m().settings;
      if (b.zone !== undefined) {
        settingsZoneChanged(store, s.zone, new Set(m().kept_stored ?? []));
        store.setSettings({ zone: b.zone as string });
      }
      const prev = c.portFacts({}).whitelist;
      // `[...new Set(ips)]` of what was given: the admin whitelist as given (lib/manager.js 517-527), the
      // all-ports whitelist without the admin entries, each as netmask 2.0.1 reads it, no invalid entry and
      // no 127.0.0.1 (lib/manager.js 528-547). A text where a list is expected is spread into its distinct
      // characters, each read as an address of its own: `"10.1.1.1"` is `1`, `0` and `.`, kept as 0.0.0.1
      // and 0.0.0.0 (the conversion leaves a text as it is for a list field: lib/middleware.js 102-111,
      // lib/util.js 650-700 has no text-to-object converter).
      if (b.www_whitelist_ips !== undefined) store.setSettings({ www_whitelist_ips: listOf(b.www_whitelist_ips) });
      if (b.whitelist_ips !== undefined || b.www_whitelist_ips !== undefined) {
        const fixed = [...(s.fixed_whitelist_ips ?? []), ...(s.www_whitelist_ips ?? [])];
        store.setSettings({
          whitelist_ips: listOf(b.whitelist_ips ?? s.whitelist_ips)
            .filter((ip) => !fixed.includes(ip))
            .map(whitelistEntryAsStored)
            .filter((ip): ip is string => ip !== undefined && ip !== '127.0.0.1'),
        });
        defaultWhitelistChanged(c, prev);
      }
      // `logs`: the number of requests the HAR log keeps, as given after the conversion (`true` is 1).
      if (b.logs !== undefined) {
        // The log holds at most HAR_LIMITS.entries whatever is asked; `--strict` refuses more.
        if (options.strict && Number(b.logs) > HAR_LIMITS.entries)
          throw badRequest('body.logs', `is more than the ${HAR_LIMITS.entries} entries the sandbox's log keeps`);
        store.setSettings({ logs: b.logs as number });
        // A smaller number trims the log to its newest entries at once; 0 keeps what is there (loki.js 91-99).
        const keep = s.logs;
        if (typeof keep === 'number' && keep > 0) store.logs.keepRequests((_, i, all) => i >= all.length - keep);
      }
      // The size of the response bodies the HAR log keeps, applied to every port's next request (mgr_config.js 130-134).
      if (b.har_limit !== undefined) store.setSettings({ har_limit: b.har_limit as number });
      if (b.request_stats !== undefined) store.setSettings({ request_stats: (b.request_stats === '' ? true : b.request_stats) as boolean });
      log(`settings changed: ${Object.keys(b).join(', ') || '(nothing)'}`);
      // The fields the sandbox does not apply, listed as the lenient router lists ignored fields.
      const ignored = Object.keys(b)
        .filter((k) => !(Object.hasOwn(SETTINGS_FIELD_TYPES, k) || k === 'zone'))
        .map((k) => `body.${k}`);
      return { body: settingsView(), headers: leniencyHeaders([{ ignored, normalized: [] }]) };
    },
  } satisfies ManagerHandlers;
}
