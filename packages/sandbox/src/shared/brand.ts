// Brand words, realms and the error header, in one place: the words the provider's programs put in
// paths, usernames and headers, and the names the sandbox answers with.

/** The brand word of the real local proxy manager's user paths (`/api/lpm_users`); the spec writes `pm`. */
export const REAL_MANAGER_BRAND = 'lpm';

/**
 * The brand word the real manager sends upstream: `brd-customer-…` (the first of its username
 * prefixes, `brd` and `lum`; the sandbox's network answers it with `x-brd-ip`, and the real manager's
 * port hands that on in the answer to a tunnel's CONNECT, proven in the real-manager suite).
 */
export const UPSTREAM_BRAND = 'brd';

/** The older brand word of the provider's usernames (`lum-customer-…`), still accepted by its network. */
export const LEGACY_BRAND = 'lum';

/** The name of the network's response headers for a brand: the real network answers `lum` users as `luminati`. */
export const headerBrand = (brand: string): string => (brand.toLowerCase() === LEGACY_BRAND ? 'luminati' : brand.toLowerCase());

/** The headers that name the exit peer's IP in an answer of the network, the legacy one first. */
export const PEER_IP_HEADERS = [`x-${headerBrand(LEGACY_BRAND)}-ip`, `x-${headerBrand(UPSTREAM_BRAND)}-ip`];

/**
 * The real manager's default `test_url` (lpm_config_static.js 71): the provider's test host, which a
 * port's status check asks for. The sandbox's network answers it itself, offline (network.ts).
 */
export const PROVIDER_TEST_URL = 'http://geo.brdtest.com/mygeo.json';
export const PROVIDER_TEST_HOST = new URL(PROVIDER_TEST_URL).hostname;

/** The User-Agent of the real manager's own requests (its status check; lib/util.js `user_agent`). */
export const managerUserAgent = (version: string): string => `luminati-proxy-manager/${version}`;

/** The header in which a manager port names why it refused or failed a request (as the real manager). */
export const PORT_ERROR_HEADER = 'x-lpm-error';

/** The request header naming the manager port to send a request through instead (the real manager's `x-lpm-route`, lib/context.js 13-15). */
export const PORT_ROUTE_HEADER = 'x-lpm-route';

/** The creator the real manager names in its HAR log (`log.creator.name`, lib/manager.js 415). */
export const HAR_CREATOR = 'Proxy Manager';

/** The realm of a manager port's 407 (`Proxy-Authenticate`), as the real manager sends it. */
export const PORT_REALM = 'Proxy Manager';

/** The realm of the sandbox's proxy network: in its 407s' `Proxy-Authenticate`, and its `Server` on a refusal. */
export const NETWORK_REALM = 'zone-api sandbox proxy network';

/**
 * The provider's account API host as its own clients have it built in (`@brightdata/sdk` 0.2.0
 * dist/esm/utils/constants.mjs 9, `@brightdata/cli` 0.3.7 dist/utils/config.js 13, `@brightdata/mcp`
 * 2.11.3 server.js 137): what the real-clients harness forwards to a sandbox.
 */
export const PROVIDER_API_HOST = 'api.brightdata.com';

/**
 * The provider's domain as the real manager has it built in (its package.json `api_domain`, read by
 * util/lpm_config.js 16): a port's complete configuration names it (`api_domain`, `www_domain`, `www_api`,
 * `www_help`), as the real manager's does once its cloud has answered.
 */
export const PROVIDER_DOMAIN = PROVIDER_API_HOST.replace(/^api\./, '');

/**
 * The host of a customer's Proxy Manager in the provider's cloud, as the real manager names it
 * (`get_cloud_url_address`, lib/manager.js 820-825): `pmgr-customer-<id>.brd.superproxy.io`, the id after
 * the `_` of the customer id its cloud gives it at login (`hl_1a2b3c4d` gives `1a2b3c4d`; none offline,
 * `undefined`). The sandbox's customer is that id.
 */
export const cloudUrlAddress = (customer: string | undefined): string =>
  `pmgr-customer-${customer ? customer.split('_')[1] || customer : customer}.${UPSTREAM_BRAND}.superproxy.io`;

/**
 * The provider's mail domain as the real manager has it built in (its package.json `mail_domain`, 191),
 * sent in its settings whether or not its cloud answered (lib/mixins/mgr_config.js 60).
 */
export const PROVIDER_MAIL_DOMAIN = 'bright.cn';

/** The origins of PROVIDER_API_HOST that the MSW adapter answers for the account API by default. */
export const PROVIDER_API_ORIGINS = [`https://${PROVIDER_API_HOST}`, `http://${PROVIDER_API_HOST}`];
