import type { AddressInfo, Server } from 'node:net';
import { createAccountClient } from '@zone-api/account-client';
import { createManagerClient } from '@zone-api/manager-client';
import { listOperations, loadBundle, type OpenApiDoc, resolvePointer, responseSchemaPointer, schemaValidator } from '@zone-api/testkit';
import { afterAll, beforeAll, expect } from 'vitest';
import { defaultSeed, type Sandbox, type SandboxOptions, startSandbox } from '../src/index.js';

export const docs = { account: loadBundle('account'), manager: loadBundle('manager') };
export const C = 'hl_1a2b3c4d';
export const TOKEN = 'sandbox-token-0001';
export const LIMITED_TOKEN = 'sandbox-token-0002';
export const STATIC = 'static_zone';
export const STATIC_PW = 'z8x7c6v5b4n3';
export const RES = 'res_zone';
export const RES_PW = 'r3s1d3nt9x7w';

interface Route {
  re: RegExp;
  path: string;
  method: string;
  // biome-ignore lint/suspicious/noExplicitAny: an OpenAPI operation object
  op: Record<string, any>;
}

/**
 * What `prism proxy --errors` would hold the sandbox to, checked on every response a test sees:
 * the status is declared for the operation, the media type is one it declares (or there is no body
 * where none is declared), and the body validates against the declared schema.
 */
export class Conformance {
  readonly violations: string[] = [];
  private readonly routes: Route[];
  private readonly validator: ReturnType<typeof schemaValidator>;

  constructor(private readonly doc: OpenApiDoc) {
    this.validator = schemaValidator(doc);
    this.routes = listOperations(doc).map((o) => ({
      re: new RegExp(`^${o.path.replace(/\{[^}]+\}/g, '[^/]+')}$`),
      path: o.path,
      method: o.method,
      op: o.op,
    }));
  }

  /** Problems of one exchange (empty when it conforms). */
  check(method: string, url: string, status: number, contentType: string | null, body: string): string[] {
    const path = new URL(url, 'http://x').pathname;
    const route = this.routes.find((r) => r.method === method.toLowerCase() && r.re.test(path));
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

/** A sandbox that carries traffic (its network and listening ports) with no seeded ports: each test opens its own. */
export function useTrafficSandbox(options: SandboxOptions = {}) {
  const seed = defaultSeed();
  seed.manager.ports = [];
  return useSandbox({ networkPort: 0, proxyPorts: true, seed, ...options });
}

/** Starts `server` (an HTTP, HTTPS or TCP server of a test's own) on a free loopback port: the port. */
export async function listenOnLoopback(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

/** A sandbox on free ports for one test file, with typed clients whose every response is checked against the spec. */
export function useSandbox(options: SandboxOptions = {}) {
  const ctx = {} as {
    sandbox: Sandbox;
    account: ReturnType<typeof createAccountClient>;
    manager: ReturnType<typeof createManagerClient>;
    conformance: { account: Conformance; manager: Conformance };
    /** A client of the account API with another credential. */
    accountAs: (auth: Parameters<typeof createAccountClient>[0]['auth']) => ReturnType<typeof createAccountClient>;
    managerWithToken: (token: string) => ReturnType<typeof createManagerClient>;
  };
  beforeAll(async () => {
    ctx.sandbox = await startSandbox({ accountPort: 0, managerPort: 0, ...options });
    ctx.conformance = { account: new Conformance(docs.account), manager: new Conformance(docs.manager) };
    const a = ctx.conformance.account;
    const m = ctx.conformance.manager;
    ctx.accountAs = (auth) => createAccountClient({ baseUrl: ctx.sandbox.accountUrl, auth, retry: false, fetch: a.fetch });
    ctx.account = ctx.accountAs({ token: TOKEN });
    // The spec's user paths (`pm`), so that the conformance check finds every operation; the real
    // program's `lpm` paths, which the client uses by default, have a test of their own.
    ctx.manager = createManagerClient({ baseUrl: ctx.sandbox.managerUrl, retry: false, fetch: m.fetch, brand: 'pm' });
    ctx.managerWithToken = (token) =>
      createManagerClient({ baseUrl: ctx.sandbox.managerUrl, retry: false, fetch: m.fetch, token, brand: 'pm' });
  });
  afterAll(async () => {
    await ctx.sandbox?.close();
    // Every response any test of the file saw, held to the spec.
    expect(ctx.conformance?.account.violations ?? []).toEqual([]);
    expect(ctx.conformance?.manager.violations ?? []).toEqual([]);
  });
  return ctx;
}

/** A raw request (for what the typed clients will not send: bad JSON, wrong types, odd headers). */
export async function raw(
  base: string,
  method: string,
  path: string,
  options: { body?: unknown; headers?: Record<string, string>; text?: string } = {},
): Promise<{ status: number; headers: Headers; text: string; json: () => Rec }> {
  const headers: Record<string, string> = { ...(options.headers ?? {}) };
  let body: string | undefined = options.text;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  const res = await fetch(`${base}${path}`, { method, headers, body });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, json: () => JSON.parse(text) };
}

/** A JSON record of a loose schema (request logs, HAR entries). */
// biome-ignore lint/suspicious/noExplicitAny: loose records are read field by field in the tests
export type Rec = Record<string, any>;

export const bearer = { Authorization: `Bearer ${TOKEN}` };
