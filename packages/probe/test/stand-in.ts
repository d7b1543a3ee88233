import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

// A stand-in for a team's service: a loopback server answering each path as a test says, and
// recording what it was asked.

export type Answer = (req: IncomingMessage, res: ServerResponse) => void;

export interface StandIn {
  url: string;
  /** Each request it got: method, path and query, headers. */
  requests: Array<{ method: string; url: string; headers: IncomingMessage['headers'] }>;
  close(): Promise<void>;
}

/** Starts a stand-in on a free loopback port; a path it has no answer for gets 404 with no body. */
export async function startStandIn(answers: Record<string, Answer>): Promise<StandIn> {
  const requests: StandIn['requests'] = [];
  const server = createServer((req, res) => {
    requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
    const answer = answers[(req.url ?? '').split('?')[0] ?? ''];
    if (answer) answer(req, res);
    else {
      res.statusCode = 404;
      res.end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A JSON answer. */
export const json =
  (body: unknown, status = 200, headers: Record<string, string> = {}): Answer =>
  (_req, res) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(typeof body === 'string' ? body : JSON.stringify(body));
  };

/** A text answer in any media type. */
export const textAnswer =
  (body: string, media: string, status = 200, headers: Record<string, string> = {}): Answer =>
  (_req, res) => {
    res.writeHead(status, { 'content-type': media, ...headers });
    res.end(body);
  };
