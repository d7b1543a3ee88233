import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

export type ApiName = 'account' | 'manager';

// biome-ignore lint/suspicious/noExplicitAny: an OpenAPI document is walked generically
export type OpenApiDoc = Record<string, any>;
// biome-ignore lint/suspicious/noExplicitAny: see OpenApiDoc
type Json = any;

const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;

/**
 * Where the bundles are read from. The sandbox depends on the `@zone-api/spec` package and resolves
 * it through Node's module resolution, so the same code finds the bundles in this repo (a workspace
 * link to packages/spec) and in an installed copy (node_modules/@zone-api/spec): first by the
 * package's export (`@zone-api/spec/account.json`), else in the `dist/` beside its package.json.
 * `ZONE_API_SANDBOX_SPEC_DIR` (or the `specDir` option) points elsewhere, e.g. at a spec under review.
 */
export function bundlePath(api: ApiName, specDir = process.env.ZONE_API_SANDBOX_SPEC_DIR): string {
  const file = `${api}.openapi.json`;
  const hint = 'run `pnpm build` at the repo root (or set ZONE_API_SANDBOX_SPEC_DIR)';
  let path: string | undefined;
  if (specDir) path = join(specDir, file);
  else {
    const require = createRequire(import.meta.url);
    for (const resolve of [
      () => require.resolve(`@zone-api/spec/${api}.json`),
      () => join(dirname(require.resolve('@zone-api/spec/package.json')), 'dist', file),
    ]) {
      try {
        path = resolve();
        if (existsSync(path)) break;
      } catch {
        // Not this layout of the package: try the next.
      }
    }
    if (!path) throw new Error(`Cannot find the @zone-api/spec package: ${hint}`);
  }
  if (!existsSync(path)) throw new Error(`${path} is missing: ${hint}`);
  return path;
}

export function loadBundle(api: ApiName, specDir?: string): OpenApiDoc {
  const path = bundlePath(api, specDir);
  try {
    return JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new Error(`Cannot read the ${api} bundle ${path}: ${(err as Error).message}`);
  }
}

/** JSON pointer escaping of one segment. */
const esc = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');

function deref(doc: OpenApiDoc, node: Json): { node: Json; pointer?: string } {
  if (node && typeof node.$ref === 'string' && node.$ref.startsWith('#/')) {
    const pointer = node.$ref as string;
    const target = pointer
      .slice(2)
      .split('/')
      .reduce((o: Json, k) => o?.[k.replace(/~1/g, '/').replace(/~0/g, '~')], doc);
    if (target === undefined) throw new Error(`Unresolvable $ref ${pointer}`);
    return { node: target, pointer };
  }
  return { node };
}

export interface ParamDef {
  name: string;
  in: 'query' | 'path' | 'header' | 'cookie';
  required: boolean;
  /** JSON pointer (into the bundle) of the parameter's schema. */
  schemaPointer: string;
  /** For `content`-encoded parameters (JSON text in the query): the media type. */
  content?: string;
  /** A number-only parameter (its schema's types are integer or number): written in decimal on the wire. */
  numeric?: 'integer' | 'number';
}

export interface ResponseDef {
  /** Declared media types, e.g. `application/json`, `text/plain`; empty for a response without a body. */
  media: string[];
}

export interface OperationDef {
  operationId: string;
  method: string;
  /** The OpenAPI path, e.g. `/api/proxies/{port}`. */
  path: string;
  /** The router path, e.g. `/api/proxies/:port`. */
  url: string;
  params: ParamDef[];
  body?: { required: boolean; schemaPointer: string };
  responses: Map<string, ResponseDef>;
  security?: Json[];
  /** The security schemes the operation's requirements name (`managerToken`, `bearerToken`, …). */
  credentials: string[];
  permissions: string[];
  /** `x-idempotent`: safe to repeat. */
  idempotent: boolean;
  /** `x-changes-state`: a successful call changes the state (the sandbox saves after it). */
  changesState: boolean;
  /** `x-client-ip-check` (manager): the caller's IP must be allowed; absent elsewhere. */
  clientIpCheck?: boolean;
  /** `x-brand-prefix`: the path's segment prefix that stands for the program's brand (`pm` in `/api/pm_users`). */
  brandPrefix?: string;
}

