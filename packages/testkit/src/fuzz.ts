import { deref as derefAt, type OpenApiDoc, operations } from '@zone-api/spec/model';

// Requests derived from a bundle, valid and mutated, for fuzzing a server that implements it.
// Valid requests come from the spec's own examples (and schema-derived values where there are none);
// mutations break one thing at a time, the way a careless or hostile client would.

// biome-ignore lint/suspicious/noExplicitAny: schemas and examples are walked generically
type Json = any;

export interface FuzzRequest {
  /** What this request is, for a failure message: `createZone: body field plan.type wrong type`. */
  label: string;
  method: string;
  /** Path with its parameters filled in, and the query string. */
  url: string;
  headers: Record<string, string>;
  body?: string;
}

export interface FuzzOptions {
  /** Headers of a valid credential, sent unless the mutation is about auth. */
  auth?: Record<string, string>;
  /** Values for path parameters of valid requests, e.g. `{ port: [24000] }`. */
  pathValues?: Record<string, Array<string | number>>;
}

/** Mulberry32: a small deterministic PRNG, so a failing fuzz run can be replayed from its seed. */
export function rng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (n: number) => Math.floor(next() * n),
    pick: <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)] as T,
  };
}
type Rng = ReturnType<typeof rng>;

const deref = (doc: OpenApiDoc, node: Json): Json => derefAt(doc, node).node;

/** A plausible value for a schema: its example, const, enum or default, else one built from its type. */
export function sample(doc: OpenApiDoc, schema: Json, r: Rng, depth = 0): Json {
  const s = deref(doc, schema) ?? {};
  if (depth > 6) return null;
  if ('const' in s) return s.const;
  if (Array.isArray(s.examples) && s.examples.length) return s.examples[0];
  if ('example' in s) return s.example;
  if (Array.isArray(s.enum) && s.enum.length) return r.pick(s.enum);
  if ('default' in s) return s.default;
  const alt = s.oneOf ?? s.anyOf;
  if (Array.isArray(alt) && alt.length) return sample(doc, alt[0], r, depth + 1);
  if (Array.isArray(s.allOf)) return Object.assign({}, ...s.allOf.map((x: Json) => sample(doc, x, r, depth + 1)));
  const type = Array.isArray(s.type) ? s.type.find((t: string) => t !== 'null') : s.type;
  switch (type) {
    case 'integer':
      return Math.max(s.minimum ?? 0, Math.min(s.maximum ?? 1000, 1 + r.int(100)));
    case 'number':
      return Math.max(s.minimum ?? 0, 1.5);
    case 'boolean':
      return r.next() < 0.5;
    case 'array':
      return s.items ? [sample(doc, s.items, r, depth + 1)] : [];
    case 'object': {
      const out: Record<string, Json> = {};
      for (const key of s.required ?? []) out[key] = sample(doc, s.properties?.[key] ?? {}, r, depth + 1);
      return out;
    }
    case 'string':
      return s.format === 'date-time' ? '2024-05-01T00:00:00.000Z' : s.format === 'date' ? '2024-05-01' : 'x';
    default:
      return 'x';
  }
}

/** The JSON types a schema admits, through oneOf/anyOf/allOf; empty when it does not constrain the type. */
function typesOf(doc: OpenApiDoc, schema: Json, depth = 0): Set<string> {
  const s = deref(doc, schema) ?? {};
  const out = new Set<string>([].concat(s.type ?? []));
  if (Array.isArray(s.enum))
    for (const v of s.enum) out.add(v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v === 'number' ? 'number' : typeof v);
  if ('const' in s) out.add(typeof s.const);
  if (depth < 5) {
    for (const key of ['oneOf', 'anyOf', 'allOf']) {
      for (const alt of s[key] ?? []) {
        const inner = typesOf(doc, alt, depth + 1);
        if (inner.size === 0 && key !== 'allOf') return new Set(); // one alternative takes anything
        for (const t of inner) out.add(t);
      }
    }
  }
  if (out.has('integer')) out.add('number');
  return out;
}

/** A value of a JSON type the schema does not admit, or undefined when the schema admits any type. */
function wrongType(doc: OpenApiDoc, schema: Json, r: Rng): Json {
  const types = typesOf(doc, schema);
  if (types.size === 0) return undefined;
  const candidates: Json[] = [];
  if (!types.has('string')) candidates.push('not-a-number-or-object');
  if (!types.has('number')) candidates.push(12345);
  if (!types.has('object')) candidates.push({ unexpected: { nested: true } });
  if (!types.has('array')) candidates.push(['a', 1]);
  if (!types.has('boolean')) candidates.push(true);
  return candidates.length ? r.pick(candidates) : undefined;
}

