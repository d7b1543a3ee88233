// The provider's JS SDK (@brightdata/sdk, unmodified) doing its account flow as a user's program would:
// list the Zones, create static, resident, unblocker and SERP Zones, list again, and the check its
// scrape and search run before each request (ensureZone: the listing's type must be the type asked for).
// argv[2]: the installed package folder. Prints one JSON object: what each call returned or threw.
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const { bdclient } = await import(pathToFileURL(join(process.argv[2], 'dist/esm/index.mjs')).href);
const client = new bdclient({ apiKey: process.env.BRIGHTDATA_API_KEY });
// The SDK's own zone API, as its scrape and search use it (client.zonesAPI).
const zones = client.zonesAPI;
const out = {};
async function step(name, fn) {
  try {
    out[name] = { ok: await fn() };
  } catch (e) {
    out[name] = { error: e?.name, message: String(e?.message) };
  }
}
await step('before', () => client.listZones());
await step('static', () => zones.createZone('sdk_static'));
await step('resident', () => zones.createZone('sdk_resident', { type: 'resident' }));
await step('unblocker', () => zones.createZone('sdk_unlocker', { type: 'unblocker' }));
await step('serp', () => zones.createZone('sdk_serp', { type: 'serp' }));
await step('duplicate', () => zones.createZone('sdk_static'));
await step('after', () => client.listZones());
zones.invalidateCache();
await step('ensureUnblocker', () => zones.ensureZone('sdk_unlocker', { type: 'unblocker' }).then(() => 'ok'));
await step('ensureSerp', () => zones.ensureZone('sdk_serp', { type: 'serp' }).then(() => 'ok'));
await step('ensureMismatch', () => zones.ensureZone('sdk_static', { type: 'unblocker' }).then(() => 'ok'));
process.stdout.write(`${JSON.stringify(out)}\n`);
