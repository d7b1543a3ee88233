import { getResponse, onUnhandledRequest, RequestHandler, type UnhandledRequestStrategy } from 'msw';

// undici's own `request()`/`stream()` (the provider's JS SDK calls them: its `dist/esm/utils/net.mjs`
// 29-32 hands `undici.request` its zone calls, `api/zones.mjs` 18 and 91, with no dispatcher of their
// own) go to undici's global dispatcher, which MSW 2 does not wrap on Node 20 (mswjs/msw#2165). Every
// copy of undici in a process (the SDK's own, Node's bundled one behind `fetch`) finds that dispatcher
// under the same global symbol. `interceptUndici` puts a dispatcher there that asks the same MSW
// handlers (`getResponse`) first and hands everything they leave alone to the dispatcher it replaced.
// Calls given a dispatcher of their own (the SDK's scrape and dataset calls, `net.mjs` 7-16) pass it by.
//
// What no handler answers meets an `onUnhandledRequest` strategy of its own, 'error' unless the caller
// chooses another: MSW keeps the one given to `server.listen()` to itself, and a request that no
// handler answers must not reach the real network by default (a test could reach the provider).
// Passing it on is the caller's explicit choice ('bypass', 'warn', or a callback that does not throw).

/** undici's global dispatcher slots: `.1` is read by every undici since 5, `.2` is written beside it by undici 7. */
const SLOTS = [Symbol.for('undici.globalDispatcher.1'), Symbol.for('undici.globalDispatcher.2')] as const;

const noop = () => {};

/** The part of undici's `Dispatcher.DispatchOptions` read here. */
interface DispatchOptions {
  origin?: string | URL;
  path: string;
  method: string;
  headers?: unknown;
  body?: unknown;
  query?: Record<string, unknown>;
}

/** A dispatch handler in either of undici's two forms: the one of undici 6 and the `onRequestStart` one of undici 7. */
interface DispatchHandler {
  onConnect?(abort: (err?: Error) => void, context?: object): void;
  onHeaders?(status: number, rawHeaders: Buffer[], resume: () => void, statusText: string): boolean | undefined;
  onData?(chunk: Buffer): boolean | undefined;
  onComplete?(trailers: Buffer[] | null): void;
  onError?(err: Error): void;
  onRequestStart?(controller: Controller, context: object): void;
  onResponseStart?(controller: Controller, status: number, headers: Record<string, string | string[]>, statusText: string): void;
  onResponseData?(controller: Controller, chunk: Buffer): void;
  onResponseEnd?(controller: Controller, trailers: Record<string, string | string[]>): void;
  onResponseError?(controller: Controller, err: Error): void;
}

interface Controller {
  readonly aborted: boolean;
  readonly paused: boolean;
  readonly reason: Error | null;
  abort(reason?: Error): void;
  pause(): void;
  resume(): void;
}

/** What undici needs of a dispatcher. */
export interface UndiciDispatcher {
  dispatch(options: DispatchOptions, handler: DispatchHandler): boolean;
  close(): Promise<void>;
  destroy(): Promise<void>;
}

/**
 * MSW's handlers, or a server whose handlers (with its `use()` overrides) are read at each request;
 * its WebSocket handlers have nothing to say to undici's requests and are left out.
 */
export type HandlerSource = readonly RequestHandler[] | { listHandlers(): readonly unknown[] };

export interface InterceptUndiciOptions {
  /**
   * What happens to a request no handler answers, as MSW's option of the same name (give both the same
   * value): 'error' (default) refuses it with a network error and sends nothing; 'warn' and 'bypass'
   * hand it to the dispatcher that was there before; a callback hands it on unless it throws or calls
   * `print.error()`. A handler's `passthrough()` and a `bypass()`ed request are always handed on.
   */
  onUnhandledRequest?: UnhandledRequestStrategy;
}

