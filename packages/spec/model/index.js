// @ts-check
// The operation model: the one place that loads a bundle, follows its `$ref`s and lists its
// operations with what every consumer needs (merged parameters, request and response schemas,
// security, the `x-` behaviour facts), and compiles JSON Schema validators against it.
// The sandbox's router, the test kit, the fuzzer and the build scripts all read the bundles
// through this module. Plain JavaScript with JSDoc types, so that the build scripts run it before
// anything is compiled; `tsc` emits its declarations for the TypeScript packages.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

/** @typedef {'account' | 'manager'} ApiName */
/** @typedef {Record<string, any>} OpenApiDoc */

/** The APIs whose bundles this package ships. */
export const API_NAMES = /** @type {const} */ (['account', 'manager']);

/** The HTTP methods an OpenAPI path item may hold, in the specification's order. */
export const HTTP_METHODS = /** @type {const} */ (['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace']);

/** Where this package's bundles are built (`packages/spec/dist`, or `dist/` of an installed copy). */
export const bundleDir = fileURLToPath(new URL('../dist/', import.meta.url));

/**
 * Where one bundle is (or is written): `<dir>/<api>.openapi.<ext>`; `dir` defaults to this package's `dist/`.
 * @param {string} api
 * @param {{ ext?: 'json' | 'yaml', dir?: string }} [options]
 */
export const bundleFile = (api, options = {}) => join(options.dir ?? bundleDir, `${api}.openapi.${options.ext ?? 'json'}`);

/**
 * The path of one bundle (see `bundleFile`); throws, saying how to build it, when the file is missing.
 * @param {ApiName} api
 * @param {{ ext?: 'json' | 'yaml', dir?: string }} [options]
 */
export function bundlePath(api, options = {}) {
  const path = bundleFile(api, options);
  if (!existsSync(path)) throw new Error(`${path} is missing: run \`pnpm build\` (or \`pnpm bundle\`) at the repository's root`);
  return path;
}

/**
 * One bundle (JSON), parsed.
 * @param {ApiName} api
 * @param {{ dir?: string }} [options]
 * @returns {OpenApiDoc}
 */
export function loadBundle(api, options = {}) {
  const path = bundlePath(api, { dir: options.dir, ext: 'json' });
  try {
    return JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new Error(`Cannot read the ${api} bundle ${path}: ${/** @type {Error} */ (err).message}`);
  }
}

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

/**
 * @typedef {object} Parameter
 * @property {string} name
 * @property {'query' | 'path' | 'header' | 'cookie'} in
 * @property {boolean} required  path parameters are always required
 * @property {string} pointer  JSON pointer of the parameter object (after `$ref`s)
 * @property {any} definition  the parameter object itself
 * @property {string} schemaPointer  JSON pointer of its schema (for `content` parameters, the media type's schema)
 * @property {any} schema  that schema, `$ref`s followed
 * @property {string} [content]  for `content`-encoded parameters (JSON text in the query): the media type
 * @property {'integer' | 'number'} [numeric]  a number-only parameter: its schema's types are integer or number (and null)
 */

/**
 * @typedef {object} MediaDef
 * @property {string} schemaPointer
 * @property {any} schema  `$ref`s followed; undefined when the media type declares none
 * @property {any[]} examples  the values of its named examples, then its `example`
 */

/**
 * @typedef {object} ResponseDef
 * @property {string} status  `200`, `4XX`, `default`
 * @property {string} pointer  JSON pointer of the response object (after `$ref`s)
 * @property {string} description
 * @property {string[]} media  declared media types, in order; empty for a response without a body
 * @property {Record<string, MediaDef>} content
 */

/**
 * @typedef {object} Operation
 * @property {string} operationId
 * @property {typeof HTTP_METHODS[number]} method  lower case, as in the document
 * @property {string} path  the OpenAPI path, e.g. `/api/proxies/{port}`
 * @property {string} pointer  `#/paths/<path>/<method>`
 * @property {any} op  the operation object itself
 * @property {string[]} tags
 * @property {string} [summary]
 * @property {string} [description]
 * @property {boolean} deprecated
 * @property {Parameter[]} parameters  path-level and operation-level, the operation's overriding one with the same name and location
 * @property {{ required: boolean, pointer: string, media: string[], content: Record<string, MediaDef> }} [requestBody]
 * @property {ResponseDef[]} responses  in the document's order
 * @property {Record<string, string[]>[]} security  the effective requirements (the operation's, else the document's)
 * @property {string[]} credentials  the security schemes those requirements name, once each
 * @property {OperationFacts} facts  the behaviour extensions (specs/README.md), read here once for every consumer
 * @property {Record<string, any>} extensions  the operation's `x-` members as written, e.g. `x-codeSamples`
 */

