import { loadBundle, prismViolations, type Running, startPrismProxy } from '@zone-api/testkit';
import { fuzzRequests } from '@zone-api/testkit/fuzz';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Sandbox, startSandbox } from '../../src/index.js';
import { bearer, raw } from '../helpers.js';

// Prism in proxy mode in front of the sandbox reports every response that breaks the spec
// (sl-violations): what a later `prism proxy --errors` gate will hold the sandbox to.
let sandbox: Sandbox;
const prism = {} as Record<'account' | 'manager', Running>;

beforeAll(async () => {
  sandbox = await startSandbox({ accountPort: 0, managerPort: 0 });
  [prism.account, prism.manager] = await Promise.all([
    startPrismProxy('account', sandbox.accountUrl),
    startPrismProxy('manager', sandbox.managerUrl),
  ]);
}, 60_000);
afterAll(async () => {
  await Promise.all([prism.account?.stop(), prism.manager?.stop()]);
  await sandbox?.close();
});

describe('behind prism proxy', () => {
  it('reports a response that breaks the spec (the check works)', async () => {
    await raw(sandbox.accountUrl, 'POST', '/__sandbox/faults', {
      body: { operationId: 'getZoneStatus', status: 200, body: { status: 7 }, count: 1 },
    });
    const res = await fetch(`${prism.account.url}/api/zone/status?zone=static_zone`, { headers: bearer });
    expect(prismViolations(res).response.length).toBeGreaterThan(0);
  });

  it.each(['account', 'manager'] as const)('%s: no response violations over 300 fuzzed requests', async (api) => {
    const found: string[] = [];
    // A JSON `null` body is left out: Prism 5.14.2's proxy forwards it with `content-length: 4` and no
    // bytes (seen on a raw upstream), so the sandbox waits for a body that never comes and answers 408
    // after its body window; what the sandbox answers a `null` body itself is asserted below.
    const requests = fuzzRequests(loadBundle(api), 300, 5, {
      auth: api === 'account' ? bearer : {},
      pathValues: { port: [24000, 24001] },
    }).filter((r) => r.body !== 'null');
    expect(requests.length).toBeGreaterThan(250);
    for (const r of requests) {
      const res = await fetch(`${prism[api].url}${r.url}`, { method: r.method, headers: r.headers, body: r.body });
      await res.text();
      for (const v of prismViolations(res).response) found.push(`${r.label} ${res.status}: ${v.location.join('.')} ${v.message}`);
      if (res.status < 300 && r.method !== 'GET') await sandbox.reset();
    }
    expect(found).toEqual([]);
  });

  it('a JSON null body sent to the sandbox itself is refused as a missing body, naming it', async () => {
    const res = await raw(sandbox.accountUrl, 'DELETE', '/api/zone/vips', {
      headers: { ...bearer, 'content-type': 'application/json' },
      text: 'null',
    });
    expect(res.status, res.text).toBe(400);
    expect(res.json().details[0].field).toBe('body');
  });
});
