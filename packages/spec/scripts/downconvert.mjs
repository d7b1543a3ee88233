// OpenAPI 3.1 -> 3.0.3, for tools that do not read 3.1 (openapi-generator 4.x, older viewers and
// gateways). @apiture/openapi-down-convert does the bulk (nullable type pairs, schema `examples`,
// `const`, `unevaluatedProperties`, `propertyNames`, license identifier, $ref siblings outside
// schemas). The fixups below cover what it leaves invalid or misleading in 3.0 for these specs; each
// is narrow, listed with its loss in packages/spec/README.md and unit-tested in
// packages/spec/test/downconvert.test.ts. Whatever slips through fails the 3.0 lint in that test.
import { createRequire } from 'node:module';
import { operations } from '../model/index.js';

// The package is CommonJS without an ESM entry.
const { Converter } = createRequire(import.meta.url)('@apiture/openapi-down-convert');

/** Converts a bundled (single-file) OpenAPI 3.1 document; the input is not modified. */
export function downConvert(doc31) {
  const doc = new Converter(doc31).convert();
  infoSummary(doc);
  licenseUrl(doc, doc31.info?.license?.identifier);
  forEachSchema(doc, (schema) => {
    falsyConst(schema);
    multiTypeArray(schema);
    dependentRequired(schema);
    refSiblings(schema);
  });
  securityRoles(doc);
  deleteBodies(doc);
  return doc;
}

/** 3.0 `info` has no `summary`: it becomes the first paragraph of the description. */
export function infoSummary(doc) {
  const info = doc.info;
  if (!info?.summary) return;
  info.description = info.description ? `${info.summary}\n\n${info.description}` : info.summary;
  delete info.summary;
}

/** 3.0 licenses are named by URL, not by SPDX identifier (the converter drops the identifier). */
export function licenseUrl(doc, spdxIdentifier) {
  const license = doc.info?.license;
  if (license && spdxIdentifier && !license.url) license.url = `https://spdx.org/licenses/${spdxIdentifier}.html`;
}

/** The converter only rewrites truthy `const` values (`if (schema.const)`), so `const: 0|false|''` stays. */
export function falsyConst(schema) {
  if (Object.hasOwn(schema, 'const')) {
    schema.enum = [schema.const];
    delete schema.const;
  }
}

const KEYWORDS_BY_TYPE = {
  string: ['minLength', 'maxLength', 'pattern'],
  number: ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf'],
  integer: ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf'],
  array: ['items', 'minItems', 'maxItems', 'uniqueItems'],
  object: ['properties', 'additionalProperties', 'required', 'minProperties', 'maxProperties'],
};
const NUMERIC_FORMATS = new Set(['int32', 'int64', 'float', 'double']);

/**
 * The converter only handles `type: [X, 'null']`. Any other type array (e.g. `[boolean, integer]`)
 * becomes `oneOf` with one branch per type, each taking the keywords that apply to its type;
 * a `'null'` member becomes `nullable: true`.
 */
export function multiTypeArray(schema) {
  if (!Array.isArray(schema.type)) return;
  const types = schema.type.filter((t) => t !== 'null');
  if (types.length < schema.type.length) schema.nullable = true;
  delete schema.type;
  if (types.length === 1) {
    schema.type = types[0];
    return;
  }
  const moved = new Set();
  schema.oneOf = types.map((type) => {
    const branch = { type };
    for (const key of KEYWORDS_BY_TYPE[type] ?? []) {
      if (Object.hasOwn(schema, key)) {
        branch[key] = schema[key];
        moved.add(key);
      }
    }
    if (schema.format !== undefined) {
      const numeric = NUMERIC_FORMATS.has(schema.format);
      if (numeric === (type === 'integer' || type === 'number') && type !== 'boolean') {
        branch.format = schema.format;
        moved.add('format');
      }
    }
    return branch;
  });
  for (const key of moved) delete schema[key];
  if (Object.hasOwn(schema, 'format')) delete schema.format;
}

