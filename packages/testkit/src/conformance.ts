import { operations as listOperations, type OpenApiDoc, resolvePointer, schemaValidator } from '@zone-api/spec/model';
import { responseSchemaPointer } from './index.js';

// Holding an HTTP exchange to a spec: the project's one check of an answer against its bundle, used by
// the sandbox's own suites on every answer they see and by the differential suite on every answer of
// the real manager.

interface Route {
  re: RegExp;
  path: string;
  method: string;
  // biome-ignore lint/suspicious/noExplicitAny: an OpenAPI operation object
  op: Record<string, any>;
}

/**
 * What `prism proxy --errors` would hold a server to, checked on every answer a test sees: the status
 * is declared for the operation, the media type is one it declares (or there is no body where none is
 * declared), and the body validates against the declared schema.
 */
export class Conformance {
  readonly violations: string[] = [];
  private readonly routes: Route[];
  private readonly validator: ReturnType<typeof schemaValidator>;

  constructor(private readonly doc: OpenApiDoc) {
    this.validator = schemaValidator(doc);
    // A path whose prefix stands for the program's brand (`x-brand-prefix`: `/api/pm_users`) is served under any brand word (`/api/lpm_users`).
    const pattern = (o: { path: string; facts: { brandPrefix?: string | undefined } }) => {
      const brand = o.facts.brandPrefix;
      const path = brand ? o.path.replace(`/${brand}_`, '/\u0000_') : o.path;
      return path.replace(/\{[^}]+\}/g, '[^/]+').replace('\u0000', '[a-z]+');
    };
    this.routes = listOperations(doc).map((o) => ({
      re: new RegExp(`^${pattern(o)}$`),
      path: o.path,
      method: o.method,
      op: o.op,
    }));
  }

  private route(method: string, path: string): Route | undefined {
    return this.routes.find((r) => r.method === method.toLowerCase() && r.re.test(path));
  }

  /** The operationId a request names, if the spec has one for it. */
  operationOf(method: string, url: string): string | undefined {
    return this.route(method, new URL(url, 'http://x').pathname)?.op.operationId;
  }

  /** Problems of one exchange (empty when it conforms). */
  check(method: string, url: string, status: number, contentType: string | null, body: string): string[] {
    const path = new URL(url, 'http://x').pathname;
    const route = this.route(method, path);
    if (!route) return path.startsWith('/api') ? [`${method} ${path}: no operation in the spec`] : [];
    const where = `${method} ${path} ${route.op.operationId} ${status}`;
    let declared = route.op.responses[String(status)] ?? route.op.responses[`${String(status)[0]}XX`] ?? route.op.responses.default;
    if (!declared) return [`${where}: status not declared`];
    while (declared.$ref) declared = resolvePointer(this.doc, declared.$ref);
    const media = (contentType ?? '').split(';')[0]?.trim() ?? '';
    const content = declared.content ?? {};
    if (body === '') {
      // An empty text body is the empty string, which a string schema may allow; any other declared body is missing.
      const text = Object.keys(content).find((m) => m.startsWith('text/'));
      if (text) {
        const err = this.validator.validate(responseSchemaPointer(route.path, route.method, status, text, this.doc), '');
        return err ? [`${where}: ${err}`] : [];
      }
      return Object.keys(content).length ? [`${where}: empty body, declared ${Object.keys(content).join(', ')}`] : [];
    }
    if (!content[media])
      return [`${where}: body sent as ${media || 'no media type'}, declared ${Object.keys(content).join(', ') || 'no body'}`];
    let data: unknown = body;
    if (media === 'application/json') {
      try {
        data = JSON.parse(body);
      } catch {
        return [`${where}: body is not JSON`];
      }
    }
    const err = this.validator.validate(responseSchemaPointer(route.path, route.method, status, media, this.doc), data);
    return err ? [`${where}: ${err}`] : [];
  }

  /** A fetch that records every violation of the responses passing through it. */
  readonly fetch = async (input: Request | string | URL, init?: RequestInit): Promise<Response> => {
    const request = new Request(input, init);
    const response = await globalThis.fetch(request);
    const text = await response.clone().text();
    this.violations.push(...this.check(request.method, request.url, response.status, response.headers.get('content-type'), text));
    return response;
  };
}
