// @ts-check
// The operations of a bundle: merged parameters, request and response schemas, security, and the
// behaviour extensions (`x-` facts), read here once for every consumer.
import { deref, esc } from './refs.js';

/** @import { OpenApiDoc } from './bundles.js' */

/** The HTTP methods an OpenAPI path item may hold, in the specification's order. */
export const HTTP_METHODS = /** @type {const} */ (['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace']);

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
 * @property {string[]} [unchecked]  `x-observed-unchecked`: the request parts (`body`, `path`, `query`) the real program reads without checking them against their schemas
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
 * The value the spec gives as a parameter's example: its `example`, else the first of its `examples`,
 * else its schema's `example`; undefined when it gives none. What the code samples and the live probe send.
 * @param {Parameter} param
 * @returns {{ value: unknown } | undefined}
 */
export function parameterExample(param) {
  const p = param.definition;
  if (p.example !== undefined) return { value: p.example };
  const first = Object.values(p.examples ?? {})[0];
  if (first && typeof first === 'object' && 'value' in first) return { value: first.value };
  if (param.schema?.example !== undefined) return { value: param.schema.example };
  return undefined;
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
