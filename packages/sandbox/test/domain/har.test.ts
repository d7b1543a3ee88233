import { describe, expect, it } from 'vitest';
import { type Exchange, HAR_LIMITS, harEntry, harEntryWeight, harKeep, loggedUrl, rootDomain, successful } from '../../src/domain/har.js';

// A request through a port as the real manager logs it (src/domain/har.ts): the entry field for field,
// the bodies it keeps, the content kinds, root domains, successes and logged URLs read back.

/** A plain GET answered 200 with a JSON body, through port 24000. */
function exchange(over: Partial<Exchange> = {}): Exchange {
  return {
    port: 24000,
    started: Date.parse('2026-03-04T05:06:07.089Z'),
    time: 120,
    method: 'GET',
    url: 'http://api.example.co.uk/a?b=1',
    requestHeaders: { host: 'api.example.co.uk', accept: ['a/b', 'c/d'], gone: undefined },
    requestBody: Buffer.alloc(0),
    status: 200,
    statusText: 'OK',
    responseHeaders: { 'content-type': 'application/json' },
    responseBody: Buffer.from('  {"ok":true}\n'),
    inBw: 300,
    outBw: 40,
    peer: '10.1.2.3',
    upstream: '127.0.0.1:22225',
    username: 'brd-customer-hl_1-zone-z-session-s1',
    session: 's1',
    answered: 80,
    clientIp: '127.0.0.1',
    protocol: 'http',
    harLimit: 1024,
    ...over,
  };
}

