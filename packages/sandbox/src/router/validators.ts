import { createAjv } from '@zone-api/spec/model';
import type { Ajv2020, ErrorObject, ValidateFunction } from 'ajv/dist/2020.js';
import { type ErrorDetail, MAX_DETAILS } from '../shared/errors.js';
import type { OpenApiDoc, OperationDef } from './spec.js';

// The request validators of a bundle (ajv, compiled once per bundle and shared), and ajv's errors as
// the `{field, reason}` details every refusal names.

export interface Validators {
  id: string;
  body: Ajv2020;
  query: Ajv2020;
  /** A body sent as a form: its values are text, coerced to the schema's types, a single value to a list of one. */
  form: Ajv2020;
  cache: Map<string, ValidateFunction>;
}

// Compiled validators depend only on the bundle: several sandboxes in one process (the tests) share them.
const validatorCache = new WeakMap<OpenApiDoc, Validators>();

/** The `$id` a bundle is known by in its validators: a schema refers into it as `${bundleId(name)}#/components/…`. */
export const bundleId = (name: string) => `https://zone-api.local/${name}.openapi.json`;

export function validatorsFor(doc: OpenApiDoc, name: string): Validators {
  let v = validatorCache.get(doc);
  if (!v) {
    const id = bundleId(name);
    const common = { strict: false, allErrors: true, validateFormats: true } as const;
    // Bodies are JSON: no coercion. Query and path values are strings on the wire: coerced to the schema's types.
    const body = createAjv({ ...common, coerceTypes: false, useDefaults: false });
    const query = createAjv({ ...common, coerceTypes: true, useDefaults: true });
    const form = createAjv({ ...common, coerceTypes: 'array', useDefaults: false });
    for (const ajv of [body, query, form]) ajv.addSchema({ ...doc, $id: id });
    v = { id, body, query, form, cache: new Map() };
    validatorCache.set(doc, v);
  }
  return v;
}

export function compileCached(v: Validators, kind: 'body' | 'query' | 'form', key: string, schema: object): ValidateFunction {
  const k = `${kind} ${key}`;
  let fn = v.cache.get(k);
  if (!fn) {
    fn = v[kind].compile(schema);
    v.cache.set(k, fn);
  }
  return fn;
}

export const PART_PREFIX: Record<string, string> = { body: 'body', querystring: 'query', params: 'path', headers: 'header' };

function fieldPath(prefix: string, instancePath: string, extra?: string): string {
  let out = prefix;
  const segments = instancePath ? instancePath.split('/').slice(1) : [];
  if (extra !== undefined) segments.push(extra);
  for (const raw of segments) {
    const s = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    out += /^\d+$/.test(s) ? `[${s}]` : `.${s}`;
  }
  return out;
}

/** Ajv errors as `{field, reason}`, naming the property at fault rather than its parent. */
export function detailsFromAjv(errors: ErrorObject[] | null | undefined, prefix: string): ErrorDetail[] {
  const out: ErrorDetail[] = [];
  const seen = new Set<string>();
  for (const e of errors ?? []) {
    const p = e.params as Record<string, string>;
    let detail: ErrorDetail;
    if (e.keyword === 'required' && p.missingProperty === undefined) detail = { field: prefix, reason: e.message ?? 'is required' };
    else if (e.keyword === 'required') detail = { field: fieldPath(prefix, e.instancePath, p.missingProperty), reason: 'is required' };
    else if (e.keyword === 'additionalProperties')
      detail = { field: fieldPath(prefix, e.instancePath, p.additionalProperty), reason: 'is not a known field' };
    else if (e.keyword === 'unevaluatedProperties')
      detail = { field: fieldPath(prefix, e.instancePath, p.unevaluatedProperty), reason: 'is not a known field' };
    else if (e.keyword === 'dependentRequired')
      detail = { field: fieldPath(prefix, e.instancePath, p.missingProperty), reason: `is required together with ${p.property}` };
    else {
      let reason = e.message ?? e.keyword;
      if (e.keyword === 'enum')
        reason += `: ${(e.params as { allowedValues: unknown[] }).allowedValues.map((x) => JSON.stringify(x)).join(', ')}`;
      detail = { field: fieldPath(prefix, e.instancePath), reason };
    }
    const key = `${detail.field}\n${detail.reason}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(detail);
    if (out.length >= MAX_DETAILS) break;
  }
  return out;
}

const DECIMAL = { integer: /^[+-]?\d+$/, number: /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/ } as const;

/**
 * Numbers in a query or path are written in decimal: ajv's coercion alone would also read `0x5DC0`,
 * `1e3` or ` 24000` as a number (so `/api/proxies/0x5DC0` addressed port 24000). The raw strings of
 * number-only parameters are checked before it coerces them.
 */
export function decimalOnly(params: OperationDef['params'], fn: ValidateFunction): ValidateFunction {
  const numeric = params.filter((p) => p.numeric);
  if (!numeric.length) return fn;
  const wrapped = ((data: Record<string, unknown>) => {
    for (const p of numeric) {
      const raw = data?.[p.name];
      if (typeof raw === 'string' && !DECIMAL[p.numeric as 'integer' | 'number'].test(raw)) {
        wrapped.errors = [
          {
            keyword: 'type',
            instancePath: `/${p.name}`,
            schemaPath: '#',
            params: {},
            message: `must be ${p.numeric === 'integer' ? 'an integer' : 'a number'} in decimal`,
          },
        ];
        return false;
      }
    }
    const ok = fn(data);
    wrapped.errors = fn.errors;
    return ok;
  }) as ValidateFunction;
  return wrapped;
}
