import type { OpenApiDoc } from '@zone-api/spec/model';
import { Conformance } from '@zone-api/spec/model';
import fc from 'fast-check';
import { type Comparison, compare, type Divergence, exercises, glob, type ListedDivergence, matches, namesPath } from './compare.js';
import type { NormaliseContext } from './normalise.js';
import { EXTRA_ROUTES, fetchAgainOnClosed, type Played, play, type Received, type Target } from './play.js';
import { reproduction } from './repro.js';
import { PORT_SLOTS, type Route, type Step, sequences } from './steps.js';

// The differential suite's driver: fast-check draws sequences (steps.ts), each is played against the
// real manager and against the sandbox from the same start state (play.ts), compared step by step
// (compare.ts), and every answer of the real manager is held to the bundle (a `spec:` divergence when
// it does not validate); a divergence parity.yaml does not list fails the property, and fast-check
// shrinks the sequence to the shortest that still diverges, printed as a runnable reproduction (repro.ts).

export { type Divergence, glob, inexact, type ListedDivergence, matches, valueDiffs } from './compare.js';
export {
  NORMALISATIONS,
  type NormalisationName,
  type NormaliseContext,
  normalise,
  normaliseText,
  withoutOpenSslThread,
} from './normalise.js';
export { EXTRA_ROUTES, encodeBody, fingerprint, LOG_FILTERS, type Received, type Target } from './play.js';
export { curlLine, reproduction } from './repro.js';
export { SELF_CHECK_SEQUENCES, type SelfCheckReport, selfCheck } from './selfcheck.js';
export {
  callOf,
  generatedOperations,
  NOT_DRAWN_ROUTES,
  NOT_GENERATED,
  PORT_SLOTS,
  type Route,
  routesBeyondSpec,
  type Step,
  sequences,
  trafficStep,
} from './steps.js';

export interface DifferentialOptions {
  doc: OpenApiDoc;
  real: Target;
  sandbox: Target;
  /** The loopback target (`http://127.0.0.1:N`) the traffic steps ask through the ports. */
  targetUrl: string;
  listing: ListedDivergence[];
  seed: number;
  /** How many sequences to draw (fewer when the time runs out). */
  runs: number;
  maxSteps: number;
  /** Drawing and shrinking stop after this long (the runs done so far count). */
  timeLimitMs: number;
  /** Collect every first divergence, listed or not, instead of stopping at an unlisted one. */
  survey?: boolean;
  /** What the loopback target received since the last call (each call empties it). */
  received?: () => Received[];
  /** The real manager's own routes (its route table): those the spec does not describe are drawn too. */
  routes?: Route[];
  /** Draw beyond the spec: `routes`, the spec's calls with a trailing slash, in upper case and as HEAD, and gen_token. */
  beyond?: boolean;
  /** Sequences written by hand, played first and as written (fast-check's examples; they count in `runs`). */
  examples?: Step[][];
  log?: (line: string) => void;
}

export interface SurveyEntry {
  divergence: Divergence;
  steps: Step[];
  times: number;
}

export interface DifferentialReport {
  seed: number;
  /** Sequences played on both sides (shrinking included). */
  sequences: number;
  steps: number;
  interrupted: boolean;
  /** Parts of the state read through routes outside the seed that one of the two does not serve (not compared). */
  routesMissing: Divergence[];
  /** How often each listing entry explained a divergence. */
  listedHits: number[];
  /** Entries with a named input class played STALE_AFTER times or more whose difference never showed. */
  stale: ListedDivergence[];
  /** Other entries played and not shown in this run (fewer times, or for any input): reported, not failed. */
  unseen: ListedDivergence[];
  /** The shrunk failing sequence, its divergence and reproduction. */
  failure?: { steps: Step[]; divergence: Divergence; reproduction: string; shrinks: number };
  survey: SurveyEntry[];
}

/**
 * An entry is stale once its operation and input have been compared this many times without its
 * difference showing: fewer may just not have met the state it needs (a port that exists, a ban).
 */
export const STALE_AFTER = 3;

const ctxOf = (t: Target, targetPort: number): NormaliseContext => ({ wwwPort: t.wwwPort, targetPort });

/**
 * The parts of the fingerprint read through routes the seed does not list (EXTRA_ROUTES): those both
 * targets serve with JSON for a port that exists are read; the others come back as divergences.
 */
const routeClass = (route: (port: number) => string) => `GET ${route(0).replace('/0', '/:port')}`;

async function probeRoutes(o: DifferentialOptions): Promise<{ extra: Array<keyof typeof EXTRA_ROUTES>; missing: Divergence[] }> {
  const extra: Array<keyof typeof EXTRA_ROUTES> = [];
  const missing: Divergence[] = [];
  const port = PORT_SLOTS[0];
  const probe = async (t: Target) => {
    await t.reset();
    await fetchAgainOnClosed(`${t.url}/api/proxies`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ proxy: { port, zone: 'static_zone' } }),
    });
    const out: Record<string, string> = {};
    for (const [name, route] of Object.entries(EXTRA_ROUTES)) {
      const res = await fetchAgainOnClosed(`${t.url}${route(port)}`);
      out[name] = `${res.status} ${res.headers.get('content-type')?.split(';')[0] ?? '(no Content-Type)'}`;
      await res.arrayBuffer();
    }
    await t.reset();
    return out;
  };
  const r = await probe(o.real);
  const s = await probe(o.sandbox);
  for (const name of Object.keys(EXTRA_ROUTES) as Array<keyof typeof EXTRA_ROUTES>) {
    if (r[name] === s[name] && r[name]?.startsWith('200 application/json')) extra.push(name);
    else
      missing.push({
        step: -1,
        operation: 'fingerprint',
        classes: [routeClass(EXTRA_ROUTES[name])],
        differs: 'route',
        real: r[name] ?? '',
        sandbox: s[name] ?? '',
      });
  }
  return { extra, missing };
}

