import { randomUUID } from 'node:crypto';
import { isIP } from 'node:net';
import type { HarEntry } from './types.js';

// A request through a proxy port as the real manager (1.570.247) logs it, field for field (compared
// with the real manager's own entries in the real-manager suite): a HAR 1.2 entry with `uuid` and
// `details`, the response text capped at `har_limit` bytes (none for images, scripts and styles),
// HTTP versions `unknown`, timings all 0 (the times are in `details.timeline`), `serverIPAddress` and
// `details.super_proxy` the upstream proxy, `comment` and `details.username` the upstream username.
// The real manager also logs the upstream password in `details.password`; the sandbox does not
// write a credential into a log.

/**
 * What the HAR log holds at most, whatever the `logs` setting asks (the real manager keeps any number,
 * and `logs: 2147483647` once let the log grow without bound): entries, and bytes of the bodies they
 * keep; past either the oldest entries go, as past `logs`; and steps of an entry's timeline (a request
 * a rule sent again 100 times has 101 passes; the spec's bound keeps the last 100). The sandbox's own bounds.
 */
export const HAR_LIMITS = { entries: 10_000, bytes: 64 * 1024 * 1024, body: 16 * 1024 * 1024, timeline: 100 } as const;

/** The bytes an entry holds, roughly: its kept bodies and a kilobyte for the rest. */
export function harEntryWeight(e: HarEntry): number {
  return 1024 + (e.request.postData?.text?.length ?? 0) + (e.response.content.text?.length ?? 0);
}

export interface Exchange {
  port: number;
  /** The request's context (`x-hola-context`, e.g. `STATUS CHECK`); none: `RESPONSE`. */
  context?: string;
  started: number;
  time: number;
  method: string;
  url: string;
  requestHeaders: Record<string, string | string[] | undefined>;
  /** The request body's first bytes, as many as the log keeps of it (harKeep). */
  requestBody: Buffer;
  /** The request body's bytes, all of them (requestBody's length when not given). */
  requestSize?: number;
  /** `unknown` for a tunnel to port 443 (status and body, as the real manager logs it); a fake answer's status as its client wrote it, a text (control-headers.ts). */
  status: number | string;
  statusText: string;
  responseHeaders: Record<string, string>;
  /** The answer's first bytes, as many as the log keeps of it (harKeep). */
  responseBody: Buffer | undefined;
  /** The answer's bytes, all of them (responseBody's length when not given). */
  responseSize?: number;
  /** The log's text of an encoded answer, decoded from responseBody (traffic/har-body.ts), and what it says of it. */
  decoded?: { text: string; comment?: string };
  inBw: number;
  outBw: number;
  /** A tunnel's bytes from its target (the body of its entry). */
  received?: number;
  peer: string | null;
  /** The upstream proxy, `host:port`. */
  upstream: string;
  /** The upstream username and session of the attempt that answered ('' before one did). */
  username: string;
  session: string;
  /** Milliseconds from the start to the upstream's answer (its head, for a tunnel). */
  answered: number;
  clientIp: string;
  protocol: 'http' | 'https';
  harLimit: number;
  /** The port's rules that ran for the request (traffic/rules.ts). */
  rules?: Record<string, unknown>[];
  /** The request's passes before the one that answered (a rule sent it again, on this port or another), each with its port and session. */
  earlier?: { port: number; session: string }[];
}

const headerList = (h: Record<string, string | string[] | undefined>) =>
  Object.entries(h).flatMap(([name, v]) => (v === undefined ? [] : [v].flat().map((value) => ({ name, value: String(value) }))));

/**
 * The real manager's content kind for `details.content_type`, from the answer's `content-type` header
 * ('' when it has none), in its order: `json` anywhere is `xhr` before `html`, `image` anywhere is `img`
 * (lib/server.js 72-96 `get_content_type`). A tunnel's is `unknown` (harEntry).
 */
