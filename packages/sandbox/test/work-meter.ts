// A deterministic measure of the work a piece of code does, for tests of how work grows with input
// (linear or worse) without timing anything: the load of the machine does not change it.
//
// While `workOf` runs, the built-ins that walk a collection or a text are wrapped to add what they walk:
// an array's length for its searches and passes (`includes`, `indexOf`, `find`, `some`, `filter`, `map`,
// `forEach`, `reduce`, `slice`, `join`, `concat`, `sort`, … and its iterator, so each `for…of` over an array
// and each spread of one counts its length), a Set's or Map's size for each pass over it (its iterator,
// `forEach`, so each `[...set]`), `Object.keys`/`values`/`entries` the fields listed, a string's length
// for its searches (`indexOf` from where it starts to what it finds), splits and replaces and for each regex run over it, and the text `JSON.parse` reads
// and `JSON.stringify` writes. What the code does field by field in plain statements (a property read,
// a `Set.has`, a `delete`) counts nothing; a search of a growing list per field (`list.includes(name)`,
// `[...seen].includes(name)`) counts the list each time, so its count grows with the square of the fields.
// The wrappers are removed when `run` settles; everything the process runs meanwhile is counted, so a
// caller compares counts of the same operation at two input sizes (the rest is the same each time).

type Sizer = (self: unknown, args: unknown[], result: unknown) => number;

const lengthOf = (v: unknown): number => {
  const n = (v as { length?: unknown } | null | undefined)?.length;
  return typeof n === 'number' ? n : 0;
};
const sizeOf = (v: unknown): number => {
  const n = (v as { size?: unknown } | null | undefined)?.size;
  return typeof n === 'number' ? n : 0;
};
const ofThis: Sizer = (self) => lengthOf(self);
const ofSize: Sizer = (self) => sizeOf(self);
const ofResult: Sizer = (_self, _args, result) => lengthOf(result);
const ofFirstArg: Sizer = (_self, args) => lengthOf(args[0]);
const ofString: Sizer = (self) => (typeof self === 'string' ? self.length : self instanceof String ? self.length : 0);
/** A text's indexOf walks from its start position to what it found (or to the end): a scan with `indexOf(c, at + 1)` counts its text once. */
const ofSearchFrom: Sizer = (self, args, result) => {
  const length = typeof self === 'string' ? self.length : self instanceof String ? self.length : 0;
  const from = Math.min(Math.max(Math.trunc(Number(args[1]) || 0), 0), length);
  return typeof result === 'number' && result >= 0 ? result - from + 1 : length - from;
};
const ofInput: Sizer = (_self, args) => (typeof args[0] === 'string' ? args[0].length : 0);

const ARRAY_PASSES = [
  'includes',
  'indexOf',
  'lastIndexOf',
  'find',
  'findIndex',
  'findLast',
  'findLastIndex',
  'some',
  'every',
  'filter',
  'map',
  'forEach',
  'reduce',
  'reduceRight',
  'flat',
  'flatMap',
  'join',
  'slice',
  'splice',
  'concat',
  'sort',
  'reverse',
  'fill',
  'copyWithin',
  'values',
  'keys',
  'entries',
] as const;

/** Each wrapped built-in: where it lives, its name, and what one call of it walks. */
function targets(): Array<[object, PropertyKey, Sizer]> {
  const out: Array<[object, PropertyKey, Sizer]> = [];
  for (const name of ARRAY_PASSES) out.push([Array.prototype, name, ofThis]);
  out.push([Array.prototype, Symbol.iterator, ofThis]);
  out.push([Array, 'from', ofResult]);
  for (const proto of [Set.prototype, Map.prototype])
    for (const name of ['forEach', 'values', 'keys', 'entries', Symbol.iterator] as PropertyKey[]) out.push([proto, name, ofSize]);
  for (const name of ['keys', 'values', 'entries']) out.push([Object, name, ofResult]);
  out.push([Object, 'fromEntries', ofFirstArg]);
  out.push([String.prototype, 'indexOf', ofSearchFrom]);
  for (const name of ['includes', 'lastIndexOf', 'split', 'replace', 'replaceAll', 'startsWith', 'endsWith', 'search', 'match'])
    out.push([String.prototype, name, ofString]);
  for (const name of ['exec', 'test']) out.push([RegExp.prototype, name, ofInput]);
  out.push([JSON, 'parse', ofInput]);
  out.push([JSON, 'stringify', ofResult]);
  return out;
}

let running = false;

/**
 * The work `run` does (module comment): the sum of what the wrapped built-ins walked while it ran, and
 * its result. One at a time (the wrappers are global).
 */
export async function workOf<T>(run: () => Promise<T> | T): Promise<{ work: number; result: T }> {
  if (running) throw new Error('workOf: one measure at a time');
  running = true;
  const counter = { work: 0 };
  const saved: Array<[object, PropertyKey, PropertyDescriptor]> = [];
  try {
    for (const [owner, name, size] of targets()) {
      const desc = Object.getOwnPropertyDescriptor(owner, name);
      if (!desc || typeof desc.value !== 'function') continue;
      const original = desc.value as (...args: unknown[]) => unknown;
      saved.push([owner, name, desc]);
      let inside = false;
      const wrapped = function (this: unknown, ...args: unknown[]) {
        const result = original.apply(this, args);
        // The sizers read `length` and `size` only; a built-in called while counting is not counted again.
        if (!inside) {
          inside = true;
          counter.work += size(this, args, result);
          inside = false;
        }
        return result;
      };
      Object.defineProperty(owner, name, { ...desc, value: wrapped });
    }
    const result = await run();
    return { work: counter.work, result };
  } finally {
    for (const [owner, name, desc] of saved.reverse()) Object.defineProperty(owner, name, desc);
    running = false;
  }
}