describe('harEntry', () => {
  it('a plain request: every field as the real manager logs it', () => {
    const e = harEntry(exchange(), 'uuid-1');
    expect(e).toEqual({
      uuid: 'uuid-1',
      details: {
        context: 'RESPONSE',
        out_bw: 40,
        in_bw: 300,
        bw: 340,
        proxy_peer: '10.1.2.3',
        protocol: 'http',
        port: 24000,
        timestamp: Date.parse('2026-03-04T05:06:07.089Z'),
        content_type: 'xhr',
        success: 1,
        timeline: [{ blocked: 0, wait: 0, ttfb: 80, receive: 40, end: 120, port: 24000, session: 's1' }],
        super_proxy: '127.0.0.1:22225',
        username: 'brd-customer-hl_1-zone-z-session-s1',
        remote_address: '127.0.0.1',
        rules: [],
      },
      startedDateTime: '2026-03-04T05:06:07.089Z',
      time: 120,
      request: {
        method: 'GET',
        url: 'http://api.example.co.uk/a?b=1',
        host: 'example.co.uk',
        httpVersion: 'unknown',
        cookies: [],
        headers: [
          { name: 'host', value: 'api.example.co.uk' },
          { name: 'accept', value: 'a/b' },
          { name: 'accept', value: 'c/d' },
        ],
        headersSize: -1,
        postData: { mimeType: '', text: '' },
        bodySize: 0,
        queryString: [],
      },
      response: {
        status: 200,
        statusText: 'OK',
        httpVersion: 'unknown',
        cookies: [],
        headers: [{ name: 'content-type', value: 'application/json' }],
        content: { size: 14, mimeType: 'application/json', text: '{"ok":true}' },
        headersSize: -1,
        bodySize: 14,
        redirectURL: '',
      },
      cache: {},
      timings: { blocked: 0, dns: 0, ssl: 0, connect: 0, send: 0, wait: 0, receive: 0 },
      serverIPAddress: '127.0.0.1:22225',
      comment: 'brd-customer-hl_1-zone-z-session-s1',
    });
  });

  it('a uuid of its own when none is given, another each time', () => {
    const a = harEntry(exchange()).uuid;
    expect(a).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(harEntry(exchange()).uuid).not.toBe(a);
  });

  it('a context, rules, a failure and a header given as a number', () => {
    const rules = [{ action: { retry: true } }];
    const e = harEntry(
      exchange({
        context: 'STATUS CHECK',
        rules,
        status: 502,
        statusText: 'Bad Gateway',
        requestHeaders: { 'x-n': 5 as unknown as string },
      }),
    );
    expect(e.details?.context).toBe('STATUS CHECK');
    expect(e.details?.rules).toBe(rules);
    expect(e.details?.success).toBe(0);
    expect(e.request.headers).toEqual([{ name: 'x-n', value: '5' }]);
  });

  it('the timeline: a step of no times for each earlier pass, then the one that answered; the last HAR_LIMITS.timeline kept', () => {
    const earlier = [
      { port: 24000, session: '24000_0' },
      { port: 24001, session: '24001_0' },
    ];
    const e = harEntry(exchange({ port: 24002, session: '24002_3', earlier, answered: 4, time: 10 }));
    const zero = { blocked: 0, wait: 0, ttfb: 0, receive: 0, end: 0 };
    expect(e.details?.timeline).toEqual([
      { ...zero, port: 24000, session: '24000_0' },
      { ...zero, port: 24001, session: '24001_0' },
      { blocked: 0, wait: 0, ttfb: 4, receive: 6, end: 10, port: 24002, session: '24002_3' },
    ]);
    const many = Array.from({ length: 150 }, (_, n) => ({ port: 24000, session: `24000_${n}` }));
    const steps = harEntry(exchange({ earlier: many })).details?.timeline ?? [];
    expect(steps).toHaveLength(HAR_LIMITS.timeline);
    expect(steps[0]?.session).toBe('24000_51');
    expect(steps.at(-2)?.session).toBe('24000_149');
  });

  it('a tunnel to port 443: status, kind and text `unknown`, the size of what came from its target', () => {
    const e = harEntry(
      exchange({
        method: 'CONNECT',
        url: 'example.com:443',
        status: 'unknown',
        statusText: 'unknown',
        responseHeaders: {},
        responseBody: undefined,
        received: 5000,
        protocol: 'https',
      }),
    );
    expect(e.details?.content_type).toBe('unknown');
    expect(e.details?.success).toBe(1);
    expect(e.request.host).toBe('example.com');
    expect(e.response.content).toEqual({ size: 5000, mimeType: 'unknown', text: 'unknown' });
    expect(e.response.bodySize).toBe(5000);
  });

  it('an answer without body: text empty, size 0; a size given wins over the bytes kept', () => {
    const none = harEntry(exchange({ responseBody: undefined, responseHeaders: {} }));
    expect(none.response.content).toEqual({ size: 0, mimeType: 'unknown', text: '' });
    expect(none.response.bodySize).toBe(0);
    const sized = harEntry(exchange({ responseBody: Buffer.from('abc'), responseSize: 3, received: 99 }));
    expect([sized.response.content.size, sized.response.bodySize]).toEqual([3, 3]);
    const bytes = harEntry(exchange({ responseBody: Buffer.from('abcd'), received: 99 }));
    expect([bytes.response.content.size, bytes.response.bodySize]).toEqual([4, 4]);
  });

  it('no body of an image, a script or a style, decoded or not', () => {
    for (const mime of ['image/png', 'application/javascript', 'text/css']) {
      const e = harEntry(exchange({ responseHeaders: { 'content-type': mime }, decoded: { text: 'x', comment: 'decoded' } }));
      expect(e.response.content).toStrictEqual({ size: 14, mimeType: mime });
    }
  });

  it('a decoded answer keeps the decoded text and what it says of it', () => {
    const e = harEntry(
      exchange({
        responseHeaders: { 'content-type': 'text/html', 'content-encoding': 'gzip' },
        decoded: { text: '<p>hi</p>', comment: 'cut' },
      }),
    );
    expect(e.response.content).toEqual({ size: 14, mimeType: 'text/html', text: '<p>hi</p>', comment: 'cut' });
    const plain = harEntry(exchange({ responseHeaders: { 'content-type': 'text/html' }, decoded: { text: '<p>hi</p>' } }));
    expect(plain.response.content).toEqual({ size: 14, mimeType: 'text/html', text: '<p>hi</p>' });
  });

  it('an answer cut to har_limit, trimmed, without a comment (as the real manager); a request body cut, not trimmed, with the comment that says so', () => {
    const body = Buffer.from(' 0123456789 ');
    const e = harEntry(
      exchange({
        harLimit: 6,
        responseBody: body.subarray(0, 6),
        responseSize: 12,
        requestBody: Buffer.from(' abcdef'),
        requestSize: 20,
        requestHeaders: { 'content-type': 'text/plain' },
      }),
    );
    expect(e.response.content).toEqual({
      size: 12,
      mimeType: 'application/json',
      text: '01234',
    });
    expect(e.request.postData).toEqual({ mimeType: 'text/plain', text: ' abcde', comment: 'cut to har_limit: 6 of 20 bytes kept' });
    expect(e.request.bodySize).toBe(20);
  });

  it('a body that fits is kept whole; its size is its length when none is given', () => {
    const e = harEntry(exchange({ harLimit: 6, responseBody: Buffer.from('012345'), requestBody: Buffer.from('abcdef') }));
    expect(e.response.content.text).toBe('012345');
    expect(e.response.content.comment).toBeUndefined();
    expect(e.request.postData).toEqual({ mimeType: '', text: 'abcdef' });
    expect(e.request.bodySize).toBe(6);
  });

  it('har_limit -1 keeps no body (and says so of a request body only), 0 keeps all up to the sandbox bound', () => {
    const none = harEntry(exchange({ harLimit: -1, requestBody: Buffer.from('ab') }));
    expect(none.response.content.text).toBe('');
    expect(none.response.content.comment).toBeUndefined();
    expect(none.request.postData).toEqual({ mimeType: '', text: '', comment: 'cut to har_limit: 0 of 2 bytes kept' });
    const all = harEntry(exchange({ harLimit: 0, responseBody: Buffer.alloc(5000, 'x') }));
    expect(all.response.content.text).toHaveLength(5000);
  });

  it('the content kinds, in the real manager order', () => {
    const kind = (mime: string) => harEntry(exchange({ responseHeaders: { 'content-type': mime } })).details?.content_type;
    expect(
      [
        'application/json',
        'text/html+json',
        'text/html',
        'text/javascript',
        'text/css',
        'image/png',
        'audio/ogg',
        'video/mp4',
        'font/woff2',
        'text/plain',
      ].map(kind),
    ).toEqual(['xhr', 'xhr', 'html', 'js', 'css', 'img', 'media', 'media', 'font', 'other']);
    expect(harEntry(exchange({ responseHeaders: {} })).details?.content_type).toBe('other');
  });

  it('the host of an IPv6 URL and of a URL it cannot read', () => {
    expect(harEntry(exchange({ url: 'http://[::1]:8080/x' })).request.host).toBe('::1');
    expect(harEntry(exchange({ url: '/relative' })).request.host).toBe('');
  });
});

