import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

// ajv-formats is CommonJS: under NodeNext its default import is the module object in types, the function at run time.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as typeof addFormatsModule.default;

export const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '../../..');
export type ApiName = 'account' | 'manager';

export function bundlePath(api: ApiName, ext: 'yaml' | 'json' = 'json'): string {
  const path = join(repoRoot, 'packages/spec/dist', `${api}.openapi.${ext}`);
  if (!existsSync(path)) throw new Error(`${path} is missing: run \`pnpm build\` (or \`pnpm bundle\`) before the tests`);
  return path;
}

// biome-ignore lint/suspicious/noExplicitAny: an OpenAPI document is walked generically
export type OpenApiDoc = Record<string, any>;

export function loadBundle(api: ApiName): OpenApiDoc {
  return JSON.parse(readFileSync(bundlePath(api), 'utf8'));
}

export const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'] as const;

export interface OperationRef {
  operationId: string;
  method: string;
  path: string;
  // biome-ignore lint/suspicious/noExplicitAny: see OpenApiDoc
  op: Record<string, any>;
}

export function listOperations(doc: OpenApiDoc): OperationRef[] {
  const out: OperationRef[] = [];
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    for (const method of HTTP_METHODS) {
      // biome-ignore lint/suspicious/noExplicitAny: see OpenApiDoc
      const op = (item as any)[method];
      if (op) out.push({ operationId: op.operationId, method, path, op });
    }
  }
  return out;
}

