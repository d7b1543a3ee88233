// Starts the real local proxy manager (the pinned npm package, installed outside the workspace) with
// its cloud connection replaced, the way the package's own test harness does it: the methods of its
// `lpm_f` (cloud) and `lpm_conn` modules that would reach the provider answer locally with a
// logged-in account and its Zones. Run only inside a network namespace that has nothing but loopback.
//
// Usage: node boot.cjs <package dir> <options JSON>; prints one JSON line `{"ready": true}` once the
// admin API listens, or `{"failed": "..."}` and exits 1.
const dns = require('node:dns');
const path = require('node:path');

const [dir, raw] = process.argv.slice(2);
const opt = JSON.parse(raw);
const Manager = require(path.join(dir, 'lib/manager.js'));
const lpmUtil = require(path.join(dir, 'util/lpm_util.js'));

const args = [
  '--www',
  String(opt.wwwPort),
  '--no-config',
  '--customer',
  opt.customer,
  '--password',
  opt.password,
  '--zone',
  opt.zone,
  '--proxy',
  opt.proxy ?? '127.0.0.1',
  '--proxy_port',
  String(opt.proxyPort ?? 22225),
  '--no-dropin',
  '--no-local_login',
  '--no_usage_stats',
  '--no-cluster',
  '--loki',
  path.join(opt.workDir, 'loki.db'),
  '--session_path',
  path.join(opt.workDir, 'sessions.db'),
  ...(opt.extraArgs ?? []),
];

// Users come from the cloud too: none here.
Manager.prototype.lpm_users_get = () => null;
const manager = new Manager(lpmUtil.init_args(args));
// At start the manager asks the provider where it is (`set_current_country`, the `test_url` of
// util/lpm_config_static.js 71; lib/mixins/mgr_config.js 393-420) and whether its domain answers
// (`check_domain`, lib/manager.js 1145-1161). Offline both names fail to resolve with EAI_AGAIN, which the
// manager's HTTP client (got 14, util/lpm_request.js) retries twice, 1 s and 2 s apart
// (got/dist/source/core/options.js 104-113, calculate-retry-delay.js 27): about 6 s of every start spent
// waiting. Here those two names, and only they, fail at once with EAI_FAIL (a non-recoverable lookup
// failure, which got does not retry): the same outcome, the provider unreachable and logged so.
const providerNames = new Set([new URL(manager._defaults.test_url).hostname, manager._defaults.api_domain]);
const lookup = dns.lookup;
dns.lookup = (hostname, ...rest) => {
  if (!providerNames.has(hostname)) return lookup(hostname, ...rest);
  const err = Object.assign(new Error(`getaddrinfo EAI_FAIL ${hostname}`), { code: 'EAI_FAIL', syscall: 'getaddrinfo', hostname });
  process.nextTick(rest[rest.length - 1], err);
};
manager.lpm_conn.init = () => null;
manager.lpm_f.init = () => null;
manager.lpm_f.get_meta_conf = () => ({
  _defaults: { customer: opt.customer, password: opt.password, zone: opt.zone, zones: opt.zones },
  customers: [opt.customer],
  logins: [],
});
manager.lpm_f.get_server_conf = () => manager.lpm_f.emit('server_conf', { client: {} });
manager.lpm_f.get_lb_ips = () => manager.lpm_f.emit('lb_ips', []);
manager.on('stop', () => process.exit(0));

manager.start().then(
  () => console.log(JSON.stringify({ ready: true })),
  (err) => {
    console.log(JSON.stringify({ failed: String(err?.message ?? err) }));
    process.exit(1);
  },
);
