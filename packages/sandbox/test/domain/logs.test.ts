import { describe, expect, it, vi } from 'vitest';
import { type Exchange, HAR_LIMITS } from '../../src/domain/har.js';
import { LOG_LINE_MAX, LOG_MAX } from '../../src/domain/logs.js';
import { Store } from '../../src/domain/state.js';
import type { HarEntry } from '../../src/domain/types.js';
import { defaultSeed } from '../../src/index.js';

// The manager's logs as the Store keeps them (src/domain/logs.ts): the general log capped by size, the
// HAR log trimmed to `logs` and to its bounds, and each change marked for the data file.

/** A store of the built-in seed (40 HAR entries, `logs` 1000), its sections once written. */
function fresh(): Store {
  const s = new Store(defaultSeed());
  s.sectionsJson(true);
  return s;
}
const harWritten = (s: Store) => s.sectionsJson(false).some(([name]) => name === 'har');

function exchange(port: number, url = 'http://example.com/'): Exchange {
  return {
    port,
    started: 0,
    time: 1,
    method: 'GET',
    url,
    requestHeaders: {},
    requestBody: Buffer.alloc(0),
    status: 200,
    statusText: 'OK',
    responseHeaders: {},
    responseBody: undefined,
    inBw: 0,
    outBw: 0,
    peer: null,
    upstream: '127.0.0.1:22225',
    username: '',
    session: '',
    answered: 0,
    clientIp: '127.0.0.1',
    protocol: 'http',
    harLimit: 0,
  };
}

describe('the general log', () => {
  it("a line with the sandbox's time and the manager's prefix, after those there", () => {
    const s = fresh();
    vi.spyOn(s.clock, 'now').mockReturnValue(Date.parse('2030-01-02T03:04:05.678Z'));
    const before = s.manager.general_log.length;
    s.logs.line('hello');
    expect(s.manager.general_log).toHaveLength(before + 1);
    expect(s.manager.general_log.at(-1)).toBe('2030-01-02T03:04:05.678Z NOTICE:Manager: hello');
  });

  it('a line longer than LOG_LINE_MAX is cut there and says so; one of LOG_LINE_MAX is whole', () => {
    const s = fresh();
    s.logs.line('a'.repeat(LOG_LINE_MAX));
    expect(s.manager.general_log.at(-1)?.endsWith(` ${'a'.repeat(LOG_LINE_MAX)}`)).toBe(true);
    s.logs.line('b'.repeat(LOG_LINE_MAX + 1));
    expect(s.manager.general_log.at(-1)?.endsWith(` ${'b'.repeat(LOG_LINE_MAX)}…`)).toBe(true);
  });

  it('the oldest lines go once the log holds more than LOG_MAX characters; the newest always stays', () => {
    const s = fresh();
    vi.spyOn(s.clock, 'now').mockReturnValue(0);
    const prefix = `${new Date(0).toISOString()} NOTICE:Manager: `.length;
    const body = LOG_LINE_MAX - 1;
    const per = prefix + body;
    const fit = Math.floor(LOG_MAX / per);
    for (let i = 0; i < fit + 5; i++) s.logs.line(String(i % 10).repeat(body));
    const lines = s.manager.general_log;
    const size = lines.reduce((n, l) => n + l.length, 0);
    expect(size).toBeLessThanOrEqual(LOG_MAX);
    expect(size + per).toBeGreaterThan(LOG_MAX);
    expect(lines.at(-1)?.endsWith(String((fit + 4) % 10).repeat(body))).toBe(true);
    expect(lines).toHaveLength(fit);
  });

  it('counts a log that came with a load anew: a larger log is cut back at the next line', () => {
    const s = fresh();
    s.logs.line('first');
    const data = s.toData();
    data.manager.general_log = Array.from({ length: 600 }, (_, i) => `${i}`.padEnd(2_000, '.'));
    s.load(data);
    s.logs.line('next');
    const size = s.manager.general_log.reduce((n, l) => n + l.length, 0);
    expect(size).toBeLessThanOrEqual(LOG_MAX);
    expect(s.manager.general_log.at(-1)?.endsWith(' next')).toBe(true);
    // 1,200,000 characters and the new line: 101 of the 2,000-character lines go.
    expect(s.manager.general_log[0]?.startsWith('101.')).toBe(true);
    expect(s.manager.general_log).toHaveLength(500);
  });

  it('a log of exactly LOG_MAX characters keeps every line; one character more lets the oldest go', () => {
    /** A loaded log of lines that, with the line 'next', holds LOG_MAX characters and `extra` more. */
    const withNext = (extra: number) => {
      const s = fresh();
      vi.spyOn(s.clock, 'now').mockReturnValue(0);
      const next = `${new Date(0).toISOString()} NOTICE:Manager: next`.length;
      const rest = LOG_MAX - next + extra;
      const data = s.toData();
      data.manager.general_log = [...Array.from({ length: Math.floor(rest / 2_000) }, () => 'x'.repeat(2_000)), 'y'.repeat(rest % 2_000)];
      s.load(data);
      const before = s.manager.general_log.length;
      s.logs.line('next');
      return { s, before };
    };
    const exact = withNext(0);
    expect(exact.s.manager.general_log.reduce((n, l) => n + l.length, 0)).toBe(LOG_MAX);
    expect(exact.s.manager.general_log).toHaveLength(exact.before + 1);
    const over = withNext(1);
    expect(over.s.manager.general_log).toHaveLength(over.before);
    expect(over.s.manager.general_log.at(-1)?.endsWith(' next')).toBe(true);
  });
});

