import { RE2JS } from 're2js';
import { DomainError } from './errors.js';

// The HAR log's `search`: a regular expression (RE2 syntax, matched in linear time, so backreferences
// and lookaround are refused) within bounds. RE2 is linear in the text, but its cost per character
// grows with the compiled pattern: a 961-character pattern over a full log held the event loop for
// 10-68 s. So the pattern's length and compiled size are bounded, the matching runs in slices of a
// fixed number of steps with the event loop free between them, and a search that would take more
// steps in all is refused. A step is one instruction of the compiled pattern over one character of a
// URL (`programSize() x (length + 1)`, RE2's worst case), so the bounds do not depend on the machine.

export const SEARCH_LIMITS = {
  /** Characters of a pattern. */
  length: 256,
  /** Instructions of a compiled pattern (`a{1000}` is short but large). */
  program: 2_000,
  /** Steps of one search over the whole log. */
  steps: 200_000_000,
  /** Steps between two yields to the event loop. */
  slice: 500_000,
} as const;

/** A refused pattern: the handler names its field (the manager's `query.search`). */
const refuse = (reason: string) => new DomainError([{ reason }]);

/** `pattern` compiled, or a DomainError that says why not (the handler names the field). */
export function compileSearch(pattern: string): RE2JS {
  if (pattern.length > SEARCH_LIMITS.length) throw refuse(`is longer than ${SEARCH_LIMITS.length} characters`);
  let re: RE2JS;
  try {
    re = RE2JS.compile(pattern);
  } catch (err) {
    throw refuse(`is not a regular expression this sandbox can match in linear time (RE2 syntax): ${(err as Error).message.slice(0, 200)}`);
  }
  if (re.programSize() > SEARCH_LIMITS.program)
    throw refuse(`compiles to ${re.programSize()} instructions, more than the ${SEARCH_LIMITS.program} a search may take`);
  return re;
}

/**
 * A port rule's pattern (its `url`, `status` or `body`) as RE2 runs it, in linear time: each test reads
 * at most `steps` (instructions x characters) of its value, so a value longer than `steps / programSize()`
 * characters is tested on its first ones. The pattern is already a valid JavaScript expression; one RE2
 * cannot run (a backreference, lookaround) or larger than `program` instructions is unusable.
 */
export const RULE_PATTERN_LIMITS = { program: SEARCH_LIMITS.program, steps: 5_000_000 } as const;

/** `pattern` compiled for a rule, or why it cannot run in linear time (a message in the form of JavaScript's). */
export function compileRulePattern(pattern: string): RE2JS | string {
  const why = (reason: string) => `Invalid regular expression: /${pattern.slice(0, 200)}/: ${reason}`;
  let re: RE2JS;
  try {
    re = RE2JS.compile(pattern);
  } catch (err) {
    return why(
      `this sandbox runs rule patterns in linear time (RE2 syntax) and cannot run this one (${(err as Error).message.slice(0, 200)})`,
    );
  }
  if (re.programSize() > RULE_PATTERN_LIMITS.program)
    return why(`compiles to ${re.programSize()} instructions, more than the ${RULE_PATTERN_LIMITS.program} a rule pattern may take`);
  return re;
}

const yieldToLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * The items whose text (`textOf`) `pattern` finds, in order; all of them when there is no pattern. The
 * items are read as they are when the search starts. Rejects with a 400 naming `query.search` when the
 * pattern is out of bounds or the search would take more than `SEARCH_LIMITS.steps`.
 */
export async function searchAll<T>(items: readonly T[], pattern: string | undefined, textOf: (item: T) => string): Promise<T[]> {
  if (pattern === undefined) return [...items];
  const re = compileSearch(pattern);
  const size = re.programSize();
  const snapshot = [...items];
  let total = 0;
  for (const item of snapshot) total += size * (textOf(item).length + 1);
  if (total > SEARCH_LIMITS.steps)
    throw refuse(`would take ${total} steps over this log (pattern size x characters), more than the ${SEARCH_LIMITS.steps} allowed`);
  const out: T[] = [];
  let slice = 0;
  for (const item of snapshot) {
    const text = textOf(item);
    slice += size * (text.length + 1);
    if (slice > SEARCH_LIMITS.slice) {
      slice = 0;
      await yieldToLoop();
    }
    if (re.matcher(text).find()) out.push(item);
  }
  return out;
}
