// A manager port's defaults, in one place: what the real manager 1.570.247 applies to a port that does
// not set a field (what `proxies_running` and `GET /api/defaults` show beside the stored fields, and
// what a port's traffic runs with). `proxy_port` is the port of the provider's upstream (its super proxy).

/** Defaults the manager applies to a port. */
export const PORT_DEFAULTS = {
  proxy_type: 'persist',
  iface: '0.0.0.0',
  proxy: 'zproxy.example.com',
  proxy_port: 22225,
  proxy_connection_type: 'http',
  proxy_retry: 2,
  insecure: false,
  ssl: false,
  dns: 'local',
  route_err: 'pass_dyn',
  sticky_ip: false,
  pool_size: 0,
  rotate_session: false,
  max_ban_retries: 10,
  socket_inactivity_timeout: 120_000,
  debug: 'none',
  multiply: 1,
} as const;
