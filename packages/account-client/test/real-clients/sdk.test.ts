import { fileURLToPath } from 'node:url';
import { realClientDir, runNode } from '@zone-api/testkit/real-clients';
import { describe, expect, it } from 'vitest';
import { calls, TOKEN, useRealClients } from './harness.js';

// @brightdata/sdk 0.2.0, unmodified, in a process of its own: its zone calls go to its built-in host
// through the undici global dispatcher the preload installs (the proxy), and reach the sandbox.
const t = useRealClients();
const flow = fileURLToPath(new URL('./sdk-flow.mjs', import.meta.url));

type Zone = { name: string; type: string; status?: string };
type Step<T> = { ok?: T; error?: string; message?: string };

describe('the provider SDK (@brightdata/sdk 0.2.0): zone list and create', () => {
  it('lists, creates static, resident, unblocker and SERP Zones, and its own type check passes for the products', async () => {
    const { env } = t.home({ BRIGHTDATA_API_KEY: TOKEN });
    const run = await runNode([flow, realClientDir('sdk')], env);
    expect(run.code, run.stderr).toBe(0);
    const out = JSON.parse(run.stdout.trim().split('\n').at(-1) as string) as Record<string, Step<unknown>>;

    const before = out.before?.ok as Zone[];
    expect(before.map((z) => `${z.name}:${z.type}:${z.status}`)).toEqual([
      'static_zone:dc:active',
      'res_zone:res_rotating:active',
      'dc_zone_2:dc:active',
      'mob_zone:mobile:active',
    ]);
    for (const [step, type] of [
      ['static', 'static'],
      ['resident', 'resident'],
      ['unblocker', 'unblocker'],
      ['serp', 'unblocker'],
    ] as const) {
      expect(out[step]?.error, `${step}: ${out[step]?.message}`).toBeUndefined();
      expect((out[step]?.ok as { plan?: { type: string } } | undefined)?.plan?.type, step).toBe(type);
    }
    expect((out.serp?.ok as { plan?: { serp: boolean } } | undefined)?.plan?.serp).toBe(true);
    // A second create of a name: the SDK's typed error carries the sandbox's 409.
    expect(out.duplicate).toMatchObject({ error: 'APIError', message: expect.stringContaining('request failed') });

    const after = out.after?.ok as Zone[];
    expect(Object.fromEntries(after.map((z) => [z.name, z.type]))).toMatchObject({
      sdk_static: 'dc',
      sdk_resident: 'res_rotating',
      sdk_unlocker: 'unblocker',
      sdk_serp: 'serp',
    });
    // What its scrape and search check before each request: the listing's type is the type asked for.
    expect(out.ensureUnblocker).toEqual({ ok: 'ok' });
    expect(out.ensureSerp).toEqual({ ok: 'ok' });
    expect(out.ensureMismatch).toEqual({
      error: 'ZoneError',
      message: 'zone <sdk_static> already exists, but type is not matching: received "dc", expected: "unblocker"',
    });

    // Every call went to its built-in host, un-prefixed, through the proxy; nothing else was tried.
    expect(calls(t.proxy)).toEqual([
      'GET /zone/get_active_zones 200',
      'POST /zone 201',
      'POST /zone 201',
      'POST /zone 201',
      'POST /zone 201',
      'POST /zone 409',
      'GET /zone/get_active_zones 200',
      'GET /zone/get_active_zones 200',
    ]);
    expect(t.proxy.exchanges.every((e) => new URL(e.url).host === 'api.brightdata.com')).toBe(true);
    expect(t.proxy.refused).toEqual([]);
    expect(run.guarded).toEqual([]);
    // The Zones exist in the sandbox as the seed's API reads them.
    const stored = t.sandbox.state().account.zones.find((z) => z.name === 'sdk_serp');
    expect(stored?.plans[0]).toMatchObject({ type: 'unblocker', serp: true });
  });
});
