import type { OpenApiDoc } from './spec.js';

// The walks of a request schema that lenient.ts's checker builds on: the values only real clients send,
// the provider's value aliases, `$ref`s followed, the fields a body's own schemas name, a field's name.

// biome-ignore lint/suspicious/noExplicitAny: JSON Schema nodes are walked generically
export type Json = any;

/**
 * Values that the provider's own clients send and the documentation's enums do not list, accepted (without
 * `--strict`) as the documentation's value. Keyed by the schema in the bundle, not by operation.
 * `bandwidth: "bandwidth"` is the default of the provider's JS SDK (`@brightdata/sdk` 0.2.0) for
 * `plan.bandwidth`; the documentation lists `payperusage` and `unlimited`. Pay-per-usage is the provider's
 * ordinary bandwidth billing, and unlimited is an option one chooses, so the sandbox reads it as
 * `payperusage` and says so in `X-Sandbox-Normalized-Fields`.
 */
export const VALUE_ALIASES: ReadonlyArray<{ schema: string; aliases: Readonly<Record<string, string>> }> = [
  { schema: '#/components/schemas/Plan/properties/bandwidth', aliases: { bandwidth: 'payperusage' } },
];

export const ALIAS_KEYWORD = 'x-sandbox-value-alias';

/**
 * Request forms known only from real clients' code (the spec's `x-observed-values` on an enum, and a field
 * marked both `x-observed` and `x-observed-source`): accepted by default, refused by `--strict`, whose
 * closed schemas leave them out (the field then counts as unknown, the value as outside the enum).
 */
export const OBSERVED_VALUES = 'x-observed-values';
export const isClientObserved = (node: Json): boolean =>
  !!node && typeof node === 'object' && node['x-observed'] === true && node['x-observed-source'] !== undefined;
export const COMPOSITIONS = ['allOf', 'anyOf', 'oneOf'] as const;
export const SUBSCHEMA_MAPS = ['properties', 'patternProperties', 'dependentSchemas', '$defs'] as const;
export const SUBSCHEMAS = [
  'items',
  'contains',
  'not',
  'if',
  'then',
  'else',
  'propertyNames',
  'additionalProperties',
  'unevaluatedItems',
] as const;

/** JSON pointer segment unescaping. */
export const unesc = (s: string) => s.replace(/~1/g, '/').replace(/~0/g, '~');

export function resolve(doc: OpenApiDoc, ref: string): Json {
  return ref
    .slice(2)
    .split('/')
    .reduce((o: Json, k) => o?.[unesc(k)], doc);
}

/**
 * Branches of a `oneOf`/`anyOf` that the spec closes are told apart by their closure (the datacenter
 * form of a refresh refuses `vips`, the gIP form `ips`). Both forms replace that closure with what it
 * decides between the branches, "none of the fields only a sibling names", so that an unknown field
 * no longer fails every branch; the parent is then closed like any other object (closed form).
 */
export function discriminate(branches: Json[]): void {
  const names = branches.map((b) => new Set(Object.keys(b?.properties ?? {})));
  branches.forEach((b, i) => {
    if (!b || typeof b !== 'object' || (b.additionalProperties !== false && b.unevaluatedProperties !== false)) return;
    const own = names[i] as Set<string>;
    const others = [...new Set(names.flatMap((n, j) => (j === i ? [] : [...n])))].filter((n) => !own.has(n));
    delete b.additionalProperties;
    delete b.unevaluatedProperties;
    if (!others.length) return;
    const not = { not: { anyOf: others.map((n) => ({ required: [n] })) } };
    if (b.not === undefined) Object.assign(b, not);
    else b.allOf = [...(b.allOf ?? []), not];
  });
}

/** Whether a schema path (`#/allOf/0/then`) applies its schema to the value of the root (not to a field or an item of it). */
function appliesToRoot(path: string): boolean {
  const segments = path.split('/').slice(1);
  for (let i = 0; i < segments.length; i++) {
    const seg = segments[i] as string;
    if (['allOf', 'anyOf', 'oneOf', 'dependentSchemas'].includes(seg)) i++;
    else if (!['not', 'if', 'then', 'else'].includes(seg)) return false;
  }
  return true;
}

/**
 * The field names that the schemas applying to a body itself (the root and its `allOf`/`anyOf`/`oneOf`,
 * `not`, `if`/`then`/`else`, `dependentSchemas`, in the lenient schema) name in `properties`, `required`,
 * `dependentRequired` and `dependentSchemas`: any other field of the body is unknown to every one of them,
 * and so is ignored whatever the rest of the body is, and its presence changes no check. Undefined (no
 * field may be set aside) unless the root is the one closure that applies to the body itself, and none of
 * those schemas reads fields it does not name (`additionalProperties`, `patternProperties`,
 * `unevaluatedProperties`, `propertyNames`), counts them (`minProperties`, `maxProperties`), compares the
 * whole object (`const`, `enum`) or refers to a schema not inlined (`$ref`).
 */
export function rootNamesOf(lenient: Json, closures: Set<string>): Set<string> | undefined {
  if (!closures.has('#')) return undefined;
  for (const path of closures) if (path !== '#' && appliesToRoot(path)) return undefined;
  const names = new Set<string>();
  const refuse = [
    'additionalProperties',
    'patternProperties',
    'unevaluatedProperties',
    'propertyNames',
    'minProperties',
    'maxProperties',
    'const',
    'enum',
    '$ref',
  ];
  const visit = (node: Json): boolean => {
    if (!node || typeof node !== 'object') return true;
    if (refuse.some((k) => k in node)) return false;
    for (const k of Object.keys(node.properties ?? {})) names.add(k);
    for (const k of Array.isArray(node.required) ? node.required : []) names.add(String(k));
    for (const [k, v] of Object.entries<Json>(node.dependentRequired ?? {})) {
      names.add(k);
      for (const n of Array.isArray(v) ? v : []) names.add(String(n));
    }
    for (const k of Object.keys(node.dependentSchemas ?? {})) names.add(k);
    const subs = [
      ...COMPOSITIONS.flatMap((k) => (Array.isArray(node[k]) ? node[k] : [])),
      ...['not', 'if', 'then', 'else'].map((k) => node[k]),
      ...Object.values<Json>(node.dependentSchemas ?? {}),
    ];
    return subs.every(visit);
  };
  return visit(lenient) ? names : undefined;
}

/** `body.zone.type`, `query.plan.colour`, `body.ips[0]` from a prefix and an instance path. */
export function fieldName(prefix: string, instancePath: string, extra?: string): string {
  const segments = instancePath ? instancePath.split('/').slice(1) : [];
  if (extra !== undefined) segments.push(extra);
  let out = prefix;
  for (const raw of segments) {
    const s = unesc(raw);
    out += /^\d+$/.test(s) ? `[${s}]` : `.${s}`;
  }
  return out;
}
