import { connect } from 'node:net';
import { runNode } from '@zone-api/testkit/real-clients';
import { describe, expect, it } from 'vitest';
import { useRealClients } from './harness.js';

// The guard fires: a client process that tries to leave loopback fails loudly, and the namespace the
// suite runs in could not carry the packet anyway.
const t = useRealClients();

const attempt = `
const net = require('node:net'); const dns = require('node:dns');
const out = {};
const done = () => { if (Object.keys(out).length === 3) { console.log(JSON.stringify(out)); } };
dns.lookup('api.brightdata.com', (e) => { out.lookup = e ? e.code + ' ' + e.message : 'resolved'; done(); });
net.connect(443, '203.0.113.7').on('error', (e) => { out.connect = e.code + ' ' + e.message; done(); }).on('connect', () => { out.connect = 'connected'; done(); });
fetch('https://example.org/').then((r) => r.text().then((b) => { out.fetch = r.status + ' ' + b; done(); }), (e) => { out.fetch = 'failed ' + e.message; done(); });
`;

describe('the guard around the real clients', () => {
  it('refuses a DNS lookup and a connection off loopback, loudly; the proxy refuses any other host', async () => {
    const { env } = t.home();
    const run = await runNode(['-e', attempt], env);
    const out = JSON.parse(run.stdout);
    expect(out.lookup).toMatch(/^ENOTFOUND zone-api real-clients guard: refused a DNS lookup of api\.brightdata\.com/);
    expect(out.connect).toMatch(/^ECONNREFUSED zone-api real-clients guard: refused a connection to 203\.0\.113\.7:443/);
    // fetch goes through the proxy, which forwards only the provider's API host.
    expect(out.fetch).toMatch(/^502 refused by the real-clients test proxy/);
    expect(run.guarded).toEqual(['a DNS lookup of api.brightdata.com', 'a connection to 203.0.113.7:443']);
    expect(run.stderr).toContain('zone-api real-clients guard: refused');
    expect(t.proxy.refused).toEqual(['GET https://example.org/']);
  });

  it('without the guard, the namespace itself has no route off loopback', async () => {
    const code = await new Promise<string>((resolve) => {
      const s = connect(443, '203.0.113.7');
      s.on('connect', () => {
        s.destroy();
        resolve('connected');
      });
      s.on('error', (e: NodeJS.ErrnoException) => resolve(String(e.code)));
    });
    expect(code).toBe('ENETUNREACH');
  });
});