/**
 * What the spec's behaviour extensions (specs/README.md) say of one operation. This is the one place
 * that reads them: the operation tables, the sandbox's router and the fuzzer ask here.
 * @typedef {object} OperationFacts
 * @property {boolean} idempotent  `x-idempotent`: safe to repeat
 * @property {boolean} changesState  `x-changes-state`: a successful call changes the server's state
 * @property {string[]} permissions  `x-permissions`: account permissions the credential needs
 * @property {boolean} [clientIpCheck]  `x-client-ip-check` (manager): the caller's IP must be allowed
 * @property {string} [brandPrefix]  `x-brand-prefix`: the path's prefix that stands for the program's brand (`pm` in `/api/pm_users`)
 * @property {Pagination} [pagination]  `x-pagination`: how to walk the pages
 * @property {string} [deprecatedReason]  `x-deprecated-reason`
 * @property {string[]} [unchecked]  `x-observed-unchecked`: the request parts (`body`, `path`) the real program reads without checking them against their schemas
 */

/**
 * `x-pagination` (specs/README.md).
 * @typedef {{ style: 'page', page: string, size: string } | { style: 'offset', offset: string, limit: string, items?: string, total?: string }} Pagination
 */

/**
 * The behaviour facts of one operation object. `x-idempotent` and `x-changes-state` must be booleans
 * where they are given (the zone-operation-behaviour lint rule requires them on every operation).
 * @param {any} op
 * @returns {OperationFacts}
 */
export function factsOf(op) {
  for (const key of ['x-idempotent', 'x-changes-state', 'x-client-ip-check']) {
    if (key in op && typeof op[key] !== 'boolean') throw new Error(`${op.operationId}: ${key} must be a boolean (specs/README.md)`);
  }
  /** @type {OperationFacts} */
  const facts = {
    idempotent: op['x-idempotent'] === true,
    changesState: op['x-changes-state'] === true,
    permissions: Array.isArray(op['x-permissions']) ? op['x-permissions'] : [],
  };
  if (typeof op['x-client-ip-check'] === 'boolean') facts.clientIpCheck = op['x-client-ip-check'];
  if (typeof op['x-brand-prefix'] === 'string') facts.brandPrefix = op['x-brand-prefix'];
  if (op['x-pagination'] && typeof op['x-pagination'] === 'object') facts.pagination = op['x-pagination'];
  if (typeof op['x-deprecated-reason'] === 'string') facts.deprecatedReason = op['x-deprecated-reason'];
  if (Array.isArray(op['x-observed-unchecked'])) facts.unchecked = op['x-observed-unchecked'];
  return facts;
}

/**
 * @param {OpenApiDoc} doc
 * @param {any} content
 * @param {string} base  pointer of the object holding `content`
 * @returns {Record<string, MediaDef>}
 */
function mediaOf(doc, content, base) {
  /** @type {Record<string, MediaDef>} */
  const out = {};
  for (const [media, m] of Object.entries(content ?? {})) {
    const schemaPointer = `${base}/content/${esc(media)}/schema`;
    const schema = m.schema === undefined ? undefined : deref(doc, m.schema, schemaPointer).node;
    const examples = Object.values(m.examples ?? {}).map((e) => deref(doc, e).node?.value);
    if ('example' in m) examples.push(m.example);
    out[media] = { schemaPointer, schema, examples };
  }
  return out;
}

/**
 * @param {OpenApiDoc} doc
 * @param {any} raw
 * @param {string} at
 * @returns {Parameter}
 */
function parameterOf(doc, raw, at) {
  const { node: p, pointer } = deref(doc, raw, at);
  const base = pointer || at;
  let schemaPointer = `${base}/schema`;
  let schemaNode = p.schema;
  /** @type {string | undefined} */
  let content;
  if (p.schema === undefined && p.content) {
    content = Object.keys(p.content)[0];
    schemaPointer = `${base}/content/${esc(/** @type {string} */ (content))}/schema`;
    schemaNode = p.content[/** @type {string} */ (content)]?.schema;
  }
  const schema = schemaNode === undefined ? {} : deref(doc, schemaNode, schemaPointer).node;
  /** @type {string[]} */
  const types = content ? [] : [].concat(schema?.type ?? []);
  const numeric =
    types.length && types.every((t) => t === 'integer' || t === 'number' || t === 'null')
      ? types.includes('number')
        ? 'number'
        : 'integer'
      : undefined;
  return {
    name: p.name,
    in: p.in,
    required: p.required === true || p.in === 'path',
    pointer: base,
    definition: p,
    schemaPointer,
    schema,
    ...(content ? { content } : {}),
    ...(numeric ? { numeric: /** @type {'integer' | 'number'} */ (numeric) } : {}),
  };
}

