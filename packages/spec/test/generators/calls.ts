import { type ApiName, listOperations, loadBundle } from '@zone-api/testkit';

// One call per operation of a bundle, with its arguments taken from the spec's examples (parameter
// `example`/`examples`, then the schema's; the request body's first example), and what a generated
// client must hand back for each success status, read from the generator input (the shaped 3.0.3
// document the clients were generated from). The every-operation programs in Python and Go read these.

export interface Call {
  operationId: string;
  params: { name: string; in: string; value: unknown }[];
  body?: unknown;
  /**
   * The API key the call needs when no HTTP scheme (the bearer token every account call uses) serves
   * it: its scheme and header (the manager token of `addWhitelistIp`).
   */
  credential?: { scheme: string; header: string };
  /**
   * Per declared success status: null when it has no body; else the kind of result: `model:<Name>`,
   * `list`, `map`, `string`, `integer`, `number`, `boolean`, or `any` (an untyped schema).
   */
  expect: Record<string, string | null>;
}

type Json = Record<string, unknown>;

function exampleOf(def: Json, schema: Json | undefined): unknown {
  if (def.example !== undefined) return def.example;
  const named = Object.values((def.examples ?? {}) as Record<string, { value?: unknown }>)[0];
  if (named?.value !== undefined) return named.value;
  for (const media of Object.values((def.content ?? {}) as Record<string, Json>)) {
    if (media.example !== undefined) return media.example;
  }
  if (schema?.example !== undefined) return schema.example;
  return Array.isArray(schema?.examples) ? schema.examples[0] : undefined;
}

/** The kind of value a generated client returns for a schema of the generator input. */
function kindOf(schema: Json | undefined, media: string): string {
  if (!media.includes('json')) return 'string';
  if (!schema) return 'any';
  if (typeof schema.$ref === 'string') return `model:${schema.$ref.split('/').pop()}`;
  if (schema.type === 'array') return 'list';
  if (schema.type === 'object') return schema.properties ? 'any' : 'map';
  if (typeof schema.type === 'string') return schema.type;
  return 'any';
}

const resolve = (doc: Json, node: Json): Json => {
  let n = node;
  for (let i = 0; i < 8 && typeof n.$ref === 'string'; i++) {
    n = n.$ref
      .slice(2)
      .split('/')
      .reduce<Json>((o, k) => o[k.replace(/~1/g, '/').replace(/~0/g, '~')] as Json, doc);
  }
  return n;
};

/** The calls of one API, in the bundle's order. */
export function callsOf(api: ApiName, input: Json): Call[] {
  const doc = loadBundle(api);
  return listOperations(doc).map((o) => {
    const params = o.parameters
      .map((p) => ({ name: p.name, in: p.in, value: exampleOf(p.definition as Json, p.schema as Json) }))
      .filter((p) => p.value !== undefined)
      .map((p) => (typeof p.value === 'object' ? { ...p, value: JSON.stringify(p.value) } : p));
    const body = o.requestBody ? Object.values(o.requestBody.content)[0]?.examples[0] : undefined;
    const op = ((input.paths as Json)[o.path] as Json)[o.method] as Json;
    const expect: Record<string, string | null> = {};
    for (const [status, raw] of Object.entries(op.responses as Record<string, Json>)) {
      if (!/^2/.test(status)) continue;
      const content = resolve(input, raw).content as Record<string, { schema?: Json }> | undefined;
      const [media, m] = Object.entries(content ?? {})[0] ?? [];
      expect[status] = media ? kindOf(m?.schema, media) : null;
    }
    const schemes = (doc.components?.securitySchemes ?? {}) as Record<string, { type?: string; name?: string }>;
    const apiKey = o.credentials.some((c) => schemes[c]?.type === 'http')
      ? undefined
      : o.credentials.find((c) => schemes[c]?.type === 'apiKey');
    const credential = apiKey ? { scheme: apiKey, header: schemes[apiKey]?.name ?? '' } : undefined;
    return { operationId: o.operationId, params, ...(body !== undefined ? { body } : {}), ...(credential ? { credential } : {}), expect };
  });
}