/**
 * 3.0 ignores everything beside a `$ref` and linters reject it, yet the converter keeps the siblings
 * inside schemas (a `description`, `x-observed`). Its alternative, wrapping in `allOf: [$ref]`, makes
 * openapi-generator emit an undefined `Array` type for referenced arrays, so the siblings are dropped:
 * the referenced schema's own description stands.
 */
export function refSiblings(schema) {
  if (typeof schema.$ref !== 'string') return;
  for (const key of Object.keys(schema)) if (key !== '$ref') delete schema[key];
}

/** 3.0 has no `dependentRequired`: the rule is dropped and written into the description instead. */
export function dependentRequired(schema) {
  const dep = schema.dependentRequired;
  if (!dep) return;
  const rules = Object.entries(dep).map(([prop, needs]) => `\`${prop}\` requires ${needs.map((n) => `\`${n}\``).join(', ')}`);
  const note = `Not enforced by this OpenAPI 3.0 schema (OpenAPI 3.1 \`dependentRequired\`): ${rules.join('; ')}.`;
  schema.description = schema.description ? `${schema.description.trimEnd()}\n\n${note}` : note;
  delete schema.dependentRequired;
}

/**
 * In 3.0, a security requirement may list scopes only for oauth2 and openIdConnect schemes; 3.1 also
 * allows role names on the others. Those lists are emptied. Returns what was dropped.
 */
export function securityRoles(doc) {
  const schemes = doc.components?.securitySchemes ?? {};
  const dropped = [];
  const fix = (where, requirements) => {
    for (const req of requirements ?? []) {
      for (const [name, roles] of Object.entries(req)) {
        if (['oauth2', 'openIdConnect'].includes(schemes[name]?.type) || !roles?.length) continue;
        dropped.push(`${where}: ${name} [${roles.join(', ')}]`);
        req[name] = [];
      }
    }
  };
  fix('root', doc.security);
  for (const o of operations(doc)) fix(`${o.method.toUpperCase()} ${o.path}`, o.op.security);
  return dropped;
}

/**
 * 3.0.3 gives a DELETE request body no defined meaning and some 3.0 tools drop it. The body stays in
 * the document, and the operation says so, so that a reader of generated docs or code knows to check.
 */
export function deleteBodies(doc) {
  const note =
    '**This DELETE request carries a JSON body.** OpenAPI 3.0 gives DELETE bodies no defined meaning, ' +
    'so some 3.0 tools drop it: check that your client sends it.';
  for (const item of Object.values(doc.paths ?? {})) {
    const op = item.delete;
    if (op?.requestBody) op.description = op.description ? `${op.description.trimEnd()}\n\n${note}` : note;
  }
}

/** Calls `fn` on every schema object: components, parameters, bodies, headers and their subschemas. */
export function forEachSchema(doc, fn) {
  const seen = new Set();
  const visitSchema = (s) => {
    if (!s || typeof s !== 'object' || seen.has(s)) return;
    seen.add(s);
    if (Array.isArray(s)) {
      for (const x of s) visitSchema(x);
      return;
    }
    if (s.$ref && Object.keys(s).length === 1) return;
    fn(s);
    for (const key of ['items', 'not', 'additionalProperties']) if (s[key] && typeof s[key] === 'object') visitSchema(s[key]);
    for (const key of ['allOf', 'oneOf', 'anyOf']) if (Array.isArray(s[key])) for (const x of s[key]) visitSchema(x);
    if (s.properties) for (const p of Object.values(s.properties)) visitSchema(p);
  };
  const visitNode = (n) => {
    if (!n || typeof n !== 'object') return;
    if (Array.isArray(n)) {
      for (const x of n) visitNode(x);
      return;
    }
    for (const [k, v] of Object.entries(n)) {
      if (k === 'schema') visitSchema(v);
      else if (k === 'schemas' && n === doc.components) for (const s of Object.values(v)) visitSchema(s);
      else if (k !== 'example' && k !== 'examples') visitNode(v);
    }
  };
  visitNode(doc);
}
