import { compare, type Divergence } from './compare.js';
import { NORMALISATIONS, type NormalisationName } from './normalise.js';
import { EXTRA_ROUTES, type Played, play, type Received, type Target } from './play.js';
import { PORT_SLOTS, type Step, TARGET_PORT } from './steps.js';

// The normalisations' proof (normalise.ts): the same sequences played on two real managers must agree
// once normalised, and must disagree with each normalisation turned off. A normalisation that two runs
// of the real manager never need hides a difference the sandbox could have; one they need and the list
// lacks fails the agreement.

export interface SelfCheckOptions {
  a: Target;
  b: Target;
  /** The loopback target for each side: two ports of one server, as two runs each have their own. */
  targetUrls: [string, string];
  received?: () => Received[];
  sequences?: Step[][];
}

export interface SelfCheckReport {
  /** Divergences between the two with every normalisation on: none when the list is complete. */
  agree: Divergence[];
  /** Per normalisation, the divergences with it turned off: some for each, or it is not needed. */
  without: Record<NormalisationName, Divergence[]>;
}

const [P0, P1] = PORT_SLOTS;
const call = (operationId: string, method: string, path: string, value?: unknown): Step => ({
  kind: 'call',
  operationId,
  method,
  path,
  query: [],
  ...(value === undefined ? {} : { body: { encoding: 'json' as const, value } }),
  classes: ['self-check'],
});
const traffic = (port: number, path: string): Step => ({ kind: 'traffic', port, path, classes: ['self-check'] });

/**
 * What the two runs play: each normalisation's value shows in them. Traffic fills the log (entry ids,
 * times, timelines, an order by id over five entries, the target's port in URLs); a port whose upstream
 * speaks no TLS (the target, named as its external proxy) answers with OpenSSL's error text; the
 * settings name the manager's own port and the machine's values; a new token goes into every port;
 * a log read answers with an `etag` of a body that holds times.
 */
export const SELF_CHECK_SEQUENCES: Step[][] = [
  [
    call('createProxy', 'POST', '/api/proxies', { proxy: { port: P0 } }),
    traffic(P0, '/t/1'),
    traffic(P0, '/status/404'),
    traffic(P0, '/t/2'),
    traffic(P0, '/t/3'),
    traffic(P0, '/t/4'),
    call('getLogs', 'GET', '/api/logs'),
    call('getSettings', 'GET', '/api/settings'),
  ],
  [
    call('createProxy', 'POST', '/api/proxies', {
      proxy: { port: P1, proxy_connection_type: 'https', ext_proxies: [`127.0.0.1:${TARGET_PORT}`] },
    }),
    traffic(P1, '/t/tls'),
  ],
  [call('createProxy', 'POST', '/api/proxies', { proxy: { port: P0 } }), call('getNewToken', 'GET', '/api/gen_token')],
];

export async function selfCheck(o: SelfCheckOptions): Promise<SelfCheckReport> {
  const extra = Object.keys(EXTRA_ROUTES) as Array<keyof typeof EXTRA_ROUTES>;
  const sides = [
    { t: o.a, targetUrl: o.targetUrls[0] },
    { t: o.b, targetUrl: o.targetUrls[1] },
  ];
  const played: Array<{ steps: Step[]; a: Played; b: Played }> = [];
  for (const steps of o.sequences ?? SELF_CHECK_SEQUENCES) {
    const run: Played[] = [];
    for (const { t, targetUrl } of sides) {
      const ctx = { wwwPort: t.wwwPort, targetPort: Number(new URL(targetUrl).port) };
      run.push(await play(t, steps, { targetUrl, ctx, extra, ...(o.received ? { received: o.received } : {}) }));
      await t.reset();
    }
    played.push({ steps, a: run[0] as Played, b: run[1] as Played });
  }
  const divergences = (off?: ReadonlySet<string>) => played.flatMap((p) => compare(p.steps, p.a, p.b, [], true, off).unlisted);
  const without = {} as Record<NormalisationName, Divergence[]>;
  for (const n of NORMALISATIONS) without[n.name] = divergences(new Set([n.name]));
  return { agree: divergences(), without };
}
