import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { defaultSeed, startSandbox, validateSeed } from '../../src/index.js';
import { bearer, C, docs, raw } from '../helpers.js';

// A state the API left behind always loads again: from the data file and as a seed.

describe('a change the API accepts always leaves a state that loads', () => {
  it.each([...new Set(defaultSeed().account.zones.map((z) => z.name))])(
    'deleting Zone %s, then restarting on the data file and seeding from GET /__sandbox/state',
    async (zone) => {
      const work = mkdtempSync(join(tmpdir(), 'zone-api-delete-'));
      const dataFile = join(work, 'state.json');
      try {
        const first = await startSandbox({ accountPort: 0, managerPort: 0, dataFile });
        const del = await raw(first.accountUrl, 'DELETE', '/api/zone', { headers: bearer, body: { customer: C, zone } });
        expect(del.status, del.text).toBe(200);
        const state = (await raw(first.accountUrl, 'GET', '/__sandbox/state')).json();
        await first.close();
        validateSeed(state, { account: docs.account, manager: docs.manager }); // throws when the state would not load
        expect(state.usage.filter((u: { zone: string }) => u.zone === zone)).toEqual([]);
        expect(state.req_logs.filter((r: { zone: string }) => r.zone === zone)).toEqual([]);
        const again = await startSandbox({ accountPort: 0, managerPort: 0, dataFile });
        try {
          const zones = (await raw(again.accountUrl, 'GET', `/api/zone/get_active_zones?customer=${C}`, { headers: bearer })).json();
          expect(zones.map((z: { name: string }) => z.name)).not.toContain(zone);
          const reseeded = await startSandbox({ accountPort: 0, managerPort: 0, seed: state });
          await reseeded.close();
        } finally {
          await again.close();
        }
      } finally {
        rmSync(work, { recursive: true, force: true });
      }
    },
  );
});
