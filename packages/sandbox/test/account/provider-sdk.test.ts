import { bdclient } from '@brightdata/sdk';
import { Agent, type Dispatcher, getGlobalDispatcher, setGlobalDispatcher } from 'undici';
import { describe, expect, it } from 'vitest';
import { IGNORED_FIELDS_HEADER, NORMALIZED_FIELDS_HEADER } from '../../src/router/lenient-headers.js';
import { TOKEN, useSandbox } from '../helpers.js';

// The provider's own JS SDK (`@brightdata/sdk` 0.2.0), unmodified, against the sandbox. Its zone calls
// go through undici's global dispatcher to its fixed host; a dispatcher installed here for the length
// of each test sends them to the sandbox's loopback URL instead, and refuses anything else, so no
// request can leave loopback.
const SDK_ORIGIN = 'https://api.brightdata.com';

interface Seen {
  method: string;
  /** Where the SDK meant to send it. */
  url: string;
  /** Where it was sent. */
  sentTo: string;
  status?: number;
  headers?: Record<string, string | string[] | undefined>;
}

/** Runs `fn` with every undici request of the process redirected from the SDK's host to `target`, then restores the dispatcher. */
async function redirected<T>(target: string, fn: () => Promise<T>): Promise<{ result: T; seen: Seen[]; refused: string[] }> {
  const seen: Seen[] = [];
  const refused: string[] = [];
  const previous = getGlobalDispatcher();
  const agent = new Agent();
  const redirect = agent.compose((dispatch) => (opts: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler) => {
    const origin = String(opts.origin);
    if (origin !== SDK_ORIGIN) {
      // Not the SDK's host: never forwarded anywhere.
      refused.push(`${opts.method} ${origin}${opts.path}`);
      throw new Error(`test dispatcher: refusing ${origin}`);
    }
    const entry: Seen = { method: opts.method, url: `${origin}${opts.path}`, sentTo: `${target}${opts.path}` };
    seen.push(entry);
    const recording: Dispatcher.DispatchHandler = {
      onRequestStart: (controller, context) => handler.onRequestStart?.(controller, context),
      onRequestUpgrade: (controller, status, headers, socket) => handler.onRequestUpgrade?.(controller, status, headers, socket),
      onResponseStart: (controller, status, headers, message) => {
        entry.status = status;
        entry.headers = headers as Seen['headers'];
        return handler.onResponseStart?.(controller, status, headers, message);
      },
      onResponseData: (controller, chunk) => handler.onResponseData?.(controller, chunk),
      onResponseEnd: (controller, trailers) => handler.onResponseEnd?.(controller, trailers),
      onResponseError: (controller, error) => handler.onResponseError?.(controller, error),
    };
    return dispatch({ ...opts, origin: target }, recording);
  });
  setGlobalDispatcher(redirect);
  try {
    return { result: await fn(), seen, refused };
  } finally {
    setGlobalDispatcher(previous);
    await agent.close();
  }
}

type ZonesApi = { createZone(name: string, opts?: Record<string, unknown>): Promise<unknown> };
const zonesOf = (client: bdclient) => (client as unknown as { zonesAPI: ZonesApi }).zonesAPI;

/** What the dispatcher saw: only the SDK's host, only redirected to loopback. */
function expectOnlyLoopback(seen: Seen[], refused: string[], sandboxUrl: string) {
  expect(refused).toEqual([]);
  expect(seen.length).toBeGreaterThan(0);
  for (const s of seen) {
    expect(s.url.startsWith(`${SDK_ORIGIN}/`)).toBe(true);
    expect(s.sentTo.startsWith(`${sandboxUrl}/`)).toBe(true);
    expect(new URL(s.sentTo).hostname).toBe('127.0.0.1');
  }
}