/** undici's header forms: a flat `[name, value, …]` list, `[name, value]` pairs, or an object. */
function headersOf(raw: unknown): Headers {
  const headers = new Headers();
  const add = (name: unknown, value: unknown) => {
    for (const v of Array.isArray(value) ? value : [value]) if (v !== undefined) headers.append(String(name), String(v));
  };
  if (raw == null) return headers;
  if (typeof raw === 'object' && Symbol.iterator in raw) {
    const list = [...(raw as Iterable<unknown>)];
    if (list.every((e) => Array.isArray(e))) for (const [n, v] of list as unknown[][]) add(n, v);
    else for (let i = 0; i + 1 < list.length; i += 2) add(list[i], list[i + 1]);
  } else {
    for (const [n, v] of Object.entries(raw)) add(n, v);
  }
  return headers;
}

/** undici's body forms (text, bytes, a stream or iterable of chunks), read whole: these are API calls. */
async function bodyOf(body: unknown): Promise<Uint8Array | undefined> {
  if (body == null) return undefined;
  if (typeof body === 'string') return Buffer.from(body);
  if (body instanceof Uint8Array) return body;
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  if (typeof body === 'object' && Symbol.asyncIterator in body) {
    const chunks: Buffer[] = [];
    for await (const c of body as AsyncIterable<unknown>)
      chunks.push(typeof c === 'string' ? Buffer.from(c) : Buffer.from(c as Uint8Array));
    return Buffer.concat(chunks);
  }
  if (typeof body === 'object' && Symbol.iterator in body) {
    return Buffer.concat(
      [...(body as Iterable<Uint8Array | string>)].map((c) => (typeof c === 'string' ? Buffer.from(c) : Buffer.from(c))),
    );
  }
  throw new TypeError(`interceptUndici: a request body of type ${Object.prototype.toString.call(body)} cannot be read`);
}

/** The request undici was asked to send, as a Fetch `Request` for MSW's handlers. */
async function requestOf(opts: DispatchOptions): Promise<Request> {
  const url = new URL(opts.path, String(opts.origin));
  for (const [k, v] of Object.entries(opts.query ?? {}))
    for (const item of Array.isArray(v) ? v : [v]) url.searchParams.append(k, String(item));
  const method = opts.method.toUpperCase();
  const body = method === 'GET' || method === 'HEAD' ? undefined : await bodyOf(opts.body);
  return new Request(url, { method, headers: headersOf(opts.headers), body });
}

/**
 * Feeds a Response to an undici handler of either form, honouring its pauses; `aborted` tells when the
 * caller gave up (its signal, a timeout).
 */
async function deliver(handler: DispatchHandler, response: Response): Promise<void> {
  let isPaused = false;
  let wake: (() => void) | undefined;
  let abortedWith: Error | null = null;
  const waitIfPaused = () => (isPaused ? new Promise<void>((resolve) => (wake = resolve)) : Promise.resolve());
  const resume = () => {
    isPaused = false;
    wake?.();
    wake = undefined;
  };
  const controller: Controller = {
    get aborted() {
      return abortedWith !== null;
    },
    get paused() {
      return isPaused;
    },
    get reason() {
      return abortedWith;
    },
    abort: (reason) => {
      abortedWith = reason ?? new Error('aborted');
      resume();
    },
    pause: () => {
      isPaused = true;
    },
    resume,
  };
  const modern = typeof handler.onRequestStart === 'function' || typeof handler.onResponseStart === 'function';
  if (modern) handler.onRequestStart?.(controller, {});
  else handler.onConnect?.((err) => controller.abort(err), {});
  if (abortedWith) throw abortedWith;

  const flat: Buffer[] = [];
  const record: Record<string, string | string[]> = {};
  response.headers.forEach((value, name) => {
    if (name === 'set-cookie') return;
    flat.push(Buffer.from(name), Buffer.from(value));
    record[name] = value;
  });
  const cookies = response.headers.getSetCookie();
  for (const c of cookies) flat.push(Buffer.from('set-cookie'), Buffer.from(c));
  if (cookies.length) record['set-cookie'] = cookies;

  if (modern) handler.onResponseStart?.(controller, response.status, record, response.statusText);
  else if (handler.onHeaders?.(response.status, flat, resume, response.statusText) === false) controller.pause();
  if (response.body) {
    const reader = response.body.getReader();
    for (;;) {
      await waitIfPaused();
      if (abortedWith) {
        await reader.cancel(abortedWith);
        throw abortedWith;
      }
      const { done, value } = await reader.read();
      if (done) break;
      const chunk = Buffer.from(value);
      if (modern) handler.onResponseData?.(controller, chunk);
      else if (handler.onData?.(chunk) === false) controller.pause();
    }
  }
  if (abortedWith) throw abortedWith;
  if (modern) handler.onResponseEnd?.(controller, {});
  else handler.onComplete?.([]);
}