function contentType(mime: string): string {
  if (/json/.test(mime)) return 'xhr';
  if (/html/.test(mime)) return 'html';
  if (/javascript/.test(mime)) return 'js';
  if (/css/.test(mime)) return 'css';
  if (/image/.test(mime)) return 'img';
  if (/audio|video/.test(mime)) return 'media';
  if (/font/.test(mime)) return 'font';
  return 'other';
}

/** Whether the real manager keeps no body of an answer: its `content-type` names an image, a script or a style (lib/mixins/server_handle.js 181-182, lib/util.js 532-536 `is_one_of_types`). */
const bodyless = (mime: string) => ['image', 'javascript', 'css'].some((t) => mime.includes(t));

/** The generic second-level labels under which a root domain has three labels (`example.co.uk`). */
const GENERIC_2LD = new Set(['com', 'biz', 'net', 'org', 'xxx', 'edu', 'gov', 'ac', 'co', 'or', 'ne', 'kr', 'jp', 'jpn', 'cn']);

/** The root domain of a host, as the real manager groups and logs hosts; an IP stays as it is. */
export function rootDomain(host: string): string {
  // A host name holds brackets only around an IPv6 address.
  if (isIP(host.replace(/[[\]]/g, ''))) return host;
  const labels = host.split('.');
  return labels.slice(GENERIC_2LD.has(labels[labels.length - 2] as string) ? -3 : -2).join('.');
}

/** Whether the real manager counts a status as a success: 1xx, 2xx, 3xx, 404, or `unknown` (a tunnel to port 443). */
export const successful = (status: number | string) => status === 'unknown' || /([123]..|404)/.test(String(status));

/**
 * A logged request's URL, when it is one the sandbox can read: absolute, or for a tunnel its
 * authority, `host:port`, as the real manager logs one (a data file of an earlier sandbox may hold a
 * tunnel's URL as `https://host:port`).
 */
export function loggedUrl(method: string, url: string): URL | undefined {
  if (method === 'CONNECT' && !/:\d+$/.test(url)) return undefined;
  const absolute = method === 'CONNECT' && !url.includes('://') ? `http://${url}` : url;
  return URL.canParse(absolute) ? new URL(absolute) : undefined;
}

/**
 * How many bytes of an answer the log keeps, as the real manager: `har_limit` (-1: none; 0: all,
 * lib/mixins/server_handle.js 18-27), none of images, scripts and styles (its lib/mixins/
 * server_handle.js 181-182), and never more than HAR_LIMITS.body.
 */
export function harKeep(harLimit: number, mime: string | undefined): number {
  if (harLimit < 0 || bodyless(mime ?? '')) return 0;
  return harLimit === 0 ? HAR_LIMITS.body : Math.min(harLimit, HAR_LIMITS.body);
}

/**
 * A body as the HAR log keeps it: its text up to `harKeep` bytes of `size`, and what says it was cut.
 * An answer's text is also trimmed, as the real manager's decode_body trims every answer it keeps, an
 * encoding it does not decode included (lib/util.js 253-290: `s.toString('utf8').trim()`); a request's
 * body is kept as it came (lib/server.js 1180, `request_body`).
 */
function kept(body: Buffer, size: number, limit: number, answer = false): { text: string; cut?: string } {
  const keep = Math.min(harKeep(limit, undefined), body.length);
  const text = body.subarray(0, keep).toString('utf8');
  const shown = answer ? text.trim() : text;
  if (keep >= size) return { text: shown };
  // The real manager cuts an answer at har_limit without a word (lib/util.js 285-287, lib/manager.js
  // 476-484: no `comment`) and keeps a request's body whole (lib/server.js 455): the comment says where the
  // sandbox's own bounds cut (HAR_LIMITS.body, a request's body at har_limit).
  const byHarLimit = limit < 0 || keep === limit;
  if (answer && byHarLimit) return { text: shown };
  return { text: shown, cut: `cut to ${byHarLimit ? 'har_limit' : 'the sandbox bound'}: ${keep} of ${size} bytes kept` };
}

