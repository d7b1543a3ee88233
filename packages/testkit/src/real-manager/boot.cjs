// Starts the real local proxy manager (the pinned npm package, installed outside the workspace) with
// its cloud connection replaced, the way the package's own test harness does it: the methods of its
// `lpm_f` (cloud) and `lpm_conn` modules that would reach the provider answer locally with a
// logged-in account and its Zones. Run only inside a network namespace that has nothing but loopback.
//
// Usage: node boot.cjs <package dir> <options JSON>; prints one JSON line `{"ready": true}` once the
// admin API listens, or `{"failed": "..."}` and exits 1.
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