describe('what the log keeps and weighs', () => {
  it('harKeep: -1 none, 0 all up to the cap, images, scripts and styles none, else the limit up to the cap', () => {
    expect(harKeep(-1, 'text/plain')).toBe(0);
    expect(harKeep(0, undefined)).toBe(HAR_LIMITS.body);
    expect(harKeep(0, 'text/plain')).toBe(HAR_LIMITS.body);
    expect(harKeep(10, 'image/gif')).toBe(0);
    expect(harKeep(10, 'text/javascript; charset=utf-8')).toBe(0);
    expect(harKeep(10, 'text/css')).toBe(0);
    expect(harKeep(10, 'text/plain')).toBe(10);
    expect(harKeep(HAR_LIMITS.body + 1, undefined)).toBe(HAR_LIMITS.body);
    expect(harKeep(HAR_LIMITS.body, undefined)).toBe(HAR_LIMITS.body);
  });

  it('harEntryWeight: a kilobyte plus the bodies kept', () => {
    const e = harEntry(exchange({ requestBody: Buffer.from('abc') }));
    expect(harEntryWeight(e)).toBe(1024 + 3 + 11);
    const bare = harEntry(exchange({ status: 'unknown' }));
    delete bare.request.postData;
    delete bare.response.content.text;
    expect(harEntryWeight(bare)).toBe(1024);
    const noText = harEntry(exchange());
    delete (noText.request.postData as { text?: string }).text;
    expect(harEntryWeight(noText)).toBe(1024 + 11);
  });

  it('HAR_LIMITS: the sandbox bounds', () => {
    expect(HAR_LIMITS).toEqual({ entries: 10_000, bytes: 64 * 1024 * 1024, body: 16 * 1024 * 1024, timeline: 100 });
  });
});

describe('rootDomain, successful, loggedUrl', () => {
  it('rootDomain: IPs as they are, short hosts as they are, three labels under a generic second level', () => {
    expect(rootDomain('192.0.2.1')).toBe('192.0.2.1');
    expect(rootDomain('[::1]')).toBe('[::1]');
    expect(rootDomain('2001:db8::1')).toBe('2001:db8::1');
    // An IPv4-mapped IPv6 address has dots, and is no name of labels either.
    expect(rootDomain('[::ffff:192.0.2.1]')).toBe('[::ffff:192.0.2.1]');
    expect(rootDomain('::ffff:192.0.2.1')).toBe('::ffff:192.0.2.1');
    expect(rootDomain('localhost')).toBe('localhost');
    expect(rootDomain('example.com')).toBe('example.com');
    expect(rootDomain('co.uk')).toBe('co.uk');
    expect(rootDomain('')).toBe('');
    expect(rootDomain('a.b.example.com')).toBe('example.com');
    for (const sld of ['com', 'biz', 'net', 'org', 'xxx', 'edu', 'gov', 'ac', 'co', 'or', 'ne', 'kr', 'jp', 'jpn', 'cn'])
      expect(rootDomain(`www.shop.${sld}.xx`)).toBe(`shop.${sld}.xx`);
    expect(rootDomain('www.shop.de.xx')).toBe('de.xx');
    expect(rootDomain('co.uk.')).toBe('uk.');
  });

  it('successful: 1xx, 2xx, 3xx, 404 and unknown', () => {
    expect([100, 200, 204, 301, 399, 404, 'unknown'].map(successful)).toEqual([true, true, true, true, true, true, true]);
    expect([400, 403, 405, 500, 502, 'other'].map(successful)).toEqual([false, false, false, false, false, false]);
  });

  it('loggedUrl: absolute URLs, a tunnel by its authority or its old https form; nothing else', () => {
    expect(loggedUrl('GET', 'http://example.com/a')?.href).toBe('http://example.com/a');
    expect(loggedUrl('CONNECT', 'example.com:443')?.host).toBe('example.com:443');
    expect(loggedUrl('CONNECT', 'https://example.com:8443')?.href).toBe('https://example.com:8443/');
    expect(loggedUrl('CONNECT', 'example.com')).toBeUndefined();
    expect(loggedUrl('CONNECT', 'example.com:443x')).toBeUndefined();
    expect(loggedUrl('CONNECT', 'example.com:443/path')).toBeUndefined();
    expect(loggedUrl('GET', '/relative')).toBeUndefined();
    expect(loggedUrl('GET', 'example.com:443')?.protocol).toBe('example.com:');
  });
});
