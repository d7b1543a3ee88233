import { isDeepStrictEqual } from 'node:util';
import type { Answer, Fingerprint, Played } from './play.js';
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
   * `status`, `media`, `body`, `state:<part>` (e.g. `state:settings.logs`, `state:running:24000.ssl`,
   * `state:logs?limit=2`), or `spec:<operationId>`: an answer of the real manager to the step or to a read
   * after it that does not validate against the manager bundle (`real` says why).
   */
  differs: string;
  real: string;
  sandbox: string;
}

/** One known divergence: globs (`*`, `{a,b}`) over the operation, one of the step's input classes, and what differs. */
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
    // `*` any text, `{a,b}` one of the words; everything else literally.
    const literal = (x: string) => x.replace(/[.+?^$()|[\]\\]/g, '\\$&').replace(/\*/g, '.*');
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

/** Where two shapes differ: `[path, real, sandbox]` for each key or item that differs (a path `.` for the whole). */
export function shapeDiffs(r: unknown, s: unknown, path = ''): Array<[string, unknown, unknown]> {
  if (isDeepStrictEqual(r, s)) return [];
  const isObject = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null;
  if (isObject(r) && isObject(s) && Array.isArray(r) === Array.isArray(s))
    return [...new Set([...Object.keys(r), ...Object.keys(s)])].flatMap((k) => shapeDiffs(r[k], s[k], `${path}.${k}`));
  return [[path || '.', r, s]];
}

function answerDiff(r: Answer, s: Answer): Pick<Divergence, 'differs' | 'real' | 'sandbox'> | undefined {
  const head = (a: Answer) => `${a.status} ${a.media ?? '(no Content-Type)'} ${a.kind}`;
  if (r.status !== s.status)
    return { differs: 'status', real: `${head(r)} ${show(r.value ?? r.text)}`, sandbox: `${head(s)} ${show(s.value ?? s.text)}` };
  if (r.media !== s.media || r.kind !== s.kind) return { differs: 'media', real: head(r), sandbox: head(s) };
  if (r.kind === 'json' && !isDeepStrictEqual(r.shape, s.shape)) {
    // What differs, by path: a whole shape cut at 400 characters hid it in a large body.
    const at = shapeDiffs(r.shape, s.shape);
    const side = (i: 1 | 2) => show(Object.fromEntries(at.map((d) => [d[0], d[i] === undefined ? '(absent)' : d[i]])));
    return { differs: 'body', real: side(1), sandbox: side(2) };
  }
  if (r.kind === 'text' && r.text !== s.text) return { differs: 'body', real: show(r.text), sandbox: show(s.text) };
  return undefined;
}

function stateDiffs(r: Fingerprint, s: Fingerprint, masked: Set<string>): Array<Pick<Divergence, 'differs' | 'real' | 'sandbox'>> {
  const out = [];
  for (const part of [...new Set([...Object.keys(r), ...Object.keys(s)])].sort()) {
    if (masked.has(part) || isDeepStrictEqual(r[part], s[part])) continue;
    out.push({ differs: `state:${part}`, real: show(r[part]), sandbox: show(s[part]) });
  }
  return out;
}

export interface Comparison {
  /** The first divergence the list does not explain, if any (with `survey`, every one). */
  unlisted: Divergence[];
  /** Listed divergences met, with every entry that explains each. */
  listed: Array<{ divergence: Divergence; entries: number[] }>;
  /** Steps whose answers and state were compared (up to an answer divergence, which ends a comparison). */
  compared: Array<{ operation: string; classes: string[] }>;
}

/**
 * Step by step: the start state, then each step's answer, then the state after it. A listed
 * difference in a part of the state hides that part for the rest of the sequence (its later
 * differences follow from it); a listed difference in an answer's status ends the comparison (what
 * follows may all follow from it). The first unlisted difference ends it too, unless `survey` (then it is
 * taken as listed, to find the next).
 */
export function compare(steps: Step[], real: Played, sandbox: Played, listing: ListedDivergence[], survey = false): Comparison {
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
      masked.add(x.differs.slice('state:'.length));
    }
    return true;
  };
  // A real answer that does not validate is judged once per sequence: the reads after each step see it again.
  const specAt = (i: number, operation: string, classes: string[]): boolean => {
    for (const v of real.violations[i + 1] ?? []) {
      const key = `spec:${v.operation}|${v.problem}`;
      if (masked.has(key)) continue;
      masked.add(key);
      const d = { step: i, operation, classes, differs: `spec:${v.operation}`, real: v.problem, sandbox: SPEC_NOT_COMPARED };
      if (!judge(d)) return false;
    }
    return true;
  };
  if (!specAt(-1, 'start', ['start']) || !stateAt(-1, 'start', ['start'])) return out;
  for (const [i, step] of steps.entries()) {
    const operation = step.kind === 'call' ? step.operationId : 'traffic';
    out.compared.push({ operation, classes: step.classes });
    if (!specAt(i, operation, step.classes)) return out;
    const a = answerDiff(real.answers[i] as Answer, sandbox.answers[i] as Answer);
    // Another status is another outcome, and what follows may all follow from it: the comparison ends.
    // Another media type or body with the same status leaves the state to be compared.
    if (a && (!judge({ step: i, operation, classes: step.classes, ...a }) || a.differs === 'status')) return out;
    if (!stateAt(i, operation, step.classes)) return out;
  }
  return out;
}
