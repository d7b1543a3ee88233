import { describe, expect, it } from 'vitest';
import { TOKEN, useSandbox } from '../../helpers.js';

// The provider's Python SDKs: brightdata/sdk-python at f62782f (src/brightdata/core/zone_manager.py, aiohttp)
// and the older brightdata/bright-data-sdk-python at 33bfb66 (brightdata/utils/zone_manager.py, requests).
// Both ensure their Zones the same way: list the active Zones, create the missing ones, list again to
// verify; the newer one also deletes. Replayed against the sandbox as they call it, read as they read it.
const t = useSandbox();

const call = async (method: string, path: string, body?: unknown) => {
  const r = await fetch(`${t.sandbox.accountUrl}${path}`, {
    method,
    headers: { Authorization: `Bearer ${TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: r.status, text: await r.text() };
};

/** _get_zones (f62782f 119-138; 33bfb66 61-75): a 200 is the list (or []), anything else an error. */
async function getZones(): Promise<{ name?: string }[]> {
  const r = await call('GET', '/zone/get_active_zones');
  if (r.status !== 200) throw new Error(`Failed to list zones (${r.status}): ${r.text}`);
  return JSON.parse(r.text) ?? [];
}

/** _create_zone (f62782f 170-212; 33bfb66 78-114): 200/201 created, 409 or "duplicate"/"already exists" fine. */
async function createZone(name: string, type: 'unblocker' | 'serp'): Promise<'created' | 'exists'> {
  const plan = type === 'serp' ? { type: 'unblocker', serp: true } : { type };
  const r = await call('POST', '/zone', { plan, zone: { name, type } });
  if (r.status === 200 || r.status === 201) return 'created';
  if (r.status === 409 || /duplicate|already exists/i.test(r.text)) return 'exists';
  throw new Error(`Failed to create zone '${name}' (${r.status}): ${r.text}`);
}

/** ensure_required_zones (f62782f 33-100; 33bfb66 17-46), then _verify_zones_created (f62782f 282-314; 33bfb66 124-141). */
async function ensureRequiredZones(unlocker: string, serp: string): Promise<string[]> {
  const names = new Set((await getZones()).map((z) => z.name));
  const toCreate = (
    [
      [unlocker, 'unblocker'],
      [serp, 'serp'],
    ] as const
  ).filter(([n]) => !names.has(n));
  for (const [n, type] of toCreate) expect(await createZone(n, type)).toBe('created');
  const existing = new Set((await getZones()).map((z) => z.name));
  const missing = toCreate.map(([n]) => n).filter((n) => !existing.has(n));
  if (missing.length) throw new Error(`Zone verification failed: zones ${missing} not found after creation`);
  return toCreate.map(([n]) => n);
}

describe("the provider's Python SDKs: their Zones ensured, verified and deleted", () => {
  it('creates the missing unlocker and SERP Zones, sees them listed, and creates nothing the second time', async () => {
    await t.sandbox.reset();
    expect(await ensureRequiredZones('sdk_unlocker', 'sdk_serp')).toEqual(['sdk_unlocker', 'sdk_serp']);
    expect(await ensureRequiredZones('sdk_unlocker', 'sdk_serp')).toEqual([]);
    // Another process that created them first: the second create is taken as "exists".
    expect(await createZone('sdk_serp', 'serp')).toBe('exists');
    const stored = t.sandbox.state().account.zones.find((z) => z.name === 'sdk_serp');
    expect(stored?.plans[0]).toMatchObject({ type: 'unblocker', serp: true });
  });

  it('delete_zone (f62782f 362-413): 200 deletes; again, a 400 whose text says "not found" is "does not exist"', async () => {
    await createZone('sdk_gone', 'unblocker');
    expect((await call('DELETE', '/zone', { zone: 'sdk_gone' })).status).toBe(200);
    const again = await call('DELETE', '/zone', { zone: 'sdk_gone' });
    expect(again.status).toBe(400);
    expect(/not found|does not exist/i.test(again.text)).toBe(true);
    expect((await getZones()).map((z) => z.name)).not.toContain('sdk_gone');
  });
});
