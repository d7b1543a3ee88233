import { isDeepStrictEqual } from 'node:util';
import { normalise, normaliseText } from './normalise.js';
import { type Answer, callPath, type Fingerprint, logByName, logInOrder, normaliseFingerprint, type Played } from './play.js';
import type { Step } from './steps.js';

// Comparing what the real manager and the sandbox did with one sequence, step by step, and holding a
// divergence to the list of known ones (the `differential` entries of packages/sandbox/parity.yaml).

export interface Divergence {
  /** The step's index; -1 for the start state. */
  step: number;
  /** The step's operationId, `traffic`, or `start`. */
  operation: string;
  classes: string[];
  /**
   * `status`, `media`, or the path of a value a user reads that differs: in the answer `body.<path>`
   * (`body.data.version`; array items `[]`; `body.(text)` for a text body, `body.(root)` for a JSON
   * scalar), `header.<name>`, for traffic `tunnel.<path>` and `target.count` / `target.requests[].<path>`
   * (what the loopback target received); in the state read after it `state:<part><path>`
   * (`state:settings.logs`, `state:logs?limit=2.log.entries[].details.password`); or
   * `spec:<operationId>`: an answer of the real manager to the step or to a read after it that does not
   * validate against the manager bundle (`real` says why).
   */
  differs: string;
  real: string;
  sandbox: string;
}

/**
 * One known divergence: globs (`*`, `{a,b}`, `<key>` for any key of a map keyed by data, such as
 * country codes) over the operation, one of the step's input classes, and what differs.
 */
export interface ListedDivergence {
  operation: string;
  input: string;
  differs: string;
  reason: string;
}

const globs = new Map<string, RegExp>();
export function glob(pattern: string, value: string): boolean {
  let re = globs.get(pattern);
  if (!re) {
    // `*` any text, `{a,b}` one of the words, `<key>` any one key of a map (no dot); everything else literally.
    const literal = (x: string) =>
      x
        .split('<key>')
        .map((part) => part.replace(/[.+?^$()|[\]\\]/g, '\\$&').replace(/\*/g, '.*'))
        .join('[^.\\[\\]]+');
    const body = pattern
      .split(/(\{[^{}]*\})/)
      .map((part) => (/^\{.*\}$/.test(part) ? `(?:${part.slice(1, -1).split(',').map(literal).join('|')})` : literal(part)))
      .join('');
    re = new RegExp(`^${body}$`);
    globs.set(pattern, re);
  }
  return re.test(value);
}

/** Whether an entry names a step's operation and one of its input classes (`*` names every step). */
export const exercises = (e: ListedDivergence, operation: string, classes: string[]) =>
  glob(e.operation, operation) && (e.input === '*' || classes.some((c) => glob(e.input, c)));

export const matches = (e: ListedDivergence, d: Divergence) => exercises(e, d.operation, d.classes) && glob(e.differs, d.differs);

/** What a `spec:` divergence says of the sandbox: its answers are held to the bundle by its own suites. */
const SPEC_NOT_COMPARED = '(not compared: the real answer does not validate against the manager bundle)';

const show = (x: unknown) => (x === undefined ? '(absent)' : JSON.stringify(x)).slice(0, 400);

const isObject = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null;

/**
 * Where two values differ: `[path, real, sandbox]` for each key or item that differs, an array's items
 * by index and named `[]` (so a path names the field, not the item's place). A whole value that differs
 * (another type, or a scalar) is named by `path` itself.
 */
export function valueDiffs(r: unknown, s: unknown, path: string): Array<[string, unknown, unknown]> {
  if (isDeepStrictEqual(r, s)) return [];
  if (isObject(r) && isObject(s) && Array.isArray(r) === Array.isArray(s)) {
    if (Array.isArray(r) && Array.isArray(s))
      return Array.from({ length: Math.max(r.length, s.length) }, (_, i) => valueDiffs(r[i], s[i], `${path}[]`)).flat();
    return [...new Set([...Object.keys(r), ...Object.keys(s)])].flatMap((k) => valueDiffs(r[k], s[k], `${path}.${k}`));
  }
  return [[path, r, s]];
}

/** Every path of a value (as valueDiffs names them), into `out`. */
export function pathsOf(x: unknown, path: string, out: Set<string>): Set<string> {
  out.add(path);
  if (Array.isArray(x)) for (const item of x) pathsOf(item, `${path}[]`, out);
  else if (isObject(x)) for (const [k, v] of Object.entries(x)) pathsOf(v, `${path}.${k}`, out);
  return out;
}

type Diff = Pick<Divergence, 'differs' | 'real' | 'sandbox'>;

