import { randomUUID } from 'node:crypto';
import type { HarEntry } from '../domain/types.js';

// A request through a proxy port as the real manager logs it: a HAR 1.2 entry with `uuid` and
// `details`, the response text capped at `har_limit` bytes (none for images, scripts and styles),
// timings all 0, `serverIPAddress` the upstream proxy.

export interface Exchange {
  port: number;
  started: number;
  time: number;
  method: string;
  url: string;
  requestHeaders: Record<string, string | string[] | undefined>;
  requestBody: Buffer;
  /** 0 and `unknown` for a CONNECT tunnel, whose content the port does not see. */
  status: number;
  statusText: string;
  responseHeaders: Record<string, string>;
  responseBody: Buffer | undefined;
  inBw: number;
  outBw: number;
  peer: string | null;
  upstream: string;
  clientIp: string;
  protocol: 'http' | 'https';
  harLimit: number;
}

const headerList = (h: Record<string, string | string[] | undefined>) =>
  Object.entries(h).flatMap(([name, v]) => (v === undefined ? [] : [v].flat().map((value) => ({ name, value: String(value) }))));

/** The real manager's content types for `details.content_type`, from the response's media type. */
function contentType(mime: string): string | null {
  if (!mime) return null;
  if (/html/.test(mime)) return 'html';
  if (/json/.test(mime)) return 'json';
  if (/javascript/.test(mime)) return 'js';
  if (/css/.test(mime)) return 'css';
  if (/^image\//.test(mime)) return 'img';
  if (/^(audio|video)\//.test(mime)) return 'media';
  if (/font/.test(mime)) return 'font';
  return 'other';
}

export function harEntry(x: Exchange): HarEntry {
  const url = URL.canParse(x.url) ? new URL(x.url) : undefined;
  const mime = x.responseHeaders['content-type'] ?? (x.responseBody ? '' : 'unknown');
  const kind = contentType(mime);
  // Bodies of images, scripts and styles are not kept; others up to har_limit bytes (-1: no limit).
  let text: string | undefined;
  if (!x.responseBody) text = 'unknown';
  else if (!['img', 'js', 'css'].includes(kind ?? '')) {
    const cap = x.harLimit < 0 ? x.responseBody.length : Math.min(x.harLimit, x.responseBody.length);
    text = x.responseBody.subarray(0, cap).toString('utf8');
  }
  const reqType = x.requestHeaders['content-type'];
  return {
    uuid: randomUUID(),
    startedDateTime: new Date(x.started).toISOString(),
    time: x.time,
    request: {
      method: x.method,
      url: x.url,
      httpVersion: 'HTTP/1.1',
      cookies: [],
      headers: headerList(x.requestHeaders),
      queryString: url ? [...url.searchParams].map(([name, value]) => ({ name, value })) : [],
      ...(x.requestBody.length
        ? { postData: { mimeType: String(reqType ?? 'application/octet-stream'), text: x.requestBody.toString('utf8') } }
        : {}),
      headersSize: -1,
      bodySize: x.requestBody.length,
    },
    response: {
      status: x.status,
      statusText: x.statusText,
      httpVersion: 'HTTP/1.1',
      cookies: [],
      headers: headerList(x.responseHeaders),
      content: { size: x.responseBody?.length ?? x.inBw, mimeType: mime, ...(text !== undefined ? { text } : {}) },
      redirectURL: x.responseHeaders.location ?? '',
      headersSize: -1,
      bodySize: x.responseBody?.length ?? -1,
    },
    cache: {},
    timings: { blocked: 0, dns: 0, connect: 0, send: 0, wait: 0, receive: 0, ssl: 0 },
    serverIPAddress: x.upstream,
    details: {
      port: x.port,
      protocol: x.protocol,
      timestamp: new Date(x.started).toISOString(),
      bw: x.inBw + x.outBw,
      in_bw: x.inBw,
      out_bw: x.outBw,
      proxy_peer: x.peer,
      context: 'RESPONSE',
      content_type: kind,
      success: x.status === 0 || (x.status >= 100 && x.status < 400) || x.status === 404,
      remote_address: x.clientIp,
    },
  };
}
