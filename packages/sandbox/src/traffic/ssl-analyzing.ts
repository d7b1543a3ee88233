import { createServer as createHttpsServer } from 'node:https';
import { type SandboxCa, sniFrom } from './ca.js';
import type { Inflight } from './inflight.js';
import type { PortRequest } from './port-context.js';
import { servePortRequest } from './port-request.js';
import { connectHead, type TunnelTag, tunnel } from './tunnel.js';

/**
 * SSL analyzing (`ssl: true`): the port answers the CONNECT itself, terminates TLS with a
 * certificate for the target signed by the sandbox's CA, and serves each request inside as an
 * HTTPS request, logged in full.
 */
export async function analyzeSsl(
  ctx: PortRequest,
  hostname: string,
  targetPort: number,
  ca: SandboxCa,
  inflight?: Inflight,
): Promise<{ customTag: TunnelTag }> {
  const origin = `https://${hostname.includes(':') ? `[${hostname}]` : hostname}${targetPort === 443 ? '' : `:${targetPort}`}`;
  const server = createHttpsServer({ ...(await ca.pemFor(hostname)), SNICallback: sniFrom(ca) }, (req, res) => {
    const served = servePortRequest(ctx, req, new URL(req.url ?? '/', origin), res);
    (inflight?.track(served) ?? served).catch((err: Error & { statusCode?: number; headers?: Record<string, string> }) => {
      // Once the answer's head is out, a failure can only cut it short.
      if (res.headersSent) return res.destroy();
      res.writeHead(err.statusCode ?? 502, { 'content-type': 'text/plain', ...(err.headers ?? {}) });
      res.end(err.message);
    });
  });
  return {
    customTag: tunnel(async (socket, head) => {
      socket.unshift(head);
      socket.write(connectHead(200, 'Connection established'));
      server.emit('connection', socket);
      await new Promise((resolve) => socket.once('close', resolve));
    }),
  };
}
