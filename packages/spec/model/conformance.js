// @ts-check
// Holding an HTTP answer to a bundle: the project's one check of an answer against its spec, used by
// the sandbox's suites on every answer they see, by the differential suite on every answer of the real
// manager, and by the live probe (`@zone-api/probe`) on every answer of a team's own services.

import { operations as listOperations } from './operations.js';
import { deref, esc, resolvePointer } from './refs.js';
import { schemaValidator } from './validators.js';

/** @import { OpenApiDoc } from './bundles.js' */

/**
 * What is wrong with one answer:
 * - `no-operation`: the spec has no operation for the request (under `/api`);
 * - `status`: the status is not declared for the operation;
 * - `media-type`: the body comes in a media type the response does not declare (or none where one is);
 * - `missing-body`: an empty body where one is declared;
 * - `not-json`: a JSON media type whose body does not parse;
 * - `missing-field`, `wrong-type`, `wrong-value`: the body breaks its schema (`required`; `type`; anything else);
 * - `extra-field`: a field the schema does not declare (only with `undeclaredFields`: open schemas allow them).
 * @typedef {'no-operation' | 'status' | 'media-type' | 'missing-body' | 'not-json' | 'missing-field' | 'wrong-type' | 'wrong-value' | 'extra-field'} ProblemKind
 */

/**
 * @typedef {object} Problem
 * @property {ProblemKind} kind
 * @property {string} message  one line: where (`GET /api/zone getZone 200`) and what
 * @property {string} [at]  the JSON pointer into the body, for a schema problem
 */

/**
 * The pointer of the body schema of one response, following a `$ref`'d response object (e.g. to
 * `#/components/responses/NotFound`) so that the pointer resolves in Ajv.
 * @param {string} path
 * @param {string} method
 * @param {number | string} status
 * @param {string} [media]
 * @param {OpenApiDoc} [doc]
 */
export function responseSchemaPointer(path, method, status, media = 'application/json', doc) {
  const at = `#/paths/${esc(path)}/${method}/responses/${status}`;
  const base = doc ? deref(doc, resolvePointer(doc, at), at).pointer : at;
  return `${base}/content/${esc(media)}/schema`;
}

/** Members of a schema that make it more than "any object": where undeclared fields can be told apart. */
const STRUCTURE = ['properties', 'patternProperties', 'additionalProperties', 'unevaluatedProperties', 'allOf', 'anyOf', 'oneOf', '$ref'];
/** Members whose value is one schema in a value's place. */
const ONE_SCHEMA = ['schema', 'items', 'additionalProperties', 'unevaluatedItems'];
/** Members whose value maps names to schemas in a value's place. */
const NAMED_SCHEMAS = ['properties', 'patternProperties'];

/**
 * A copy of `doc` in which every schema that stands for a value (a body, a property, an item) also
 * refuses the fields it does not declare: it is wrapped in `{allOf: [it], unevaluatedProperties: false}`,
 * which JSON Schema 2020-12 evaluates through `$ref`, `allOf`, `anyOf` and `oneOf`, so that a field
 * declared by any branch counts as declared. Members of `allOf`/`anyOf`/`oneOf` are not wrapped (a
 * branch sees only its own fields), nor free-form objects (nothing declared, nothing to tell apart).
 * @param {OpenApiDoc} doc
 * @returns {OpenApiDoc}
 */
function closedCopy(doc) {
  const copy = structuredClone(doc);
  /** @param {any} schema */
  const structured = (schema) => {
    if (schema === null || typeof schema !== 'object') return false;
    const target = typeof schema.$ref === 'string' && schema.$ref.startsWith('#') ? resolvePointer(copy, schema.$ref) : schema;
    return (
      target !== null &&
      typeof target === 'object' &&
      STRUCTURE.some((k) => k in target && !(k === 'additionalProperties' && target[k] === true))
    );
  };
  /** @param {any} schema */
  const wrap = (schema) => (structured(schema) ? { allOf: [schema], unevaluatedProperties: false } : schema);
  const seen = new Set();
  /** @param {any} node */
  const walk = (node) => {
    if (node === null || typeof node !== 'object' || seen.has(node)) return;
    seen.add(node);
    for (const key of Object.keys(node)) {
      const value = node[key];
      walk(value);
      if (Array.isArray(node)) continue;
      if (ONE_SCHEMA.includes(key) && value && typeof value === 'object' && !Array.isArray(value)) node[key] = wrap(value);
      else if (NAMED_SCHEMAS.includes(key) && value && typeof value === 'object' && !Array.isArray(value))
        for (const name of Object.keys(value)) value[name] = wrap(value[name]);
      else if (key === 'prefixItems' && Array.isArray(value)) node[key] = value.map(wrap);
    }
  };
  // Only what a body is read through: the paths' media types and the components they reference.
  walk(copy.paths);
  walk(copy.components);
  return copy;
}

/** @param {import('ajv').ErrorObject} e @returns {ProblemKind} */
const kindOfError = (e) =>
  e.keyword === 'required'
    ? 'missing-field'
    : e.keyword === 'type'
      ? 'wrong-type'
      : e.keyword === 'unevaluatedProperties' || e.keyword === 'additionalProperties'
        ? 'extra-field'
        : 'wrong-value';

/**
 * @typedef {object} Route
 * @property {RegExp} re
 * @property {string} path
 * @property {string} method
 * @property {Record<string, any>} op
 */

/**
 * What `prism proxy --errors` would hold a server to, checked on every answer: the status is declared
 * for the operation, the media type is one it declares (or there is no body where none is declared),
 * and the body validates against the declared schema. With `undeclaredFields`, fields a schema does
 * not declare are reported too (`extra-field`), which an open schema otherwise allows.
 */
