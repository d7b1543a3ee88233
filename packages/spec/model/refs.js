// @ts-check
// JSON pointers and local `$ref`s within one bundle.

/** @import { OpenApiDoc } from './bundles.js' */

/** JSON pointer escaping of one segment (RFC 6901). @param {string} s */
export const esc = (s) => s.replace(/~/g, '~0').replace(/\//g, '~1');
/** @param {string} s */
const unesc = (s) => s.replace(/~1/g, '/').replace(/~0/g, '~');

/**
 * The node at a local JSON pointer (`#/a/b~1c`), or undefined when nothing is there.
 * @param {OpenApiDoc} doc
 * @param {string} pointer
 * @returns {any}
 */
export function resolvePointer(doc, pointer) {
  /** @type {any} */
  let node = doc;
  for (const segment of pointer.replace(/^#\/?/, '').split('/').filter(Boolean)) {
    if (node === null || typeof node !== 'object' || !Object.hasOwn(node, unesc(segment))) return undefined;
    node = node[unesc(segment)];
  }
  return node;
}

const MAX_REF_CHAIN = 32;

/**
 * Follows local `$ref`s from `node` (found at `pointer`) to what they name, through chains of
 * references. Returns that node and its pointer, so that a caller can both read it and hand Ajv a
 * pointer that resolves. A reference that names nothing, is not local, or loops is an error naming it.
 * @param {OpenApiDoc} doc
 * @param {any} node
 * @param {string} [pointer]
 * @returns {{ node: any, pointer: string }}
 */
export function deref(doc, node, pointer = '') {
  let n = node;
  let p = pointer;
  for (let i = 0; n !== null && typeof n === 'object' && typeof n.$ref === 'string'; i++) {
    const ref = n.$ref;
    if (i === MAX_REF_CHAIN) throw new Error(`$ref chain longer than ${MAX_REF_CHAIN} from ${pointer || ref} (a loop?)`);
    if (!ref.startsWith('#')) throw new Error(`$ref ${ref} at ${p || '(root)'} is not local: the bundles hold local references only`);
    n = resolvePointer(doc, ref);
    if (n === undefined) throw new Error(`Unresolvable $ref ${ref} at ${p || '(root)'}`);
    p = ref;
  }
  return { node: n, pointer: p };
}
