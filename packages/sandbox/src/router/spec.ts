import type { ApiName, OpenApiDoc, Operation, OperationFacts } from '@zone-api/spec/model';
import { operations } from '@zone-api/spec/model';

// The bundles as the router sees them: the operation model of `@zone-api/spec/model` (which loads the
// bundles, follows their `$ref`s and reads the `x-` facts) with the router's own additions (its path
// syntax, wire-case methods, response media by status). The operationId unions are generated into
// `@zone-api/spec/<api>`.

export type { OperationId as AccountOperationId } from '@zone-api/spec/account';
export type { OperationId as ManagerOperationId } from '@zone-api/spec/manager';
export type { ApiName, OpenApiDoc };

export type ParamDef = Operation['parameters'][number];

/** One operation as the router serves it. The behaviour facts are the model's (`OperationFacts`). */
export interface OperationDef extends Pick<OperationFacts, 'permissions' | 'changesState' | 'clientIpCheck' | 'brandPrefix'> {
  /** `x-observed-unchecked`: the request parts (`body`, `path`) the real program reads without checking them. */
  unchecked: string[];
  operationId: string;
  /** Upper case, as on the wire. */
  method: string;
  /** The OpenAPI path, e.g. `/api/proxies/{port}`. */
  path: string;
  /** The router path, e.g. `/api/proxies/:port`. */
  url: string;
  params: ParamDef[];
  /**
   * The JSON request body, when the operation takes one; `formPointer`, the schema of the same body sent as
   * a form (`application/x-www-form-urlencoded`), when the spec declares that form too.
   */
  body?: { required: boolean; schemaPointer: string; formPointer?: string };
  /** Declared media types by status; empty for a response without a body. */
  responses: Map<string, { media: string[] }>;
  /** The security schemes the operation's requirements name (`managerToken`, `bearerToken`, …). */
  credentials: string[];
}

/** Each bundle object's routes, read once: a warm start (the same bundle again) reads nothing. */
const routesByDoc = new WeakMap<OpenApiDoc, readonly OperationDef[]>();

/** The operations of a bundle (the model's `operations`) in the router's terms, read once per bundle object. */
export function routesOf(doc: OpenApiDoc): readonly OperationDef[] {
  let routes = routesByDoc.get(doc);
  if (!routes) {
    routes = Object.freeze(readRoutes(doc));
    routesByDoc.set(doc, routes);
  }
  return routes;
}

function readRoutes(doc: OpenApiDoc): OperationDef[] {
  return operations(doc).map((o) => {
    const json = o.requestBody?.content['application/json'];
    const form = o.requestBody?.content['application/x-www-form-urlencoded'];
    const { permissions, changesState, clientIpCheck, brandPrefix, unchecked } = o.facts;
    return {
      operationId: o.operationId,
      method: o.method.toUpperCase(),
      path: o.path,
      url: o.path.replace(/\{([^}]+)\}/g, ':$1'),
      params: o.parameters,
      ...(json && o.requestBody
        ? {
            body: {
              required: o.requestBody.required,
              schemaPointer: json.schemaPointer,
              ...(form ? { formPointer: form.schemaPointer } : {}),
            },
          }
        : {}),
      responses: new Map(o.responses.map((r) => [r.status, { media: r.media }])),
      credentials: o.credentials,
      permissions,
      changesState,
      unchecked: unchecked ?? [],
      ...(clientIpCheck === undefined ? {} : { clientIpCheck }),
      ...(brandPrefix === undefined ? {} : { brandPrefix }),
    };
  });
}

/**
 * Start-up contract: every operation of the bundle has a handler and every handler an operation.
 * The sandbox refuses to start otherwise, so a spec change cannot silently leave a route unserved.
 */
export function checkHandlers(api: ApiName | 'sandbox-control', ops: readonly OperationDef[], handlerNames: Iterable<string>): void {
  const names = new Set(handlerNames);
  const opIds = new Set(ops.map((o) => o.operationId));
  const missing = [...opIds].filter((id) => !names.has(id)).sort();
  const extra = [...names].filter((id) => !opIds.has(id)).sort();
  const problems: string[] = [];
  if (missing.length) problems.push(`operations without a handler: ${missing.join(', ')}`);
  if (extra.length) problems.push(`handlers without an operation: ${extra.join(', ')}`);
  if (problems.length) throw new Error(`The ${api} bundle and the sandbox disagree: ${problems.join('; ')}`);
}