/** A free TCP port on loopback. Tests never use fixed ports. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

export interface Running {
  url: string;
  stop(): Promise<void>;
  output(): string;
}

/** Spawns a command and waits for a line matching `ready`; fails with its output if it exits or stalls. */
export function spawnUntil(cmd: string, args: string[], ready: RegExp, url: string, timeoutMs = 60_000): Promise<Running> {
  return new Promise((resolve, reject) => {
    const child: ChildProcess = spawn(cmd, args, { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
    let log = '';
    let done = false;
    const timer = setTimeout(() => finish(new Error(`${cmd} not ready after ${timeoutMs} ms:\n${log}`)), timeoutMs);
    const stop = () =>
      new Promise<void>((res) => {
        if (child.exitCode !== null || child.signalCode !== null) return res();
        child.once('exit', () => res());
        child.kill('SIGTERM');
        setTimeout(() => child.kill('SIGKILL'), 3000).unref();
      });
    function finish(err?: Error) {
      if (done) return;
      done = true;
      clearTimeout(timer);
      if (err) {
        void stop();
        reject(err);
      } else resolve({ url, stop, output: () => log });
    }
    const onData = (chunk: Buffer) => {
      log += chunk.toString();
      if (ready.test(log)) finish();
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.on('exit', (code) => finish(new Error(`${cmd} exited (${code}) before it was ready:\n${log}`)));
  });
}

/** Prism serving a bundle as a mock on a free loopback port. */
export async function startPrism(api: ApiName, extraArgs: string[] = []): Promise<Running> {
  const port = await freePort();
  const bin = join(repoRoot, 'node_modules/.bin/prism');
  return spawnUntil(
    bin,
    ['mock', bundlePath(api, 'yaml'), '-p', String(port), '-h', '127.0.0.1', ...extraArgs],
    /Prism is listening on/,
    `http://127.0.0.1:${port}`,
  );
}

/** Ajv (JSON Schema 2020-12, the dialect of OpenAPI 3.1) loaded with a bundle, to validate by JSON pointer. */
export function schemaValidator(doc: OpenApiDoc) {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
  addFormats(ajv);
  const id = `https://zone-api.local/${encodeURIComponent(doc.info?.title ?? 'api')}.json`;
  ajv.addSchema({ ...doc, $id: id });
  const cache = new Map<string, ValidateFunction>();
  return {
    /** Validates `data` against the schema at `pointer` (e.g. `#/components/schemas/Zone`); returns error text or null. */
    validate(pointer: string, data: unknown): string | null {
      let fn = cache.get(pointer);
      if (!fn) {
        fn = ajv.compile({ $ref: `${id}#${encodeURI(pointer.replace(/^#/, ''))}` });
        cache.set(pointer, fn);
      }
      return fn(data) ? null : ajv.errorsText(fn.errors, { dataVar: 'data' });
    },
  };
}

/** JSON pointer escaping of one segment. */
export const esc = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');

/**
 * Pointer of the body schema of one response, following a `$ref`'d response object
 * (e.g. to `#/components/responses/NotFound`), so the pointer resolves in Ajv.
 */
export function responseSchemaPointer(
  path: string,
  method: string,
  status: number | string,
  media = 'application/json',
  doc?: OpenApiDoc,
): string {
  const at = `#/paths/${esc(path)}/${method}/responses/${status}`;
  const base = doc ? deref(doc, resolvePointer(doc, at), at).pointer : at;
  return `${base}/content/${esc(media)}/schema`;
}

/**
 * Follows local `$ref`s from `node` (found at `pointer`) to what they name; returns that node and
 * its pointer, so a caller can both read it and hand Ajv a pointer that resolves.
 */
// biome-ignore lint/suspicious/noExplicitAny: see OpenApiDoc
export function deref(doc: OpenApiDoc, node: any, pointer = ''): { node: any; pointer: string } {
  let n = node;
  let p = pointer;
  for (let i = 0; n && typeof n === 'object' && typeof n.$ref === 'string' && i < 20; i++) {
    p = n.$ref;
    n = resolvePointer(doc, p);
  }
  return { node: n, pointer: p };
}

/** The node at a local JSON pointer (`#/a/b~1c`). */
// biome-ignore lint/suspicious/noExplicitAny: see OpenApiDoc
export function resolvePointer(doc: OpenApiDoc, pointer: string): any {
  return (
    pointer
      .replace(/^#\/?/, '')
      .split('/')
      .filter(Boolean)
      .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
      // biome-ignore lint/suspicious/noExplicitAny: see OpenApiDoc
      .reduce((acc: any, key) => acc?.[key], doc)
  );
}

export interface PrismViolation {
  location: string[];
  severity: string;
  code?: string | number;
  message: string;
}

/**
 * The violations Prism reported for one exchange (its `sl-violations` header), split by side.
 * Prism's mock reports request violations; `prism proxy` in front of a server also reports where
 * the server's response breaks the spec.
 */
export function prismViolations(response: Response): { request: PrismViolation[]; response: PrismViolation[] } {
  const raw = response.headers.get('sl-violations');
  const all: PrismViolation[] = raw ? JSON.parse(raw) : [];
  return {
    request: all.filter((v) => v.location?.[0] === 'request'),
    response: all.filter((v) => v.location?.[0] !== 'request'),
  };
}

/** Prism in proxy mode: forwards to `upstream` and reports spec violations of both sides. */
export async function startPrismProxy(api: ApiName, upstream: string): Promise<Running> {
  const port = await freePort();
  const bin = join(repoRoot, 'node_modules/.bin/prism');
  return spawnUntil(
    bin,
    ['proxy', bundlePath(api, 'yaml'), upstream, '-p', String(port), '-h', '127.0.0.1'],
    /Prism is listening on/,
    `http://127.0.0.1:${port}`,
  );
}

/**
 * An openapi-fetch middleware that records every response-side Prism violation into `sink`
 * (`METHOD path: message`), so a suite can assert after each test that no response broke the spec.
 */
export function recordResponseViolations(sink: string[]) {
  return {
    onResponse({ request, response }: { request: Request; response: Response }) {
      for (const v of prismViolations(response).response) {
        sink.push(`${request.method} ${new URL(request.url).pathname}: ${v.location.join('.')} ${v.message}`);
      }
      return undefined;
    },
  };
}

/**
 * A fetch for unit tests with an injected fetch (openapi-fetch's createObservedClient pattern):
 * the client runs for real; this records a copy of each Request it is given and answers from `answer`.
 */
export function recordingFetch(answer: (req: Request) => Response | Promise<Response> = () => Response.json({})) {
  const seen: Request[] = [];
  const fetch = (async (input: Parameters<typeof globalThis.fetch>[0], init?: RequestInit) => {
    const req = new Request(input, init);
    seen.push(req.clone());
    return answer(req);
  }) as typeof globalThis.fetch;
  return { fetch, seen, last: () => seen.at(-1) as Request };
}