/** The operations as the fuzzer uses them: the operation model's, with its merged parameters and JSON body. */
export function fuzzTargets(doc: OpenApiDoc) {
  return operations(doc).map((o) => {
    const json = o.requestBody?.content['application/json'];
    return {
      operationId: o.operationId,
      method: o.method.toUpperCase(),
      path: o.path,
      params: o.parameters.map((p) => p.definition as Json),
      body: json && o.requestBody ? { required: o.requestBody.required, schema: json.schema as Json, examples: json.examples } : undefined,
    };
  });
}
export type FuzzTarget = ReturnType<typeof fuzzTargets>[number];

export function paramValue(doc: OpenApiDoc, p: Json, r: Rng, opts: FuzzOptions): Json {
  const given = opts.pathValues?.[p.name];
  if (p.in === 'path' && given?.length) return r.pick(given);
  if ('example' in p) return p.example;
  if (p.content) {
    const media = Object.values<Json>(p.content)[0];
    return JSON.stringify(sample(doc, media?.schema ?? {}, r));
  }
  return sample(doc, p.schema ?? {}, r);
}

export function buildUrl(path: string, pathValues: Record<string, Json>, query: Record<string, Json>): string {
  const filled = path.replace(/\{([^}]+)\}/g, (_, name) => encodeURIComponent(String(pathValues[name] ?? 'x')));
  const qs = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) {
    if (v === undefined) continue;
    qs.append(k, typeof v === 'object' ? JSON.stringify(v) : String(v));
  }
  const q = qs.toString();
  return q ? `${filled}?${q}` : filled;
}

const MUTATIONS = [
  'valid',
  'valid',
  'valid',
  'bad-json',
  'missing-body',
  'body-not-object',
  'wrong-type',
  'missing-required',
  'unknown-field',
  'bad-enum',
  'query-wrong-type',
  'bad-path-param',
  'no-auth',
  'bad-auth',
  'wrong-content-type',
  'huge-string',
  'hostile-string',
  'prototype-key',
  'huge-list',
] as const;

/**
 * Strings that broke a sandbox before: catastrophic regular expressions (for parameters that are
 * patterns), patterns built from a filter, and the names of Object.prototype (for values used as keys).
 */
export const HOSTILE_STRINGS = [
  '^(.+)+!$',
  '(a+)+$',
  '(x+x+)+y',
  '5**(',
  '[',
  '(?<=a)b',
  '\\1',
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
] as const;
const PROTOTYPE_KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'valueOf', 'hasOwnProperty'] as const;

const BODY_MUTATIONS = new Set<string>(['bad-json', 'missing-body', 'body-not-object', 'wrong-content-type', 'huge-string']);