/** The operations of a bundle with everything the router needs, read once at start-up. */
export function operationsOf(doc: OpenApiDoc): OperationDef[] {
  const out: OperationDef[] = [];
  for (const [path, rawItem] of Object.entries<Json>(doc.paths ?? {})) {
    const item = deref(doc, rawItem).node;
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      const opPointer = `#/paths/${esc(path)}/${method}`;
      const params: ParamDef[] = [];
      const seen = new Set<string>();
      // Operation-level parameters override path-level ones with the same name and location.
      const all: Array<[Json, string]> = [
        ...(op.parameters ?? []).map((p: Json, i: number) => [p, `${opPointer}/parameters/${i}`] as [Json, string]),
        ...(item.parameters ?? []).map((p: Json, i: number) => [p, `#/paths/${esc(path)}/parameters/${i}`] as [Json, string]),
      ];
      for (const [raw, at] of all) {
        const { node: p, pointer } = deref(doc, raw);
        const base = pointer ?? at;
        const key = `${p.in}:${p.name}`;
        if (seen.has(key)) continue;
        seen.add(key);
        let schemaPointer = `${base}/schema`;
        let content: string | undefined;
        if (!p.schema && p.content) {
          content = Object.keys(p.content)[0];
          schemaPointer = `${base}/content/${esc(content as string)}/schema`;
        }
        const types: string[] = content ? [] : [].concat(deref(doc, p.schema ?? {}).node.type ?? []);
        const numeric =
          types.length && types.every((t) => t === 'integer' || t === 'number' || t === 'null')
            ? types.includes('number')
              ? 'number'
              : 'integer'
            : undefined;
        params.push({ name: p.name, in: p.in, required: p.required === true || p.in === 'path', schemaPointer, content, numeric });
      }
      let body: OperationDef['body'];
      if (op.requestBody) {
        const { node: rb, pointer } = deref(doc, op.requestBody);
        const base = pointer ?? `${opPointer}/requestBody`;
        if (rb.content?.['application/json']) {
          body = { required: rb.required === true, schemaPointer: `${base}/content/application~1json/schema` };
        }
      }
      const responses = new Map<string, ResponseDef>();
      for (const [status, raw] of Object.entries<Json>(op.responses ?? {})) {
        const r = deref(doc, raw).node;
        responses.set(status, { media: Object.keys(r.content ?? {}) });
      }
      out.push({
        operationId: op.operationId,
        method: method.toUpperCase(),
        path,
        url: path.replace(/\{([^}]+)\}/g, ':$1'),
        params,
        body,
        responses,
        security: op.security ?? doc.security,
        credentials: [...new Set(((op.security ?? doc.security ?? []) as Json[]).flatMap((req) => Object.keys(req)))],
        permissions: op['x-permissions'] ?? [],
        idempotent: op['x-idempotent'] === true,
        changesState: op['x-changes-state'] === true,
        clientIpCheck: typeof op['x-client-ip-check'] === 'boolean' ? op['x-client-ip-check'] : undefined,
        brandPrefix: op['x-brand-prefix'],
      });
    }
  }
  return out;
}

/**
 * Start-up contract: every operation of the bundle has a handler and every handler an operation.
 * The sandbox refuses to start otherwise, so a spec change cannot silently leave a route unserved.
 */
export function checkHandlers(api: ApiName, ops: OperationDef[], handlerNames: Iterable<string>): void {
  const names = new Set(handlerNames);
  const opIds = new Set(ops.map((o) => o.operationId));
  const missing = [...opIds].filter((id) => !names.has(id)).sort();
  const extra = [...names].filter((id) => !opIds.has(id)).sort();
  const problems: string[] = [];
  if (missing.length) problems.push(`operations without a handler: ${missing.join(', ')}`);
  if (extra.length) problems.push(`handlers without an operation: ${extra.join(', ')}`);
  if (problems.length) throw new Error(`The ${api} bundle and the sandbox disagree: ${problems.join('; ')}`);
}
