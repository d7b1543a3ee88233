import { walkAtOnce, walkInPieces } from '../shared/in-pieces.js';

// A form body (application/x-www-form-urlencoded) read as the real manager reads one, in time linear in
// its text. The real one's body-parser 1.20.3 (types/urlencoded.js 158-190) hands the text to qs 6.13.0's
// `parse`, which builds the whole by merging each parameter's own small object into it; a list is then
// walked in full at every merge (Array#forEach over a sparse array walks its length) and the final
// compaction searches a list of every object seen for each one: 9,999 parameters `a[i]=1` (99 kB) held the
// event loop 1.08 s, and the time grows with the square of their number (issue 39). Here the same steps
// keep a list as a map of index to item while the form is read and make it an array once, at the end.
// The result is qs 6.13.0's with body-parser's options (test/router/form.test.ts compares them over
// generated forms): names nest by `[…]`, a list index up to `arrayLimit` makes a list (a larger one
// names a field), `[]` appends, a name repeated combines its values into a list, a parameter whose
// own-level value is empty adds nothing where something is already, and a name nested deeper than
// `depth` is refused (qs's RangeError under `strictDepth`, the real manager's 500).

/** How body-parser sets qs up for a form (types/urlencoded.js 170-176). */
export interface FormLimits {
  /** Levels of `[…]` a name may nest; one more is refused. */
  depth: number;
  /** The largest index `[n]` that makes a list. */
  arrayLimit: number;
  /** Parameters read; the rest of the text is not. */
  parameterLimit: number;
}

/** A name nested deeper than FormLimits.depth (qs's RangeError: the real manager answers 500). */
export class FormTooDeep extends RangeError {}

/**
 * A list while the form is read: its items by index, and its length as an array's (its last index + 1,
 * holes counted; a list never ends in a hole, so a copy's length is its last index + 1 too).
 */
class List {
  readonly items = new Map<number, Value>();
  length = 0;
  set(index: number, item: Value): void {
    this.items.set(index, item);
    if (index >= this.length) this.length = index + 1;
  }
  push(item: Value): void {
    this.set(this.length, item);
  }
  /** Its indexes in ascending order (an array's own order). */
  indexes(): number[] {
    return [...this.items.keys()].sort((a, b) => a - b);
  }
  /** `[first].concat(this)`: its items one place on, `first` before them (holes kept). */
  after(first: Value): List {
    const out = new List();
    out.set(0, first);
    for (const i of this.indexes()) out.set(i + 1, this.items.get(i) as Value);
    return out;
  }
  /** Its items at the same indexes (holes kept). */
  copy(): List {
    const out = new List();
    for (const i of this.indexes()) out.set(i, this.items.get(i) as Value);
    return out;
  }
  static of(...items: Value[]): List {
    const out = new List();
    for (const item of items) out.push(item);
    return out;
  }
}
type Fields = { [name: string]: Value };
/** `true`: a plain value merged into fields names a field (qs's `target[source] = true`). */
type Value = string | true | List | Fields;

const isContainer = (v: Value | undefined): v is List | Fields => typeof v === 'object';
/** A name that Object.prototype has: such a parameter is dropped (qs without `allowPrototypes`). */
const shadows = (name: string): boolean => Object.hasOwn(Object.prototype, name);

/** `+` as a space, then percent-decoded as UTF-8; what does not decode stays as it was (with its spaces). */
function decode(text: string): string {
  const spaced = text.replace(/\+/g, ' ');
  try {
    return decodeURIComponent(spaced);
  } catch {
    return spaced;
  }
}

/**
 * The form's names and their values, decoded; a name given more than once has the list of its values.
 * Brackets sent as `%5B`/`%5D` are read as brackets first, in names and values alike. A name's end is
 * the first `]=` of its parameter, else its first `=`; a parameter without one is a name with an empty value.
 */
function* readPairs(text: string, limit: number, every: number): Generator<void, Record<string, string | string[]>> {
  const pairs: Record<string, string | string[]> = Object.create(null);
  const parts = text.replace(/%5B/gi, '[').replace(/%5D/gi, ']').split('&', limit);
  let count = 0;
  for (const part of parts) {
    if (++count % every === 0) yield;
    const bracketEquals = part.indexOf(']=');
    const at = bracketEquals === -1 ? part.indexOf('=') : bracketEquals + 1;
    const name = decode(at === -1 ? part : part.slice(0, at));
    const value = at === -1 ? '' : decode(part.slice(at + 1));
    if (!Object.hasOwn(pairs, name)) pairs[name] = value;
    else {
      const seen = pairs[name] as string | string[];
      if (Array.isArray(seen)) seen.push(value);
      else pairs[name] = [seen, value];
    }
  }
  return pairs;
}

const SEGMENT = /\[[^[\]]*]/g;

/**
 * A name's steps: what comes before its first `[…]` (none when it starts with one), then each `[…]` that
 * holds no bracket, wherever it is (text between them is not read). Undefined for an empty name or one
 * with a step that Object.prototype has; FormTooDeep past `depth` steps in brackets.
 */