export class Conformance {
  /** Every problem `fetch` saw, as text. @type {string[]} */
  violations = [];

  /**
   * @param {OpenApiDoc} doc
   * @param {{ undeclaredFields?: boolean }} [options]
   */
  constructor(doc, options = {}) {
    this.doc = doc;
    this.validator = schemaValidator(doc);
    this.closed = options.undeclaredFields ? schemaValidator(closedCopy(doc)) : undefined;
    // A path whose prefix stands for the program's brand (`x-brand-prefix`: `/api/pm_users`) is served under any brand word (`/api/lpm_users`).
    /** @param {{ path: string, facts: { brandPrefix?: string } }} o */
    const pattern = (o) => {
      const brand = o.facts.brandPrefix;
      const path = brand ? o.path.replace(`/${brand}_`, '/\u0000_') : o.path;
      return path.replace(/\{[^}]+\}/g, '[^/]+').replace('\u0000', '[a-z]+');
    };
    /** @type {Route[]} */
    this.routes = listOperations(doc).map((o) => ({ re: new RegExp(`^${pattern(o)}$`), path: o.path, method: o.method, op: o.op }));
    /** A fetch that records every violation of the answers passing through it. */
    this.fetch = /** @type {typeof globalThis.fetch} */ (
      async (input, init) => {
        const request = new Request(input, init);
        const response = await globalThis.fetch(request);
        const text = await response.clone().text();
        this.violations.push(...this.check(request.method, request.url, response.status, response.headers.get('content-type'), text));
        return response;
      }
    );
  }

  /** @param {string} method @param {string} path */
  route(method, path) {
    return this.routes.find((r) => r.method === method.toLowerCase() && r.re.test(path));
  }

  /** The operationId a request names, if the spec has one for it. @param {string} method @param {string} url */
  operationOf(method, url) {
    return this.route(method, new URL(url, 'http://x').pathname)?.op.operationId;
  }

  /**
   * Problems of one exchange (empty when it conforms), each with its kind.
   * @param {string} method
   * @param {string} url  the request's URL or path; its path names the operation
   * @param {number} status
   * @param {string | null} contentType
   * @param {string} body
   * @returns {Problem[]}
   */
  problems(method, url, status, contentType, body) {
    const path = new URL(url, 'http://x').pathname;
    const route = this.route(method, path);
    if (!route) return path.startsWith('/api') ? [{ kind: 'no-operation', message: `${method} ${path}: no operation in the spec` }] : [];
    const where = `${method} ${path} ${route.op.operationId} ${status}`;
    let declared = route.op.responses[String(status)] ?? route.op.responses[`${String(status)[0]}XX`] ?? route.op.responses.default;
    if (!declared) return [{ kind: 'status', message: `${where}: status not declared` }];
    while (declared.$ref) declared = resolvePointer(this.doc, declared.$ref);
    const media = (contentType ?? '').split(';')[0]?.trim() ?? '';
    const content = declared.content ?? {};
    const declaredMedia = Object.keys(content);
    if (body === '') {
      // An empty text body is the empty string, which a string schema may allow; any other declared body is missing.
      const text = declaredMedia.find((m) => m.startsWith('text/'));
      if (text) return this.schemaProblems(where, responseSchemaPointer(route.path, route.method, status, text, this.doc), '');
      return declaredMedia.length ? [{ kind: 'missing-body', message: `${where}: empty body, declared ${declaredMedia.join(', ')}` }] : [];
    }
    if (!content[media])
      return [
        {
          kind: 'media-type',
          message: `${where}: body sent as ${media || 'no media type'}, declared ${declaredMedia.join(', ') || 'no body'}`,
        },
      ];
    /** @type {unknown} */
    let data = body;
    if (media === 'application/json') {
      try {
        data = JSON.parse(body);
      } catch {
        return [{ kind: 'not-json', message: `${where}: body is not JSON` }];
      }
    }
    return this.schemaProblems(where, responseSchemaPointer(route.path, route.method, status, media, this.doc), data);
  }

  /**
   * @param {string} where
   * @param {string} pointer
   * @param {unknown} data
   * @returns {Problem[]}
   */
  schemaProblems(where, pointer, data) {
    const fn = this.validator.compile(pointer);
    if (!fn(data)) {
      const text = this.validator.ajv.errorsText(fn.errors, { dataVar: 'data' });
      const errors = fn.errors ?? [];
      // One problem per kind found, all of Ajv's text in each: the text is what the suites have always compared.
      const kinds = [...new Set(errors.map(kindOfError))];
      return kinds.map((kind) => ({
        kind,
        message: `${where}: ${text}`,
        at: errors.find((e) => kindOfError(e) === kind)?.instancePath ?? '',
      }));
    }
    if (!this.closed) return [];
    const closed = this.closed.compile(pointer);
    if (closed(data)) return [];
    return (closed.errors ?? [])
      .filter((e) => e.keyword === 'unevaluatedProperties')
      .map((e) => ({
        kind: /** @type {ProblemKind} */ ('extra-field'),
        message: `${where}: data${e.instancePath} has the field \`${e.params.unevaluatedProperty}\`, which the schema does not declare`,
        at: `${e.instancePath}/${esc(String(e.params.unevaluatedProperty))}`,
      }));
  }

  /**
   * Problems of one exchange as text (empty when it conforms).
   * @param {string} method
   * @param {string} url
   * @param {number} status
   * @param {string | null} contentType
   * @param {string} body
   * @returns {string[]}
   */
  check(method, url, status, contentType, body) {
    return [...new Set(this.problems(method, url, status, contentType, body).map((p) => p.message))];
  }
}
