import { type ApiName, loadBundle as load, type OpenApiDoc, type Operation, operations, bundlePath as pathOf } from '@zone-api/spec/model';

// The bundles as the router sees them: the operation model of `@zone-api/spec/model` (which loads the
// bundles and follows their `$ref`s) with the router's own additions (its path syntax, the facts it
// reads by name).

export type { ApiName, OpenApiDoc };

/**
 * Where a bundle is read from. The bundles are those of the `@zone-api/spec` package the sandbox depends on (a workspace
 * link in this repo, node_modules/@zone-api/spec when installed); `ZONE_API_SANDBOX_SPEC_DIR` (or the
 * `specDir` option) points elsewhere, e.g. at a spec under review.
 */
export function bundlePath(api: ApiName, specDir = process.env.ZONE_API_SANDBOX_SPEC_DIR): string {
  return pathOf(api, specDir ? { dir: specDir } : {});
}

/** One bundle, parsed (see `bundlePath`). */
export function loadBundle(api: ApiName, specDir = process.env.ZONE_API_SANDBOX_SPEC_DIR): OpenApiDoc {
  return load(api, specDir ? { dir: specDir } : {});
}

export type ParamDef = Operation['parameters'][number];

export interface OperationDef {
  operationId: string;
  /** Upper case, as on the wire. */
  method: string;
  /** The OpenAPI path, e.g. `/api/proxies/{port}`. */
  path: string;
  /** The router path, e.g. `/api/proxies/:port`. */
  url: string;
  params: ParamDef[];
  /** The JSON request body, when the operation takes one. */
  body?: { required: boolean; schemaPointer: string };
  /** Declared media types by status; empty for a response without a body. */
  responses: Map<string, { media: string[] }>;
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
  return operations(doc).map((o) => {
    const x = o.extensions;
    const json = o.requestBody?.content['application/json'];
    return {
      operationId: o.operationId,
      method: o.method.toUpperCase(),
      path: o.path,
      url: o.path.replace(/\{([^}]+)\}/g, ':$1'),
      params: o.parameters,
      ...(json && o.requestBody ? { body: { required: o.requestBody.required, schemaPointer: json.schemaPointer } } : {}),
      responses: new Map(o.responses.map((r) => [r.status, { media: r.media }])),
      credentials: o.credentials,
      permissions: x['x-permissions'] ?? [],
      idempotent: x['x-idempotent'] === true,
      changesState: x['x-changes-state'] === true,
      ...(typeof x['x-client-ip-check'] === 'boolean' ? { clientIpCheck: x['x-client-ip-check'] } : {}),
      ...(typeof x['x-brand-prefix'] === 'string' ? { brandPrefix: x['x-brand-prefix'] } : {}),
    };
  });
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
