import { bypass, type HttpHandler, HttpResponse, http, passthrough } from 'msw';
import type { Sandbox } from '../host/sandbox-types.js';
import { PROVIDER_API_ORIGINS } from '../shared/brand.js';

// The sandbox through MSW (`setupServer` in Node, `setupWorker` in a browser): code that calls the
// provider's own host names (a client with a built-in URL, a team's wrapper with a fixed one, the
// local manager's well-known address) is answered by the sandbox with no base URL changed. Given the
// sandbox itself, each request is served in process with no socket (its router answers it as if it
// had come over loopback); given its URLs (a sandbox in vitest's globalSetup, another process), each
// is sent on to them over loopback. Either way the sandbox's own behaviour applies unchanged:
// validation, faults, overrides, the record of calls, accounts by credential.
//
//   import { setupServer } from 'msw/node';
//   import { sandboxHandlers } from '@zone-api/sandbox/msw';
//   const server = setupServer(...sandboxHandlers(sandbox));
//   server.listen({ onUnhandledRequest: 'error' });
//
// MSW 2 sees `fetch`, `node:http`/`node:https` (axios, got, …) and XMLHttpRequest; it does not see
// undici's own `request()` (mswjs/msw#2165), which the provider's JS SDK uses: `interceptUndici(server)`
// has the same handlers answer those too (msw-undici.ts).

export { type HandlerSource, type InterceptUndiciOptions, interceptUndici, mswDispatcher, type UndiciDispatcher } from './msw-undici.js';

export interface SandboxHandlersOptions {
  /**
   * Origins answered by the account API. Default: the provider's account API host as its own clients
   * have it built in (`https://api.brightdata.com`, and over HTTP).
   */
  accountOrigins?: readonly string[];
  /**
   * Origins answered by the manager API. Default: the local proxy manager's well-known address
   * (`http://127.0.0.1:22999`, `http://localhost:22999`); `[]` leaves them alone.
   */
  managerOrigins?: readonly string[];
}

/** A sandbox in another process (or its CLI), by its URLs: requests go on to them over loopback. */
export interface SandboxUrls {
  accountUrl: string;
  managerUrl?: string;
}

/** The local proxy manager's well-known address, where code that drives it sends its calls. */
const MANAGER_ORIGINS = ['http://127.0.0.1:22999', 'http://localhost:22999'];

type Api = 'account' | 'manager';

/** A request sent on to a sandbox's URL (its Host is the sandbox's, as the connection's), not intercepted again. */
async function forward(base: string, request: Request): Promise<Response> {
  const from = new URL(request.url);
  const headers = new Headers(request.headers);
  headers.delete('host');
  const body = request.method === 'GET' || request.method === 'HEAD' ? undefined : await request.arrayBuffer();
  return fetch(bypass(new Request(new URL(`${from.pathname}${from.search}`, base), { method: request.method, headers, body })));
}

/** MSW request handlers that answer the provider's hosts from a sandbox: in process, or at its URLs. */
export function sandboxHandlers(sandbox: Pick<Sandbox, 'handle'> | SandboxUrls, options: SandboxHandlersOptions = {}): HttpHandler[] {
  const serve = async (api: Api, request: Request): Promise<Response> => {
    if ('handle' in sandbox) return sandbox.handle(api, request);
    const base = api === 'account' ? sandbox.accountUrl : sandbox.managerUrl;
    if (!base) throw new Error('sandboxHandlers: the manager origins need the sandbox managerUrl');
    return forward(base, request);
  };
  const route = (api: Api, list: readonly string[]) =>
    list.map((origin) =>
      // Every method and path of the origin: the sandbox answers what it does not serve with its own 404.
      http.all(`${new URL(origin).origin}/*`, async ({ request }) => {
        let answer: Response;
        try {
          answer = await serve(api, request);
        } catch {
          // The sandbox dropped the connection (a `drop` fault): the caller sees a network error, as over a socket.
          return HttpResponse.error();
        }
        return new HttpResponse(answer.body, { status: answer.status, statusText: answer.statusText, headers: answer.headers });
      }),
    );
  const managerOrigins = options.managerOrigins ?? ('handle' in sandbox || sandbox.managerUrl ? MANAGER_ORIGINS : []);
  // The sandbox's own URLs (its control calls such as POST /__sandbox/accounts, clients pointed at it)
  // are handled by passing them on: left unhandled, a user's `onUnhandledRequest: 'error'` refuses them
  // and MSW prints each one with its body (a seed is ~10 KB of JSON).
  const urls = sandbox as Partial<SandboxUrls>;
  const own = [...new Set([urls.accountUrl, urls.managerUrl].filter((u): u is string => !!u).map((u) => new URL(u).origin))];
  return [
    ...route('account', options.accountOrigins ?? PROVIDER_API_ORIGINS),
    ...route('manager', managerOrigins),
    ...own.map((origin) => http.all(`${origin}/*`, () => passthrough())),
  ];
}
