// The account the real manager's stubbed cloud describes in the real-manager suites: the sandbox
// seed's customer and Zones, so that the real program and the sandbox start from the same account.
export const ACCOUNT = {
  customer: 'hl_1a2b3c4d',
  zone: 'static_zone',
  password: 'z8x7c6v5b4n3',
  zones: {
    static_zone: { password: ['z8x7c6v5b4n3'], plan: { type: 'static', ips_type: 'shared' }, perm: 'city asn google peers' },
    res_zone: { password: ['r3s1d3nt9x7w'], plan: { type: 'resident', vip: true }, perm: 'vip city asn' },
  },
};
