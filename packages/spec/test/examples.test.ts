import { type BundleName, deref, esc, HTTP_METHODS, loadBundle, type OpenApiDoc, schemaValidator } from '@zone-api/testkit';
import { describe, expect, it } from 'vitest';

// Every example in each bundle validates against its schema (JSON Schema 2020-12, ajv):
// media-type examples of request and response bodies (errors included), parameter examples,
// and the `examples` of every named schema.

// biome-ignore lint/suspicious/noExplicitAny: OpenAPI documents are walked generically
type Json = any;

interface Case {
  where: string;
  schemaPointer: string;
  value: unknown;
}

function mediaCases(doc: OpenApiDoc, content: Json, pointer: string, where: string, out: Case[]) {
  for (const [media, mt] of Object.entries<Json>(content ?? {})) {
    const mtPointer = `${pointer}/content/${esc(media)}`;
    if (!mt.schema) continue;
    for (const [name, ex] of Object.entries<Json>(mt.examples ?? {})) {
      const { node } = deref(doc, ex, `${mtPointer}/examples/${esc(name)}`);
      if (node && 'value' in node)
        out.push({ where: `${where} ${media} example "${name}"`, schemaPointer: `${mtPointer}/schema`, value: node.value });
    }
    if ('example' in mt) out.push({ where: `${where} ${media} example`, schemaPointer: `${mtPointer}/schema`, value: mt.example });
  }
}

function collect(doc: OpenApiDoc): Case[] {
  const out: Case[] = [];
  for (const [path, item] of Object.entries<Json>(doc.paths)) {
    const itemPointer = `#/paths/${esc(path)}`;
    const params: Array<{ p: Json; ptr: string }> = (item.parameters ?? [])
      .map((p: Json, i: number) => deref(doc, p, `${itemPointer}/parameters/${i}`))
      .map((r: Json) => ({ p: r.node, ptr: r.pointer }));
    for (const method of HTTP_METHODS) {
      const op = item[method];
      if (!op) continue;
      const opPointer = `${itemPointer}/${method}`;
      const label = `${method.toUpperCase()} ${path}`;
      const opParams = (op.parameters ?? [])
        .map((p: Json, i: number) => deref(doc, p, `${opPointer}/parameters/${i}`))
        .map((r: Json) => ({ p: r.node, ptr: r.pointer }));
      for (const { p, ptr } of [...params, ...opParams]) {
        if (p.schema && 'example' in p)
          out.push({ where: `${label} parameter ${p.name}`, schemaPointer: `${ptr}/schema`, value: p.example });
        if (p.schema)
          for (const [n, ex] of Object.entries<Json>(p.examples ?? {}))
            out.push({
              where: `${label} parameter ${p.name} "${n}"`,
              schemaPointer: `${ptr}/schema`,
              value: deref(doc, ex, '').node.value,
            });
        if (p.content) mediaCases(doc, p.content, ptr, `${label} parameter ${p.name}`, out);
      }
      if (op.requestBody) {
        const { node, pointer } = deref(doc, op.requestBody, `${opPointer}/requestBody`);
        mediaCases(doc, node.content, pointer, `${label} request`, out);
      }
      for (const [status, res] of Object.entries<Json>(op.responses ?? {})) {
        const { node, pointer } = deref(doc, res, `${opPointer}/responses/${status}`);
        mediaCases(doc, node.content, pointer, `${label} ${status}`, out);
      }
    }
  }
  for (const [name, schema] of Object.entries<Json>(doc.components?.schemas ?? {})) {
    const ptr = `#/components/schemas/${esc(name)}`;
    for (const [i, value] of (schema.examples ?? []).entries())
      out.push({ where: `schema ${name} examples[${i}]`, schemaPointer: ptr, value });
    for (const [prop, ps] of Object.entries<Json>(schema.properties ?? {})) {
      for (const [i, value] of (ps.examples ?? []).entries())
        out.push({ where: `schema ${name}.${prop} examples[${i}]`, schemaPointer: `${ptr}/properties/${esc(prop)}`, value });
    }
  }
  return out;
}

describe.each<BundleName>(['account', 'manager', 'sandbox-control'])('examples of the %s bundle', (api) => {
  const doc = loadBundle(api);
  const cases = collect(doc);
  const validator = schemaValidator(doc);

  it('has examples for every operation', () => {
    const withExamples = new Set(cases.map((c) => c.where.split(' ').slice(0, 2).join(' ')));
    const ops = Object.entries<Json>(doc.paths).flatMap(([path, item]) =>
      HTTP_METHODS.filter((m) => item[m]).map((m) => `${m.toUpperCase()} ${path}`),
    );
    expect(ops.filter((o) => !withExamples.has(o))).toEqual([]);
  });

  it.each(cases.map((c) => [c.where, c] as const))('%s', (_where, c) => {
    expect(validator.validate(c.schemaPointer, c.value)).toBeNull();
  });
});