export async function runDifferential(o: DifferentialOptions): Promise<DifferentialReport> {
  const log = o.log ?? (() => {});
  const targetPort = Number(new URL(o.targetUrl).port);
  const { extra, missing } = await probeRoutes(o);
  const report: DifferentialReport = {
    seed: o.seed,
    sequences: 0,
    steps: 0,
    interrupted: false,
    routesMissing: missing,
    listedHits: o.listing.map(() => 0),
    stale: [],
    unseen: [],
    survey: [],
  };
  const exercised = o.listing.map(() => 0);
  const survey = new Map<string, SurveyEntry>();
  // Every route was probed, served by both or not: an entry for one that both serve now is stale.
  for (const route of Object.values(EXTRA_ROUTES)) {
    const classes = [routeClass(route)];
    o.listing.forEach((e, i) => {
      if (exercises(e, 'fingerprint', classes)) (exercised[i] as number) += STALE_AFTER;
    });
  }
  for (const d of missing)
    o.listing.forEach((e, i) => {
      if (matches(e, d)) (report.listedHits[i] as number)++;
    });

  // Every answer of the real manager is held to the bundle (the sandbox's are, in its own suites).
  const spec = new Conformance(o.doc);
  const both = async (steps: Step[]): Promise<{ real: Played; sandbox: Played; c: Comparison }> => {
    const opts = (t: Target) => ({
      targetUrl: o.targetUrl,
      ctx: ctxOf(t, targetPort),
      extra,
      ...(o.received ? { received: o.received } : {}),
    });
    const real = await play(o.real, steps, { ...opts(o.real), spec });
    await o.real.reset();
    const sandbox = await play(o.sandbox, steps, opts(o.sandbox));
    await o.sandbox.reset();
    return { real, sandbox, c: compare(steps, real, sandbox, o.listing, o.survey) };
  };

  let last: { steps: Step[]; divergence: Divergence } | undefined;
  const property = fc.asyncProperty(sequences(o.doc, o.maxSteps, undefined, o.routes, o.beyond), async (steps) => {
    const { c } = await both(steps);
    report.sequences++;
    report.steps += steps.length;
    for (const x of c.listed) for (const i of x.entries) (report.listedHits[i] as number)++;
    // An entry is exercised by a step of its operation and input that had its path (on either side).
    for (const s of c.compared)
      o.listing.forEach((e, i) => {
        if (exercises(e, s.operation, s.classes) && (!namesPath(e) || [...s.paths].some((p) => glob(e.differs, p))))
          (exercised[i] as number)++;
      });
    if (report.sequences % 5 === 0) log(`${report.sequences} sequences, ${report.steps} steps`);
    const [first] = c.unlisted;
    if (!first) return true;
    if (o.survey) {
      for (const d of c.unlisted) {
        const key = `${d.operation} | ${d.differs.replace(/\d{4,5}/g, 'N')} | ${d.classes.filter((x) => !x.startsWith('query:')).join(',')}`;
        const seen = survey.get(key);
        const upTo = steps.slice(0, d.step + 1);
        if (!seen || seen.steps.length > upTo.length) survey.set(key, { divergence: d, steps: upTo, times: (seen?.times ?? 0) + 1 });
        else seen.times++;
      }
      return true;
    }
    last = { steps, divergence: first };
    return false;
  });
  const result = await fc.check(property, {
    seed: o.seed,
    numRuns: o.runs,
    examples: (o.examples ?? []).map((steps): [Step[]] => [steps]),
    interruptAfterTimeLimit: o.timeLimitMs,
    markInterruptAsFailure: false,
  });
  report.interrupted = result.interrupted;
  if (result.failed && !last) throw result.errorInstance ?? new Error('the differential property failed without a divergence');
  if (result.failed && result.counterexample) {
    const [shrunk] = result.counterexample as [Step[]];
    // The shrunk sequence once more, for the divergence it shows (the last failing run was it, or one of its size),
    // up to the step that diverges.
    const again = (await both(shrunk)).c.unlisted[0] ?? last?.divergence;
    const steps = again ? shrunk.slice(0, again.step + 1) : shrunk;
    if (again)
      report.failure = {
        steps,
        divergence: again,
        shrinks: result.numShrinks,
        reproduction: reproduction(steps, again, { seed: o.seed, path: result.counterexamplePath ?? undefined }),
      };
  }
  // An entry with a named input class is stale once it was exercised STALE_AFTER times (for a path:
  // steps of its operation and input where the path was there, on either side) without differing. An
  // entry for any input (`*`) may need a state the run did not reach (a port the network refuses, a
  // rule that fired): it is reported when it did not show.
  const stale = (e: ListedDivergence, i: number) => e.input !== '*' && (exercised[i] as number) >= STALE_AFTER;
  report.stale = o.listing.filter((e, i) => stale(e, i) && report.listedHits[i] === 0);
  report.unseen = o.listing.filter((e, i) => !stale(e, i) && (exercised[i] as number) > 0 && report.listedHits[i] === 0);
  report.survey = [...survey.values()].sort((a, b) => b.times - a.times);
  return report;
}