/** Diffs by path, one per path (an array's items share theirs: the first shown). */
function byPath(diffs: Array<[string, unknown, unknown]>): Diff[] {
  const seen = new Map<string, Diff>();
  for (const [differs, r, s] of diffs) if (!seen.has(differs)) seen.set(differs, { differs, real: show(r), sandbox: show(s) });
  return [...seen.values()];
}

/** What a user reads of an answer, normalised, by path: `body.…` (JSON) or `body.(text)`, `header.<name>`, `tunnel.…`, `target.…`. */
function readable(a: Answer): Record<string, unknown> {
  const body = a.kind === 'json' ? a.value : a.kind === 'none' ? undefined : { '(text)': a.text };
  return {
    // A JSON body that is no object (a list, a scalar) is named `body.(root)` (its items `body.(root)[]`).
    ...(body === undefined ? {} : { body: a.kind === 'json' && (!isObject(body) || Array.isArray(body)) ? { '(root)': body } : body }),
    header: a.headers,
    ...(a.tunnel ? { tunnel: a.tunnel } : {}),
    ...(a.received ? { target: { count: a.received.length, requests: a.received } } : {}),
  };
}

/**
 * How two answers differ: another status alone (what follows may all follow from it), else the media
 * type and every value a user reads, by path.
 */
function answerDiffs(r: Answer, s: Answer): Diff[] {
  const head = (a: Answer) => `${a.status} ${a.media ?? '(no Content-Type)'} ${a.kind}`;
  const brief = (a: Answer) => `${head(a)} ${show(a.value ?? a.text)}`;
  if (r.status !== s.status) return [{ differs: 'status', real: brief(r), sandbox: brief(s) }];
  const out: Diff[] = [];
  if (r.media !== s.media || r.kind !== s.kind) out.push({ differs: 'media', real: head(r), sandbox: head(s) });
  const rr = readable(r);
  const ss = readable(s);
  // A body of another kind is one difference (its values are not comparable path by path).
  if (r.kind !== s.kind && (rr.body !== undefined || ss.body !== undefined)) {
    delete rr.body;
    delete ss.body;
  }
  out.push(...byPath(Object.keys({ ...rr, ...ss }).flatMap((k) => valueDiffs(rr[k], ss[k], k))));
  return out;
}

/** The paths of what a user reads of an answer, for staleness. */
const answerPaths = (a: Answer, out: Set<string>) => {
  for (const [k, v] of Object.entries(readable(a))) pathsOf(v, k, out);
  return out;
};

function stateDiffs(r: Fingerprint, s: Fingerprint, masked: Set<string>): Diff[] {
  const out: Diff[] = [];
  for (const part of [...new Set([...Object.keys(r), ...Object.keys(s)])].sort())
    for (const d of byPath(valueDiffs(r[part], s[part], `state:${part}`))) if (!masked.has(d.differs)) out.push(d);
  return out;
}

export interface Comparison {
  /** The first divergence the list does not explain, if any (with `survey`, every one). */
  unlisted: Divergence[];
  /** Listed divergences met, with every entry that explains each. */
  listed: Array<{ divergence: Divergence; entries: number[] }>;
  /**
   * Steps whose answers and state were compared (up to an answer divergence, which ends a comparison),
   * with every path either side's answer and state after it had (`status`, `media`, `body.…`, `state:…`).
   */
  compared: Array<{ operation: string; classes: string[]; paths: Set<string> }>;
}

/** A call step's query string (what a log answer was read with). */
const queryOf = (step: Step | undefined) => (step?.kind === 'call' ? (callPath(step).split('?')[1] ?? '') : '');

/** The answers and fingerprints of a played sequence, normalised with `off` turned off. */
export function normalised(p: Played, steps: Step[], off?: ReadonlySet<string>): { answers: Answer[]; fingerprints: Fingerprint[] } {
  const ctx = { ...p.ctx, ...(off ? { off } : {}) };
  const answer = (a: Answer, i: number): Answer => ({
    ...a,
    ...(a.headers ? { headers: normalise(a.headers, ctx) } : {}),
    ...(a.value !== undefined ? { value: logInOrder(normalise(logByName(a.value), ctx), queryOf(steps[i]), ctx) } : {}),
    ...(a.text !== undefined ? { text: normaliseText(a.text, ctx) } : {}),
    ...(a.tunnel ? { tunnel: normalise(a.tunnel, ctx) } : {}),
    ...(a.received ? { received: normalise(a.received, ctx) } : {}),
  });
  return { answers: p.answers.map(answer), fingerprints: p.fingerprints.map((f) => normaliseFingerprint(f, ctx)) };
}

/**
 * Step by step: the start state, then each step's answer, then the state after it, every value a user
 * reads, normalised (normalise.ts; `off` turns normalisations off, for the self-check). A listed
 * difference at a path of the state hides that path for the rest of the sequence (its later
 * differences follow from it); a listed difference in an answer's status ends the comparison (what
 * follows may all follow from it). The first unlisted difference ends it too, unless `survey` (then it is
 * taken as listed, to find the next).
 */
