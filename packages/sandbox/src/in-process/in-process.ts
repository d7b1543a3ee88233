import type { FastifyInstance } from 'fastify';

// The sandbox answering a Fetch API Request in process, with no socket (Sandbox.handle(), which the
// MSW adapter calls): the API's router serves it through fastify's inject as if it had come over
// loopback, whatever host its URL names.

/** Statuses whose answer has no body (a Fetch API Response refuses one). */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

/** `request` answered by `app`, its Host header `host` (the sandbox's own, `127.0.0.1:8787`). */
export async function answerInProcess(app: FastifyInstance, request: Request, host: string): Promise<Response> {
  const url = new URL(request.url);
  const headers: Record<string, string> = {};
  request.headers.forEach((v, k) => {
    headers[k] = v;
  });
  // The length is the payload's own; the Host is the sandbox's (the request never left the process).
  delete headers['content-length'];
  delete headers['transfer-encoding'];
  headers.host = host;
  const payload = request.method === 'GET' || request.method === 'HEAD' ? undefined : Buffer.from(await request.arrayBuffer());
  const res = await new Promise<Awaited<ReturnType<FastifyInstance['inject']>>>((resolve, reject) => {
    app
      .inject({
        method: request.method as 'GET',
        url: `${url.pathname}${url.search}`,
        headers,
        ...(payload?.length ? { payload } : {}),
      })
      .then(resolve, reject);
  });
  const out = new Headers();
  for (const [k, v] of Object.entries(res.headers)) {
    if (v === undefined) continue;
    for (const one of Array.isArray(v) ? v : [v]) out.append(k, String(one));
  }
  const body = NULL_BODY.has(res.statusCode) || request.method === 'HEAD' ? null : res.rawPayload;
  return new Response(body, { status: res.statusCode, statusText: res.statusMessage, headers: out });
}