/**
 * A dispatcher that answers from MSW's handlers what they answer, hands on to `fallback` what they
 * pass (`passthrough()`, `bypass()`), and what no handler answers as `options.onUnhandledRequest` says
 * (refused by default).
 */
export function mswDispatcher(source: HandlerSource, fallback: UndiciDispatcher, options: InterceptUndiciOptions = {}): UndiciDispatcher {
  const strategy = options.onUnhandledRequest ?? 'error';
  const handlersOf = () =>
    'listHandlers' in source ? source.listHandlers().filter((h): h is RequestHandler => h instanceof RequestHandler) : [...source];
  return {
    dispatch(opts, handler) {
      const run = async () => {
        const request = await requestOf(opts);
        // The body is read now: what goes on to the fallback carries it as bytes.
        const forward = { ...opts, body: request.body ? new Uint8Array(await request.clone().arrayBuffer()) : opts.body };
        const bypassed = request.headers.get('accept')?.includes('msw/passthrough') || request.headers.get('x-msw-intention') === 'bypass';
        const response = bypassed ? undefined : await getResponse(handlersOf(), request.clone());
        if (!response && !bypassed) {
          // Throws (refusing the request) on 'error', on print.error(), or when the callback throws.
          await onUnhandledRequest(request.clone(), strategy).catch((err: unknown) => {
            const reason = err instanceof Error ? err.message : String(err);
            throw Object.assign(new TypeError(`Refused, not sent (no MSW handler, onUnhandledRequest): ${reason}`), {
              code: 'UND_ERR_SOCKET',
              cause: err,
            });
          });
        }
        if (!response || response.headers.get('x-msw-intention') === 'passthrough') {
          fallback.dispatch(forward, handler);
          return;
        }
        // HttpResponse.error(): a network error, as a dropped connection gives.
        if (response.type === 'error')
          throw Object.assign(new TypeError('Network error (the MSW handler answered HttpResponse.error())'), { code: 'UND_ERR_SOCKET' });
        await deliver(handler, response);
      };
      run().catch((err: Error) => {
        if (handler.onResponseError) handler.onResponseError(deadController(err), err);
        else handler.onError?.(err);
      });
      return true;
    },
    close: () => Promise.resolve(),
    destroy: () => Promise.resolve(),
  };
}

/** A controller for a request already over. */
function deadController(reason: Error): Controller {
  return { aborted: true, paused: false, reason, abort: noop, pause: noop, resume: noop };
}

/**
 * Installs `mswDispatcher(source, current)` as undici's global dispatcher for every copy of undici in
 * the process, and returns the function that puts the previous one back:
 *
 *   const server = setupServer(...sandboxHandlers(sandbox));
 *   server.listen({ onUnhandledRequest: 'error' });
 *   const restore = interceptUndici(server); // the provider's SDK is answered too; unmatched: refused
 */
export function interceptUndici(source: HandlerSource, options: InterceptUndiciOptions = {}): () => void {
  const slots = globalThis as unknown as Record<symbol, UndiciDispatcher | undefined>;
  // Node loads its bundled undici, and with it the global dispatcher, on the first use of a fetch class.
  if (slots[SLOTS[0]] === undefined) new Headers();
  const previous = SLOTS.map((s) => slots[s]);
  const fallback = previous[0];
  if (!fallback) throw new Error('interceptUndici: no undici global dispatcher in this process to hand other requests to');
  const set = (slot: symbol, value: UndiciDispatcher | undefined) =>
    // As undici's own setGlobalDispatcher defines it, so that undici can set it again.
    Object.defineProperty(globalThis, slot, { value, writable: true, enumerable: false, configurable: false });
  const dispatcher = mswDispatcher(source, fallback, options);
  for (const s of SLOTS) set(s, dispatcher);
  return () => {
    SLOTS.forEach((s, i) => {
      if (slots[s] === dispatcher) set(s, previous[i] ?? fallback);
    });
  };
}