export function compare(
  steps: Step[],
  realPlayed: Played,
  sandboxPlayed: Played,
  listing: ListedDivergence[],
  survey = false,
  off?: ReadonlySet<string>,
): Comparison {
  const real = normalised(realPlayed, steps, off);
  const sandbox = normalised(sandboxPlayed, steps, off);
  const out: Comparison = { listed: [], compared: [], unlisted: [] };
  const masked = new Set<string>();
  const judge = (d: Divergence): boolean => {
    const entries = listing.flatMap((e, i) => (matches(e, d) ? [i] : []));
    if (!entries.length) {
      out.unlisted.push(d);
      return survey;
    }
    out.listed.push({ divergence: d, entries });
    return true;
  };
  const stateAt = (i: number, operation: string, classes: string[]): boolean => {
    for (const x of stateDiffs(real.fingerprints[i + 1] as Fingerprint, sandbox.fingerprints[i + 1] as Fingerprint, masked)) {
      if (!judge({ step: i, operation, classes, ...x })) return false;
      masked.add(x.differs);
    }
    return true;
  };
  const statePaths = (i: number, paths: Set<string>) => {
    for (const fp of [real.fingerprints[i + 1], sandbox.fingerprints[i + 1]] as Fingerprint[])
      for (const [part, v] of Object.entries(fp)) pathsOf(v, `state:${part}`, paths);
    return paths;
  };
  // A real answer that does not validate is judged once per sequence: the reads after each step see it again.
  const specAt = (i: number, operation: string, classes: string[]): boolean => {
    for (const v of realPlayed.violations[i + 1] ?? []) {
      const key = `spec:${v.operation}|${v.problem}`;
      if (masked.has(key)) continue;
      masked.add(key);
      const d = { step: i, operation, classes, differs: `spec:${v.operation}`, real: v.problem, sandbox: SPEC_NOT_COMPARED };
      if (!judge(d)) return false;
    }
    return true;
  };
  out.compared.push({ operation: 'start', classes: ['start'], paths: statePaths(-1, new Set()) });
  if (!specAt(-1, 'start', ['start']) || !stateAt(-1, 'start', ['start'])) return out;
  for (const [i, step] of steps.entries()) {
    const operation = step.kind === 'call' ? step.operationId : 'traffic';
    const r = real.answers[i] as Answer;
    const s = sandbox.answers[i] as Answer;
    const paths = new Set(['status', 'media']);
    out.compared.push({ operation, classes: step.classes, paths });
    if (!specAt(i, operation, step.classes)) return out;
    const diffs = answerDiffs(r, s);
    answerPaths(r, paths);
    answerPaths(s, paths);
    for (const a of diffs) if (!judge({ step: i, operation, classes: step.classes, ...a })) return out;
    // Another status is another outcome, and what follows may all follow from it: the comparison ends.
    if (diffs.some((a) => a.differs === 'status')) return out;
    statePaths(i, paths);
    if (!stateAt(i, operation, step.classes)) return out;
  }
  return out;
}

/** What a `differs` names when it is no path of a value: compared whole, by nature. */
const WHOLE = /^(status|media|route|spec:.+)$/;
/** Globs an exact path may carry: over the ports a part is read for, and over the log's filters. */
const PART_GLOBS = /^state:(?:(?:ports|running|bans|sessions):\*|logs\?\*)/;
/** Parts that are only read whole as containers: a difference there must name its field. */
const CONTAINERS = /^(?:body|header|tunnel|target|target\.requests(?:\[\])?|state:(?:logs\?[^.]*|stats|settings|ports|running)(?:\.log)?)$/;

/**
 * Why a listed `differs` does not name an exact path, or undefined when it does: `status`, `media`,
 * `route`, `spec:<op>` (an operationId, or the method and path of a route the spec lacks), or the path of one value (`body.data.version`,
 * `state:logs?*.log.entries[].details.password`), never a whole body, a whole log or `*` over paths.
 */
export function inexact(differs: string): string | undefined {
  if (WHOLE.test(differs)) return undefined;
  if (!/^(body|header|tunnel|target|state:)/.test(differs))
    return 'names no path (status, media, route, spec:<op>, body.…, header.…, tunnel.…, target.…, state:…)';
  const path = differs.replace(PART_GLOBS, 'state:part');
  if (path.includes('*')) return '`*` over a path (only a port number or a log filter may be `*`)';
  if (CONTAINERS.test(differs.replace(PART_GLOBS, (m) => m.replace('*', 'x')))) return 'a whole body, log, header set or state part';
  return undefined;
}

/** Whether an entry names a path of a value (its staleness is then judged by the path's presence). */
export const namesPath = (e: ListedDivergence) => !WHOLE.test(e.differs);