describe('the provider SDK against the sandbox (default: lenient)', () => {
  const t = useSandbox();

  it('lists the active Zones and creates one; the Zone exists afterwards, and the sandbox said what it ignored', async () => {
    const client = new bdclient({ apiKey: TOKEN });
    const { result, seen, refused } = await redirected(t.sandbox.accountUrl, async () => {
      const before = await client.listZones();
      const created = await zonesOf(client).createZone('sdk_zone');
      const after = await client.listZones();
      return { before, created, after };
    });

    expectOnlyLoopback(seen, refused, t.sandbox.accountUrl);
    // Its own paths, without the seed's /api prefix.
    expect(seen.map((s) => `${s.method} ${new URL(s.url).pathname} ${s.status}`)).toEqual([
      'GET /zone/get_active_zones 200',
      'POST /zone 201',
      'GET /zone/get_active_zones 200',
    ]);

    expect(result.before.map((z: { name: string }) => z.name)).toEqual(['static_zone', 'res_zone', 'dc_zone_2', 'mob_zone']);
    expect(result.before.map((z: { type: string }) => z.type)).toEqual(['dc', 'res_rotating', 'dc', 'mobile']);
    expect(result.before.map((z: { status: string }) => z.status)).toEqual(['active', 'active', 'active', 'active']);
    expect(result.created).toMatchObject({ zone: { name: 'sdk_zone' }, plan: { type: 'static', bandwidth: 'payperusage' } });
    expect(result.after.map((z: { name: string }) => z.name)).toContain('sdk_zone');

    // The fields of its create body that neither the documentation nor the observed facts name, ignored and
    // listed (the observed `zone.type`, `plan.serp`, `plan.ub_premium` are kept); its default bandwidth normalised.
    const create = seen[1]?.headers ?? {};
    const ignored = String(create[IGNORED_FIELDS_HEADER.toLowerCase()]).split(', ');
    expect(ignored).toEqual(expect.arrayContaining(['body.plan.country', 'body.plan.pool_ip_type', 'body.plan.solve_captcha_disable']));
    expect(ignored).not.toContain('body.zone.type');
    expect(ignored).not.toContain('body.plan.serp');
    expect(create[NORMALIZED_FIELDS_HEADER.toLowerCase()]).toBe('body.plan.bandwidth (bandwidth -> payperusage)');
    expect(seen[0]?.headers?.[IGNORED_FIELDS_HEADER.toLowerCase()]).toBeUndefined();

    // The Zone really exists in the sandbox, as the seed's API reads it.
    const zone = t.sandbox.state().account.zones.find((z) => z.name === 'sdk_zone');
    expect(zone?.plans[0]).toMatchObject({ type: 'static', ips_type: 'shared', bandwidth: 'payperusage' });
    expect(zone?.plans[0]).toMatchObject({ serp: false, ub_premium: false });
    expect(zone?.plans[0]).not.toHaveProperty('pool_ip_type');
    const { data } = await t.account.getZone({ params: { query: { zone: 'sdk_zone' } } });
    expect(data?.plans?.[0]?.bandwidth).toBe('payperusage');
  });

  it('the dispatcher refuses any other host: the test cannot send traffic off loopback', async () => {
    const { result, seen, refused } = await redirected(t.sandbox.accountUrl, async () => {
      try {
        // A loopback address, so that even a dispatcher that failed to refuse would not leave the machine.
        await fetch('http://127.0.0.2:65535/');
        return 'sent';
      } catch {
        return 'refused';
      }
    });
    expect(result).toBe('refused');
    expect(seen).toEqual([]);
    expect(refused).toEqual(['GET http://127.0.0.2:65535/']);
  });
});

describe('the provider SDK against the sandbox with strict: true', () => {
  const t = useSandbox({ strict: true });

  it('refuses the same create, naming the fields the documentation does not know; nothing is created', async () => {
    const client = new bdclient({ apiKey: TOKEN });
    const { result, seen, refused } = await redirected(t.sandbox.accountUrl, async () => {
      const zones = await client.listZones();
      const error = await zonesOf(client)
        .createZone('sdk_zone')
        .then(
          () => undefined,
          (e: Error) => e,
        );
      return { zones, error };
    });
    expectOnlyLoopback(seen, refused, t.sandbox.accountUrl);
    expect(result.zones.length).toBe(4);
    expect(seen[1]?.status).toBe(400);
    expect(result.error?.name).toBe('ValidationError');
    expect(result.error?.message).toContain('"field":"body.zone.type","reason":"is not a known field"');
    expect(result.error?.message).toContain('"field":"body.plan.bandwidth"');
    expect(t.sandbox.state().account.zones.map((z) => z.name)).not.toContain('sdk_zone');
  });
});
