import { FIELDS_PER_PIECE, walkAtOnce, walkInPieces } from '../shared/in-pieces.js';

// How deep a request body may nest. A body is parsed by JSON.parse, which takes any depth, but the
// handlers, validators and `structuredClone` recurse: a port's `rules` nested 3,000 deep once answered
// 500 (the stack ran out) and could leave a stored port that `GET /api/proxies` then failed on. A
// body nested deeper than this is refused before anything reads it, naming where it gets too deep.

/** Levels of objects and arrays a request body may nest (the spec's deepest body nests under 10). */
export const BODY_DEPTH_LIMIT = 64;

/**
 * The place in `value` where it nests deeper than `limit` (`body.proxy.rules[0].a…`, its first few
 * steps), or undefined when it does not. Iterative: a deep value cannot run this out of stack. Linear and
 * lean: one step per nested object or array (a leaf costs a type check), the path spelt only for the
 * place it returns (a body of 60,000 fields once cost an entry, a path and a string for each).
 */
export function tooDeep(value: unknown, limit = BODY_DEPTH_LIMIT, root = 'body'): string | undefined {
  return walkAtOnce(depthWalk(value, limit, root, Number.POSITIVE_INFINITY));
}

/** tooDeep in pieces of `fields` fields and items looked at, the event loop let go of between them. */
export function tooDeepInPieces(
  value: unknown,
  fields = FIELDS_PER_PIECE,
  limit = BODY_DEPTH_LIMIT,
  root = 'body',
): Promise<string | undefined> {
  return walkInPieces(depthWalk(value, limit, root, fields));
}

/** The walk of tooDeep, pausing (yielding) after every `fields` fields and items looked at. */
function* depthWalk(value: unknown, limit: number, root: string, fields: number): Generator<void, string | undefined> {
  interface Step {
    v: object;
    depth: number;
    up?: Step;
    step: string;
  }
  if (value === null || typeof value !== 'object') return undefined;
  const stack: Step[] = [{ v: value, depth: 0, step: '' }];
  let seen = 0;
  while (stack.length) {
    const at = stack.pop() as Step;
    if (at.depth >= limit) {
      const path: string[] = [];
      for (let s: Step | undefined = at; s?.up; s = s.up) path.push(s.step);
      path.reverse();
      return `${root}${path.slice(0, 4).join('')}${path.length > 4 ? '…' : ''}`;
    }
    const v = at.v as Record<string, unknown>;
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        if (++seen % fields === 0) yield;
        const x = v[i];
        if (x !== null && typeof x === 'object') stack.push({ v: x, depth: at.depth + 1, up: at, step: `[${i}]` });
      }
    } else {
      const keys = Object.keys(v);
      for (let i = 0; i < keys.length; i++) {
        if (++seen % fields === 0) yield;
        const k = keys[i] as string;
        const x = v[k];
        if (x !== null && typeof x === 'object') stack.push({ v: x, depth: at.depth + 1, up: at, step: `.${k}` });
      }
    }
  }
  return undefined;
}