/**
 * The operations of a bundle, in the document's order, each with its merged parameters, bodies,
 * responses, effective security and `x-` facts.
 * @param {OpenApiDoc} doc
 * @returns {Operation[]}
 */
export function operations(doc) {
  /** @type {Operation[]} */
  const out = [];
  for (const [path, rawItem] of Object.entries(doc.paths ?? {})) {
    const itemPointer = `#/paths/${esc(path)}`;
    const item = deref(doc, rawItem, itemPointer).node;
    for (const method of HTTP_METHODS) {
      const op = item?.[method];
      if (!op) continue;
      const pointer = `${itemPointer}/${method}`;
      /** @type {Map<string, Parameter>} */
      const params = new Map();
      (item.parameters ?? []).forEach((/** @type {any} */ p, /** @type {number} */ i) => {
        const def = parameterOf(doc, p, `${itemPointer}/parameters/${i}`);
        params.set(`${def.in}:${def.name}`, def);
      });
      (op.parameters ?? []).forEach((/** @type {any} */ p, /** @type {number} */ i) => {
        const def = parameterOf(doc, p, `${pointer}/parameters/${i}`);
        params.set(`${def.in}:${def.name}`, def);
      });
      /** @type {Operation['requestBody']} */
      let requestBody;
      if (op.requestBody) {
        const { node: rb, pointer: rbPointer } = deref(doc, op.requestBody, `${pointer}/requestBody`);
        const content = mediaOf(doc, rb.content, rbPointer);
        requestBody = { required: rb.required === true, pointer: rbPointer, media: Object.keys(content), content };
      }
      /** @type {ResponseDef[]} */
      const responses = Object.entries(op.responses ?? {}).map(([status, raw]) => {
        const { node: r, pointer: rPointer } = deref(doc, raw, `${pointer}/responses/${esc(status)}`);
        const content = mediaOf(doc, r.content, rPointer);
        return { status, pointer: rPointer, description: r.description ?? '', media: Object.keys(content), content };
      });
      /** @type {Record<string, string[]>[]} */
      const security = op.security ?? doc.security ?? [];
      out.push({
        operationId: op.operationId,
        method,
        path,
        pointer,
        op,
        tags: op.tags ?? [],
        ...(op.summary !== undefined ? { summary: op.summary } : {}),
        ...(op.description !== undefined ? { description: op.description } : {}),
        deprecated: op.deprecated === true,
        parameters: [...params.values()],
        ...(requestBody ? { requestBody } : {}),
        responses,
        security,
        credentials: [...new Set(security.flatMap((req) => Object.keys(req)))],
        facts: factsOf(op),
        extensions: Object.fromEntries(Object.entries(op).filter(([k]) => k.startsWith('x-'))),
      });
    }
  }
  return out;
}

// ajv-formats is CommonJS: its default import is the module object in some loaders, the function in others.
const addFormats = /** @type {typeof addFormatsModule.default} */ (/** @type {any} */ (addFormatsModule).default ?? addFormatsModule);

/**
 * An Ajv for JSON Schema 2020-12 (the dialect of OpenAPI 3.1) with the standard formats, the one
 * configuration every validator of the project starts from.
 * @param {import('ajv').Options} [options]  e.g. `{ coerceTypes: true }`; `strict: false` and `allErrors: true` unless given
 */
export function createAjv(options = {}) {
  const ajv = new Ajv2020({ strict: false, allErrors: true, ...options });
  addFormats(ajv);
  return ajv;
}

/**
 * Validators against a whole bundle: `compile(pointer)` gives a validating function for the schema
 * at a pointer (cached), `validate(pointer, data)` the error text or null.
 * @param {OpenApiDoc} doc
 * @param {import('ajv').Options} [options]
 */
export function schemaValidator(doc, options = {}) {
  const ajv = createAjv(options);
  const id = `https://zone-api.local/${encodeURIComponent(doc.info?.title ?? 'api')}.json`;
  ajv.addSchema({ ...doc, $id: id });
  /** @type {Map<string, import('ajv').ValidateFunction>} */
  const cache = new Map();
  /** @param {string} pointer */
  const compile = (pointer) => {
    let fn = cache.get(pointer);
    if (!fn) {
      fn = ajv.compile({ $ref: `${id}#${encodeURI(pointer.replace(/^#/, ''))}` });
      cache.set(pointer, fn);
    }
    return fn;
  };
  return {
    ajv,
    compile,
    /**
     * Validates `data` against the schema at `pointer` (e.g. `#/components/schemas/Zone`); returns error text or null.
     * @param {string} pointer
     * @param {unknown} data
     */
    validate(pointer, data) {
      const fn = compile(pointer);
      return fn(data) ? null : ajv.errorsText(fn.errors, { dataVar: 'data' });
    },
  };
}
