import { createServer, type IncomingHttpHeaders, request, type Server } from 'node:http';
import { freePort } from '@zone-api/testkit';

export interface Recorded {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  body: string;
  status?: number;
}

export interface Recorder {
  url: string;
  requests: Recorded[];
  close(): Promise<void>;
}

/** A node:http proxy that records each request and forwards it to `upstream`. */
export async function recorder(upstream: string): Promise<Recorder> {
  const requests: Recorded[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const url = new URL(req.url ?? '/', 'http://recorder');
      const entry: Recorded = {
        method: req.method ?? '',
        path: url.pathname,
        query: url.searchParams,
        headers: req.headers,
        body: body.toString('utf8'),
      };
      requests.push(entry);
      const up = request(`${upstream}${req.url}`, { method: req.method, headers: req.headers }, (ures) => {
        entry.status = ures.statusCode;
        res.writeHead(ures.statusCode ?? 502, ures.headers);
        ures.pipe(res);
      });
      up.on('error', (e) => {
        res.writeHead(502);
        res.end(String(e));
      });
      up.end(body.length ? body : undefined);
    });
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${port}`, requests, close: () => new Promise((resolve) => server.close(() => resolve())) };
}