function stepsOf(name: string, depth: number): string[] | undefined {
  if (!name) return undefined;
  SEGMENT.lastIndex = 0;
  let segment = SEGMENT.exec(name);
  const parent = segment ? name.slice(0, segment.index) : name;
  const steps: string[] = [];
  if (parent) {
    if (shadows(parent)) return undefined;
    steps.push(parent);
  }
  for (let count = 0; segment !== null && count < depth; count++) {
    if (shadows(segment[0].slice(1, -1))) return undefined;
    steps.push(segment[0]);
    segment = SEGMENT.exec(name);
  }
  if (segment) throw new FormTooDeep(`a form name nests deeper than ${depth} levels`);
  return steps;
}

/** One parameter's own value: its steps from the innermost out, a list for `[]` and `[n]`, fields otherwise. */
function nest(steps: string[], leaf: string | string[], arrayLimit: number): Value {
  let value: Value = Array.isArray(leaf) ? List.of(...leaf) : leaf;
  for (let i = steps.length - 1; i >= 0; i--) {
    const step = steps[i] as string;
    if (step === '[]') {
      // `[].concat(value)`: a list's items (a copy), else the value alone.
      value = value instanceof List ? value.copy() : List.of(value);
      continue;
    }
    const name = step.startsWith('[') && step.endsWith(']') ? step.slice(1, -1) : step;
    const index = Number.parseInt(name, 10);
    if (step !== name && !Number.isNaN(index) && String(index) === name && index >= 0 && index <= arrayLimit) {
      const list = new List();
      list.set(index, value);
      value = list;
    } else {
      const fields: Fields = {};
      // stepsOf already dropped the parameter; kept so that no step can ever set a prototype.
      if (name !== '__proto__') fields[name] = value;
      value = fields;
    }
  }
  return value;
}

/** The fields of `v` as Object.keys lists them: a list's indexes in ascending order, as text. */
const namesOf = (v: List | Fields): string[] => (v instanceof List ? v.indexes().map(String) : Object.keys(v));
const itemOf = (v: List | Fields, name: string): Value => (v instanceof List ? (v.items.get(Number(name)) as Value) : (v[name] as Value));

/**
 * `source` (one parameter's own value, or a part of it) merged into `target` (what the parameters before
 * it made), as qs merges: changes `target` where it can and returns what stands in its place.
 */
function merge(target: Value, source: Value | undefined): Value {
  if (!source) return target;
  if (!isContainer(source)) {
    if (target instanceof List) target.push(source);
    else if (isContainer(target)) {
      if (!shadows(source as string)) target[source as string] = true;
    } else return List.of(target, source);
    return target;
  }
  if (!isContainer(target)) return source instanceof List ? source.after(target) : List.of(target, source);
  if (target instanceof List && source instanceof List) {
    for (const i of source.indexes()) {
      const item = source.items.get(i) as Value;
      if (!target.items.has(i)) target.set(i, item);
      else {
        const at = target.items.get(i) as Value;
        if (isContainer(at) && isContainer(item)) target.items.set(i, merge(at, item));
        else target.push(item);
      }
    }
    return target;
  }
  let into: Fields;
  if (target instanceof List) {
    into = {};
    for (const i of target.indexes()) into[i] = target.items.get(i) as Value;
  } else into = target;
  for (const name of namesOf(source)) {
    const item = itemOf(source, name);
    into[name] = Object.hasOwn(into, name) ? merge(into[name] as Value, item) : item;
  }
  return into;
}

/** What the form reads as: each list an array of its items in order, holes dropped. */
function settle(value: Value): unknown {
  if (value instanceof List) return value.indexes().map((i) => settle(value.items.get(i) as Value));
  if (typeof value === 'object')
    for (const name of Object.keys(value)) (value as Record<string, unknown>)[name] = settle(value[name] as Value);
  return value;
}

/** Parameters read in one piece by parseFormInPieces: a few milliseconds of the event loop on a quiet machine. */
export const PARAMETERS_PER_PIECE = 1000;

/** The reading of a form, pausing (yielding) after every `every` parameters decoded and again after every `every` merged. */
export function* formWalk(text: string, limits: FormLimits, every: number): Generator<void, Record<string, unknown>> {
  const pairs = yield* readPairs(text, limits.parameterLimit, every);
  let whole: Value = {};
  let count = 0;
  for (const name of Object.keys(pairs)) {
    const steps = stepsOf(name, limits.depth);
    if (steps) whole = merge(whole, nest(steps, pairs[name] as string | string[], limits.arrayLimit));
    if (++count % every === 0) yield;
  }
  return settle(whole) as Record<string, unknown>;
}

/** A form body's text read as the real manager reads it (module comment), at once; FormTooDeep where it refuses it. */
export function parseForm(text: string, limits: FormLimits): Record<string, unknown> {
  return walkAtOnce(formWalk(text, limits, Number.POSITIVE_INFINITY));
}

/** parseForm in pieces of `every` parameters, the event loop let go of between them (for a large body). */
export function parseFormInPieces(text: string, limits: FormLimits, every = PARAMETERS_PER_PIECE): Promise<Record<string, unknown>> {
  return walkInPieces(formWalk(text, limits, every));
}