describe('the HAR log', () => {
  it("a request is logged last and marked for the data file; the log keeps the settings' `logs` newest", () => {
    const s = fresh();
    expect(harWritten(s)).toBe(false);
    expect(s.logs.request(exchange(24000))).toBe(true);
    expect(s.manager.har).toHaveLength(41);
    expect(s.manager.har.at(-1)?.details?.port).toBe(24000);
    expect(harWritten(s)).toBe(true);
    s.setSettings({ logs: 3 });
    const newest = s.manager.har.slice(-2);
    s.logs.request(exchange(24001));
    expect(s.manager.har).toHaveLength(3);
    expect(s.manager.har.slice(0, 2)).toEqual(newest);
    expect(s.manager.har.at(-1)?.details?.port).toBe(24001);
  });

  it('`logs` 0, false or no number logs nothing and marks nothing', () => {
    for (const logs of [0, false, 'x', -5]) {
      const s = fresh();
      s.setSettings({ logs: logs as number });
      expect(s.logs.request(exchange(24000))).toBe(false);
      expect(s.manager.har).toHaveLength(40);
      expect(harWritten(s)).toBe(false);
    }
  });

  it('`logs` true keeps one; more than HAR_LIMITS.entries keeps that many', () => {
    const s = fresh();
    s.setSettings({ logs: true as unknown as number });
    s.logs.request(exchange(24000));
    expect(s.manager.har).toHaveLength(1);
    s.setSettings({ logs: HAR_LIMITS.entries + 5 });
    const data = s.toData();
    const one = data.manager.har[0] as HarEntry;
    data.manager.har = Array.from({ length: HAR_LIMITS.entries }, () => one);
    s.load(data);
    s.logs.request(exchange(24002));
    expect(s.manager.har).toHaveLength(HAR_LIMITS.entries);
    expect(s.manager.har.at(-1)?.details?.port).toBe(24002);
  });

  it('past HAR_LIMITS.bytes the oldest entries go, counted anew when the log changed elsewhere; the newest stays', () => {
    const s = fresh();
    const big = 'x'.repeat(Math.ceil(HAR_LIMITS.bytes / 3));
    s.logs.request(exchange(24000));
    const data = s.toData();
    const entry = data.manager.har[0] as HarEntry;
    const heavy = (port: number): HarEntry =>
      ({
        ...entry,
        details: { ...entry.details, port },
        response: { ...entry.response, content: { ...entry.response.content, text: big } },
      }) as HarEntry;
    data.manager.har = [heavy(1), heavy(2), heavy(3)];
    s.load(data);
    s.logs.request(exchange(24001));
    expect(s.manager.har.map((e) => e.details?.port)).toEqual([2, 3, 24001]);
    s.logs.request(exchange(24002));
    expect(s.manager.har.map((e) => e.details?.port)).toEqual([2, 3, 24001, 24002]);
    // One entry over the bound alone stays: it is the newest.
    const alone = s.toData();
    alone.manager.har = [heavy(7), heavy(8), heavy(9), heavy(10)];
    s.load(alone);
    s.setSettings({ logs: 1000 });
    s.logs.request(exchange(24003));
    expect(s.manager.har.map((e) => e.details?.port)).toEqual([9, 10, 24003]);
  });

  describe('the bytes it holds, counted as entries come and go', () => {
    /** An entry of the log weighing `bytes` (harEntryWeight: a kilobyte and its text). */
    function weighing(s: Store, port: number, bytes: number): HarEntry {
      const e = s.manager.har[0] as HarEntry;
      return {
        ...e,
        details: { ...e.details, port },
        request: { ...e.request, postData: undefined },
        response: { ...e.response, content: { ...e.response.content, text: 'x'.repeat(bytes - 1024) } },
      } as HarEntry;
    }
    /** A request whose answer the log keeps whole: HAR_LIMITS.body bytes of text. */
    const heavyRequest = (port: number): Exchange => ({
      ...exchange(port),
      responseHeaders: { 'content-type': 'text/plain' },
      responseBody: Buffer.alloc(HAR_LIMITS.body, 'y'),
    });
    const ports = (s: Store) => s.manager.har.map((e) => e.details?.port);
    const withLog = (weights: number[]) => {
      const s = fresh();
      const data = s.toData();
      data.manager.har = weights.map((w, i) => weighing(s, i + 1, w));
      s.load(data);
      return s;
    };
    const large = Math.floor(HAR_LIMITS.bytes / 2.2);

    it("the new entry's bytes count: past the bound the oldest goes", () => {
      const s = withLog([large, large]);
      s.logs.request(heavyRequest(24000));
      expect(ports(s)).toEqual([2, 24000]);
    });

    it('the entries `logs` trims no longer count', () => {
      const s = withLog([large, large]);
      s.setSettings({ logs: 2 });
      s.logs.request(heavyRequest(24000));
      expect(ports(s)).toEqual([2, 24000]);
    });

    it('a log changed in place (the same array, fewer entries) is counted anew', () => {
      const s = withLog([large, large]);
      s.logs.request(exchange(24000));
      s.logs.keepRequests((e) => e.details?.port !== 1);
      s.logs.request(heavyRequest(24001));
      expect(ports(s)).toEqual([2, 24000, 24001]);
    });

    it('a log of exactly HAR_LIMITS.bytes keeps everything; one byte more lets the oldest go', () => {
      const exact = withLog([1024 + 10, HAR_LIMITS.bytes - 1024 - (1024 + 10)]);
      exact.logs.request(exchange(24000));
      expect(ports(exact)).toEqual([1, 2, 24000]);
      const over = withLog([1024 + 11, HAR_LIMITS.bytes - 1024 - (1024 + 10)]);
      over.logs.request(exchange(24000));
      expect(ports(over)).toEqual([2, 24000]);
    });
  });

  it('keepRequests keeps what it is told and marks the log; keeping all changes and marks nothing', () => {
    const s = fresh();
    const log = s.manager.har;
    s.logs.keepRequests(() => true);
    expect(s.manager.har).toBe(log);
    expect(s.manager.har).toHaveLength(40);
    expect(harWritten(s)).toBe(false);
    s.logs.keepRequests((e) => e.details?.port === 24000);
    expect(s.manager.har).toHaveLength(14);
    expect(s.manager.har.every((e) => e.details?.port === 24000)).toBe(true);
    expect(harWritten(s)).toBe(true);
    s.logs.keepRequests((_, i, all) => i >= all.length - 2);
    expect(s.manager.har).toHaveLength(2);
  });
});
