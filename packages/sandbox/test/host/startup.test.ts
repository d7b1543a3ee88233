import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAccountClient } from '@zone-api/account-client';
import { createManagerClient } from '@zone-api/manager-client';
import { describe, expect, it } from 'vitest';
import { defaultSeed, type StateData, startSandbox } from '../../src/index.js';
import { docs, raw } from '../helpers.js';

const free = { accountPort: 0, managerPort: 0 } as const;
const dir = mkdtempSync(join(tmpdir(), 'zone-api-sandbox-startup-'));

describe('start-up contract: handlers and operations match one to one', () => {
  it('an operation without a handler fails start-up, naming it', async () => {
    await expect(startSandbox({ ...free, handlers: { account: { getZone: null } } })).rejects.toThrow(
      /account bundle and the sandbox disagree: operations without a handler: getZone/,
    );
  });

  it('a handler without an operation fails start-up, naming it', async () => {
    await expect(startSandbox({ ...free, handlers: { manager: { frobnicatePort: () => undefined } } })).rejects.toThrow(
      /handlers without an operation: frobnicatePort/,
    );
  });

  it('a new operation in the spec fails start-up until it has a handler; with one it is routed and validated', async () => {
    const account = structuredClone(docs.account);
    account.paths['/api/zone/labels'] = {
      get: {
        operationId: 'listZoneLabels',
        parameters: [{ name: 'zone', in: 'query', required: true, schema: { $ref: '#/components/schemas/ZoneName' } }],
        responses: {
          '200': { description: 'labels', content: { 'application/json': { schema: { type: 'array', items: { type: 'string' } } } } },
        },
      },
    };
    await expect(startSandbox({ ...free, specs: { account } })).rejects.toThrow(/operations without a handler: listZoneLabels/);
    const sandbox = await startSandbox({
      ...free,
      specs: { account },
      handlers: {
        account: { listZoneLabels: (ctx) => ({ body: [`label-of-${(ctx as unknown as { query: { zone: string } }).query.zone}`] }) },
      },
    });
    try {
      const ok = await raw(sandbox.accountUrl, 'GET', '/api/zone/labels?zone=static_zone', {
        headers: { Authorization: `Bearer ${sandbox.credentials.token}` },
      });
      expect(ok.json()).toEqual(['label-of-static_zone']);
      const bad = await raw(sandbox.accountUrl, 'GET', '/api/zone/labels', {
        headers: { Authorization: `Bearer ${sandbox.credentials.token}` },
      });
      expect(bad.status).toBe(400);
      expect(bad.json().details[0].field).toBe('query.zone');
    } finally {
      await sandbox.close();
    }
  });

  it('a port in use fails start-up and leaves nothing listening', async () => {
    const first = await startSandbox(free);
    try {
      const port = Number(new URL(first.accountUrl).port);
      await expect(startSandbox({ accountPort: 0, managerPort: port })).rejects.toThrow(/EADDRINUSE/);
    } finally {
      await first.close();
    }
  });
});

describe('seeds', () => {
  it('a replacement seed is used as given: its account, credentials, Zones and ports', async () => {
    const seed: StateData = defaultSeed();
    seed.account.customer = 'hl_custom01';
    seed.account.tokens = [{ token: 'custom-token', admin: true }];
    seed.account.basic = [];
    seed.account.zones = seed.account.zones.filter((z) => z.name === 'static_zone' || z.name === 'res_zone');
    (seed.account.zones[0] as { passwords: string[] }).passwords = ['custompw'];
    seed.usage = seed.usage.filter((u) => u.zone === 'static_zone');
    // What names a Zone the seed no longer has goes too (the start refuses a dangling name).
    const kept = (r: { zone?: string }) => r.zone === undefined || r.zone === 'static_zone' || r.zone === 'res_zone';
    seed.req_logs = seed.req_logs.filter(kept);
    seed.peers = seed.peers.filter(kept);
    seed.manager.settings.customer = 'hl_custom01';
    seed.manager.ports = [{ port: 30000, zone: 'res_zone' }];
    const file = join(dir, 'custom-seed.json');
    writeFileSync(file, JSON.stringify(seed));

    const sandbox = await startSandbox({ ...free, seed: file });
    try {
      expect(sandbox.credentials).toMatchObject({ customer: 'hl_custom01', token: 'custom-token', zones: { static_zone: ['custompw'] } });
      const account = createAccountClient({ baseUrl: sandbox.accountUrl, auth: { token: 'custom-token' }, retry: false });
      expect((await account.listActiveZones({ params: { query: { customer: 'hl_custom01' } } })).data?.map((z) => z.name)).toEqual([
        'static_zone',
        'res_zone',
      ]);
      const old = createAccountClient({ baseUrl: sandbox.accountUrl, auth: { token: 'sandbox-token-0001' }, retry: false });
      expect((await old.getBalance({ params: { query: {} } })).response.status).toBe(401);
      const manager = createManagerClient({ baseUrl: sandbox.managerUrl, retry: false });
      expect((await manager.createProxy({ body: { proxy: {} } })).data?.data).toMatchObject({ port: 30001, customer: 'hl_custom01' });
    } finally {
      await sandbox.close();
    }
  });

  it.each([
    ['not JSON', '{"account": ', /seed file .*custom-bad\.json.*JSON/s],
    ['missing section', JSON.stringify({ ...defaultSeed(), pools: undefined }), /must have required property 'pools'/],
    [
      'wrong type',
      JSON.stringify({ ...defaultSeed(), network_status: { all: 'yes', res: true, dc: true, mobile: true } }),
      /\/network_status\/all must be boolean/,
    ],
    [
      'an allocated IP missing from the pool',
      JSON.stringify({ ...defaultSeed(), pools: { ...defaultSeed().pools, ips: [] } }),
      /\/account\/zones\/0\/ips: 192\.0\.2\.21 is not in \/pools\/ips/,
    ],
    [
      'an invalid plan (checked against the spec)',
      (() => {
        const s = defaultSeed();
        (s.account.zones[0]?.plans[0] as { type: string }).type = 'satellite';
        return JSON.stringify(s);
      })(),
      /\/account\/zones\/0\/plans\/0: \/type must be equal to one of the allowed values/,
    ],
    [
      'a HAR entry the manager spec refuses',
      (() => {
        const s = defaultSeed();
        delete (s.manager.har[0] as { response?: unknown }).response;
        return JSON.stringify(s);
      })(),
      /\/manager\/har\/0: .*response/,
    ],
  ])('a bad seed file fails start-up with a clear message: %s', async (_, text, message) => {
    const file = join(dir, 'custom-bad.json');
    writeFileSync(file, text);
    await expect(startSandbox({ ...free, seed: file })).rejects.toThrow(message);
  });

  it('a missing seed file names the file', async () => {
    await expect(startSandbox({ ...free, seed: join(dir, 'nope.json') })).rejects.toThrow(/Cannot load the seed file .*nope\.json/);
  });
});
