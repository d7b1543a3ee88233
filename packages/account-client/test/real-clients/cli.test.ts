import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type ClientRun, realClientDir, runNode } from '@zone-api/testkit/real-clients';
import { beforeAll, describe, expect, it } from 'vitest';
import { calls, LIMITED_TOKEN, TOKEN, useRealClients } from './harness.js';

// @brightdata/cli 0.3.7, unmodified: each command a process of its own, as a user runs it. Its fetch
// calls reach the sandbox through the undici dispatcher the preload installs (Node's fetch reads no
// proxy variable); the printed output and exit code are what is asserted.
const t = useRealClients();
let env: Record<string, string>;
let home: string;
/** The read-only commands, run at once after the login (each is a process of its own). */
let runs: Record<string, ClientRun>;

const cli = (args: string[], extra: Record<string, string> = {}): Promise<ClientRun> =>
  runNode([join(realClientDir('cli'), 'dist/index.js'), ...args], { ...env, ...extra });

/** The printed table's rows as arrays of cells (header and divider dropped). */
const table = (out: string) =>
  out
    .trim()
    .split('\n')
    .slice(2)
    .map((l) => l.split('|').map((c) => c.trim()));

describe('the provider CLI (@brightdata/cli 0.3.7)', () => {
  beforeAll(() => {
    ({ env, home } = t.home());
  });

  const read = async (name: string): Promise<ClientRun> => {
    runs ??= Object.fromEntries(
      await Promise.all(
        (
          [
            ['zones', ['zones']],
            ['info', ['zones', 'info', 'static_zone', '--json']],
            ['infoMissing', ['zones', 'info', 'no_such_zone']],
            ['balance', ['budget', 'balance']],
            ['budgetZones', ['budget', 'zones']],
            ['budgetZone', ['budget', 'zone', 'static_zone']],
          ] as const
        ).map(async ([key, args]) => [key, await cli([...args])] as const),
      ),
    );
    return runs[name] as ClientRun;
  };

  it('login --api-key: validates the key, saves it, creates its Zones (unblocker, browser_api); again: finds them', async () => {
    const from = t.proxy.exchanges.length;
    const run = await cli(['login', '--api-key', TOKEN]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain('Logged in successfully. Key: sand****0001');
    expect(run.stderr).toContain('Zone "cli_unlocker" created successfully.');
    expect(run.stderr).toContain('Zone "cli_browser" created successfully.');
    expect(run.stderr).not.toContain('Warning');
    expect(run.stderr).not.toContain(TOKEN);
    expect(calls(t.proxy, from)).toEqual(['GET /zone 400', 'GET /zone/get_active_zones 200', 'POST /zone 201', 'POST /zone 201']);
    const saved = JSON.parse(readFileSync(join(home, '.config/brightdata-cli/credentials.json'), 'utf8'));
    expect(saved.api_key).toBe(TOKEN);

    const again = await cli(['login', '--api-key', TOKEN]);
    expect(again.code).toBe(0);
    expect(again.stderr).toContain('Zone "cli_unlocker" already exists.');
    expect(again.stderr).toContain('Zone "cli_browser" already exists.');
  });

  it('zones: the table of active Zones with the types used at creation', async () => {
    const run = await read('zones');
    expect(run.code, run.stderr).toBe(0);
    expect(table(run.stdout)).toEqual([
      ['static_zone', 'dc'],
      ['res_zone', 'res_rotating'],
      ['dc_zone_2', 'dc'],
      ['mob_zone', 'mobile'],
      ['cli_unlocker', 'unblocker'],
      ['cli_browser', 'browser_api'],
    ]);
  });

  it('zones info: the Zone as the API answers it; an unknown Zone is an error and exit 1', async () => {
    const run = await read('info');
    expect(run.code, run.stderr).toBe(0);
    const info = JSON.parse(run.stdout);
    expect(info).toMatchObject({ password: ['z8x7c6v5b4n3'], plan: { type: 'static' } });
    expect(info.plans[0].type).toBe('static');
    const missing = await read('infoMissing');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('Zone not found: no_such_zone');
    expect(missing.stderr).toContain('Status: 404');
  });

  it('budget balance: the balance and the real pending charge; a key without the permission sees the 403', async () => {
    const run = await read('balance');
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout.split('\n').map((l) => l.replace(/\s+/g, ' ').trim())).toEqual(['Balance $250.00', 'Pending charge $12.75', '']);
    const limited = await cli(['budget', 'balance'], { BRIGHTDATA_API_KEY: LIMITED_TOKEN });
    expect(limited.code).toBe(1);
    expect(limited.stderr).toContain('Your API key lacks the required permissions');
    expect(limited.stderr).toContain('Status: 403');
    expect(limited.stderr).toContain('Hint: Access denied.');
  });

  it('budget zones and budget zone: cost and bandwidth per Zone from zone/cost, and the Zone plan', async () => {
    const zones = await read('budgetZones');
    expect(zones.code, zones.stderr).toBe(0);
    const rows = table(zones.stdout);
    expect(rows.map((r) => r[0])).toEqual(['static_zone', 'res_zone', 'dc_zone_2', 'mob_zone', 'cli_unlocker', 'cli_browser', 'TOTAL']);
    const cost = (r: string[] | undefined) => Number(String(r?.[1]).replace('$', ''));
    const total = rows.slice(0, -1).reduce((s, r) => s + cost(r), 0);
    expect(cost(rows.at(-1))).toBeCloseTo(total, 1);
    expect(cost(rows[0])).toBeGreaterThan(0);

    const one = await read('budgetZone');
    expect(one.code, one.stderr).toBe(0);
    const lines = one.stdout.split('\n').map((l) => l.replace(/\s+/g, ' ').trim());
    expect(lines).toContain('Zone: static_zone');
    // The CLI joins plan.product and plan.type (budget.js:174-177): the reference's product word first.
    expect(lines).toContain('Type: dc / static');
    expect(lines).toContain('Plan bandwidth: payperusage');
    expect(lines.find((l) => l.startsWith('Cost (this month):'))).toBe(`Cost (this month): $${cost(rows[0]).toFixed(2)}`);
  });

  it('sent everything to its built-in host through the proxy; the guard refused nothing', () => {
    expect(t.proxy.exchanges.length).toBeGreaterThan(10);
    expect(t.proxy.exchanges.every((e) => new URL(e.url).host === 'api.brightdata.com')).toBe(true);
    expect(t.proxy.refused).toEqual([]);
    expect(existsSync(join(home, 'guard.log'))).toBe(false);
  });
});
