// How deep a request body may nest. A body is parsed by JSON.parse, which takes any depth, but the
// handlers, validators and `structuredClone` recurse: a port's `rules` nested 3,000 deep once answered
// 500 (the stack ran out) and could leave a stored port that `GET /api/proxies` then failed on. A
// body nested deeper than this is refused before anything reads it, naming where it gets too deep.

/** Levels of objects and arrays a request body may nest (the spec's deepest body nests under 10). */
export const BODY_DEPTH_LIMIT = 64;

/**
 * The place in `value` where it nests deeper than `limit` (`body.proxy.rules[0].a…`, its first few
 * steps), or undefined when it does not. Iterative: a deep value cannot run this out of stack.
 */
export function tooDeep(value: unknown, limit = BODY_DEPTH_LIMIT, root = 'body'): string | undefined {
  const stack: { v: unknown; depth: number; path: string[] }[] = [{ v: value, depth: 0, path: [] }];
  while (stack.length) {
    const { v, depth, path } = stack.pop() as (typeof stack)[number];
    if (v === null || typeof v !== 'object') continue;
    if (depth >= limit) return `${root}${path.slice(0, 4).join('')}${path.length > 4 ? '…' : ''}`;
    const entries = Array.isArray(v) ? v.map((x, i) => [`[${i}]`, x] as const) : Object.entries(v).map(([k, x]) => [`.${k}`, x] as const);
    for (const [step, x] of entries)
      if (x !== null && typeof x === 'object') stack.push({ v: x, depth: depth + 1, path: path.length < 5 ? [...path, step] : path });
  }
  return undefined;
}