export function harEntry(x: Exchange, uuid: string = randomUUID()): HarEntry {
  const url = loggedUrl(x.method, x.url);
  const mime = x.responseHeaders['content-type'] ?? '';
  const kind = x.status === 'unknown' ? 'unknown' : contentType(mime);
  // Bodies of images, scripts and styles are not kept; others up to har_limit bytes (-1: none, 0: all).
  let text: string | undefined;
  let contentCut: string | undefined;
  if (x.status === 'unknown') text = 'unknown';
  else if (x.decoded && !bodyless(mime)) ({ text, comment: contentCut } = x.decoded);
  else if (!x.responseBody) text = '';
  else if (!bodyless(mime)) ({ text, cut: contentCut } = kept(x.responseBody, x.responseSize ?? x.responseBody.length, x.harLimit, true));
  // Under either spelling, as the real manager reads it (lib/manager.js 467-468): the log keeps the client's.
  const reqType = x.requestHeaders['content-type'] ?? x.requestHeaders['Content-Type'];
  // The request body too is kept up to har_limit: ten 50 MB uploads once kept 450 MB in the log.
  const posted = kept(x.requestBody, x.requestSize ?? x.requestBody.length, x.harLimit);
  return {
    uuid,
    details: {
      context: x.context ?? 'RESPONSE',
      out_bw: x.outBw,
      in_bw: x.inBw,
      bw: x.inBw + x.outBw,
      // No key where no peer was named: the real manager's is undefined there (lib/server.js 462), which its JSON leaves out.
      ...(x.peer ? { proxy_peer: x.peer } : {}),
      protocol: x.protocol,
      port: x.port,
      timestamp: x.started,
      content_type: kind,
      success: successful(x.status) ? 1 : 0,
      // One step per pass (the real manager's timeline); the earlier ones with no times, the spec's bound of steps kept.
      timeline: [
        ...(x.earlier ?? []).slice(-(HAR_LIMITS.timeline - 1)).map((p) => ({ blocked: 0, wait: 0, ttfb: 0, receive: 0, end: 0, ...p })),
        {
          blocked: 0,
          wait: 0,
          ttfb: x.answered,
          receive: x.time - x.answered,
          end: x.time,
          port: x.port,
          session: x.session,
        },
      ],
      super_proxy: x.upstream,
      username: x.username,
      remote_address: x.clientIp,
      rules: x.rules ?? [],
    },
    startedDateTime: new Date(x.started).toISOString(),
    time: x.time,
    request: {
      method: x.method,
      url: x.url,
      host: rootDomain(url?.hostname.replace(/[[\]]/g, '') ?? ''),
      httpVersion: 'unknown',
      cookies: [],
      headers: headerList(x.requestHeaders),
      headersSize: -1,
      postData: { mimeType: String(reqType ?? ''), text: posted.text, ...(posted.cut ? { comment: posted.cut } : {}) },
      bodySize: x.requestSize ?? x.requestBody.length,
      queryString: [],
    },
    response: {
      status: x.status,
      statusText: x.statusText,
      httpVersion: 'unknown',
      cookies: [],
      // In name order: the real manager stores them through json-stable-stringify (lib/server.js 11 and 456).
      headers: headerList(x.responseHeaders).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)),
      content: {
        size: x.responseSize ?? x.responseBody?.length ?? x.received ?? 0,
        mimeType: mime || 'unknown',
        ...(text !== undefined ? { text } : {}),
        ...(contentCut ? { comment: contentCut } : {}),
      },
      headersSize: -1,
      bodySize: x.responseSize ?? x.responseBody?.length ?? x.received ?? 0,
      redirectURL: '',
    },
    cache: {},
    timings: { blocked: 0, dns: 0, ssl: 0, connect: 0, send: 0, wait: 0, receive: 0 },
    serverIPAddress: x.upstream,
    comment: x.username,
  };
}