/** `count` requests over all operations of `doc`, deterministic for a given `seed`. */
export function fuzzRequests(doc: OpenApiDoc, count: number, seed: number, opts: FuzzOptions = {}): FuzzRequest[] {
  const r = rng(seed);
  const ops = fuzzTargets(doc);
  const out: FuzzRequest[] = [];
  for (let i = 0; i < count; i++) {
    const op = ops[i % ops.length] as FuzzTarget;
    // Body mutations only where the operation takes a body; a GET never gets one.
    const mutation = r.pick(op.body ? MUTATIONS : MUTATIONS.filter((m) => !BODY_MUTATIONS.has(m)));
    const pathValues: Record<string, Json> = {};
    const query: Record<string, Json> = {};
    for (const p of op.params) {
      if (p.in === 'path') pathValues[p.name] = paramValue(doc, p, r, opts);
      else if (p.in === 'query' && (p.required || r.next() < 0.5)) query[p.name] = paramValue(doc, p, r, opts);
    }
    const body: Json = op.body
      ? op.body.examples.length
        ? structuredClone(r.pick(op.body.examples))
        : sample(doc, op.body.schema, r)
      : undefined;
    let raw: string | undefined = body === undefined ? undefined : JSON.stringify(body);
    const headers: Record<string, string> = { ...(opts.auth ?? {}) };
    let what: string = mutation;
    const bodySchema = op.body ? deref(doc, op.body.schema) : undefined;
    const props = bodySchema?.properties ? Object.keys(bodySchema.properties) : [];

    switch (mutation) {
      case 'bad-json':
        raw = r.pick(['{"zone": ', '{bad json}', '[1, 2', '"unterminated', '{"a":1}}']);
        break;
      case 'missing-body':
        raw = undefined;
        break;
      case 'body-not-object':
        raw = JSON.stringify(r.pick([[1, 2, 3], 'text', 42, null, true]));
        break;
      case 'wrong-type':
        if (body && typeof body === 'object' && props.length) {
          const key = r.pick(props);
          const value = wrongType(doc, bodySchema.properties[key], r);
          // A property that admits any type cannot be given a wrong one: say so in the label.
          body[key] = value === undefined ? { any: 'value' } : value;
          raw = JSON.stringify(body);
          what = value === undefined ? `any-type body.${key}` : `wrong-type body.${key}`;
        } else if (op.body) {
          raw = JSON.stringify(12345);
        } else {
          const qp = op.params.filter((p) => p.in === 'query' && !p.content);
          if (qp.length) query[r.pick(qp).name] = 'not-a-number';
        }
        break;
      case 'missing-required':
        if (body && typeof body === 'object' && bodySchema?.required?.length) {
          const key = r.pick(bodySchema.required as string[]);
          delete body[key];
          raw = JSON.stringify(body);
          what = `missing-required body.${key}`;
        } else {
          const req = op.params.filter((p) => p.in === 'query' && p.required);
          if (req.length) delete query[r.pick(req).name];
        }
        break;
      case 'unknown-field':
        if (body && typeof body === 'object' && !Array.isArray(body)) {
          body.__unexpected_field__ = 'x';
          raw = JSON.stringify(body);
        } else query.__unexpected__ = 'x';
        break;
      case 'bad-enum': {
        const enumProp = props.find((k) => Array.isArray(deref(doc, bodySchema.properties[k])?.enum));
        if (body && enumProp) {
          body[enumProp] = 'not-one-of-the-values';
          raw = JSON.stringify(body);
          what = `bad-enum body.${enumProp}`;
        } else {
          const enumParam = op.params.find((p) => Array.isArray(deref(doc, p.schema)?.enum));
          if (enumParam?.in === 'path') pathValues[enumParam.name] = 'not-one-of-the-values';
          else if (enumParam) query[enumParam.name] = 'not-one-of-the-values';
        }
        break;
      }
      case 'query-wrong-type': {
        const qp = op.params.filter((p) => p.in === 'query');
        if (qp.length) {
          const p = r.pick(qp);
          query[p.name] = p.content ? '{not json' : r.pick(['abc', '-1', '1e99', '', '%%%']);
          what = `query-wrong-type ${p.name}`;
        }
        break;
      }
      case 'bad-path-param':
        for (const p of op.params.filter((x) => x.in === 'path')) pathValues[p.name] = r.pick(['abc', '-5', '99999999999', '0']);
        break;
      case 'no-auth':
        for (const k of Object.keys(opts.auth ?? {})) delete headers[k];
        break;
      case 'bad-auth':
        for (const k of Object.keys(opts.auth ?? {})) headers[k] = r.pick(['Bearer wrong', 'Basic !!!', 'service-customer-x-zone', '']);
        headers['X-Service-Auth'] = r.pick(['service-customer-a-zone-b-key-wrong', 'garbage', 'service-customer--zone--key-']);
        break;
      case 'wrong-content-type':
        headers['Content-Type'] = r.pick(['text/plain', 'application/x-www-form-urlencoded', 'application/xml']);
        break;
      case 'huge-string':
        if (body && typeof body === 'object' && props.length) {
          body[r.pick(props)] = 'x'.repeat(200_000);
          raw = JSON.stringify(body);
        } else raw = JSON.stringify('x'.repeat(200_000));
        break;
      case 'hostile-string': {
        // Every string query parameter and top-level string body field gets a hostile value.
        const strings = op.params.filter((p) => p.in === 'query' && !p.content && typesOf(doc, p.schema).has('string'));
        for (const p of strings) query[p.name] = r.pick(HOSTILE_STRINGS);
        const bodyStrings = props.filter((k) => typesOf(doc, bodySchema.properties[k]).has('string'));
        if (body && typeof body === 'object' && bodyStrings.length) {
          for (const k of bodyStrings) body[k] = r.pick(HOSTILE_STRINGS);
          raw = JSON.stringify(body);
        }
        what = `hostile-string ${[...strings.map((p) => p.name), ...bodyStrings.map((k) => `body.${k}`)].join(',') || '(none)'}`;
        break;
      }
      case 'prototype-key': {
        // A prototype name as a field of the body (a JSON key, as JSON.parse makes it) and as a query parameter.
        const key = r.pick(PROTOTYPE_KEYS);
        if (body && typeof body === 'object' && !Array.isArray(body)) {
          raw = `${JSON.stringify(body).slice(0, -1)}${Object.keys(body).length ? ',' : ''}${JSON.stringify(key)}:{"polluted":true}}`;
        }
        query[key] = 'x';
        what = `prototype-key ${key}`;
        break;
      }
      case 'huge-list': {
        // The first array field of the body gets 100,000 items of its own kind (or strings).
        const arrayProp = props.find((k) => typesOf(doc, bodySchema.properties[k]).has('array'));
        if (body && typeof body === 'object' && arrayProp) {
          const items = deref(doc, bodySchema.properties[arrayProp])?.items;
          const one = items ? sample(doc, items, r) : 'x';
          body[arrayProp] = Array.from({ length: 100_000 }, () => one);
          raw = JSON.stringify(body);
          what = `huge-list body.${arrayProp}`;
        } else what = 'huge-list (no list)';
        break;
      }
    }
    if (raw !== undefined && !headers['Content-Type']) headers['Content-Type'] = 'application/json';
    out.push({
      label: `${op.operationId}: ${what}`,
      method: op.method,
      url: buildUrl(op.path, pathValues, query),
      headers,
      ...(raw !== undefined ? { body: raw } : {}),
    });
  }
  return out;
}
