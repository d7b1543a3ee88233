import { describe, expect, it } from 'vitest';
import { CallLog, type CallToRecord, REDACTED, redact } from '../../src/control/calls.js';

// The record of calls' two bounds, in one process: calls beyond `limit` go, and bodies beyond the byte
// budget go, the oldest first, the call staying with `body_dropped`. The two must agree on what is kept
// (test/attack/memory.test.ts plays the budget through the account API).
const call = (i: number, size?: number): CallToRecord => ({
  api: 'account',
  operationId: 'createZone',
  account: 'c',
  method: 'POST',
  path: '/zone',
  params: {},
  ...(size === undefined ? {} : { body: { i, password: 'secret' }, body_size: size }),
  status: 400,
  time: new Date(0).toISOString(),
  duration_ms: 1,
});

const keptBytes = (log: CallLog) => log.list().reduce((n, c) => n + (c.body !== undefined ? (c.body_size ?? 0) : 0), 0);

describe('CallLog bounds', () => {
  it('keeps bodies up to the budget, the newest, and marks each one let go of', () => {
    const log = new CallLog(1000, 100);
    for (let i = 0; i < 10; i++) log.record(call(i, 30));
    const all = log.list();
    expect(all).toHaveLength(10);
    expect(all.filter((c) => c.body !== undefined).map((c) => c.seq)).toEqual([8, 9, 10]);
    expect(all.filter((c) => c.body_dropped !== undefined).map((c) => c.seq)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(all[9]?.body).toEqual({ i: 9, password: REDACTED });
    expect(keptBytes(log)).toBe(90);
  });

  it('calls without a body take nothing of the budget; a body over the whole budget is let go of at once', () => {
    const log = new CallLog(1000, 100);
    log.record(call(0, 60));
    for (let i = 1; i < 50; i++) log.record(call(i));
    log.record(call(50, 40));
    expect(log.list().filter((c) => c.body !== undefined)).toHaveLength(2);
    log.record(call(51, 500));
    const all = log.list();
    expect(all.filter((c) => c.body !== undefined)).toHaveLength(0);
    expect(all.at(-1)?.body_dropped).toContain('this body of 500 bytes');
    log.record(call(52, 10));
    expect(keptBytes(log)).toBe(10);
  });

  it('calls cut by count give their bytes back to the budget, and clear() starts it again', () => {
    // At most 11 calls of 10 bytes: never over 150, so no body may go, however many calls come.
    const log = new CallLog(10, 150);
    for (let i = 0; i < 200; i++) log.record(call(i, 10));
    const all = log.list();
    expect(all.length).toBeGreaterThanOrEqual(10);
    expect(all.length).toBeLessThanOrEqual(11);
    expect(all.filter((c) => c.body_dropped !== undefined)).toEqual([]);
    expect(keptBytes(log)).toBe(all.length * 10);
    log.clear();
    for (let i = 0; i < 10; i++) log.record(call(i, 10));
    expect(log.list()).toHaveLength(10);
    expect(log.list().every((c) => c.body !== undefined)).toBe(true);
    // Another account's calls cleared: the budget counts only what is left.
    log.clear('nobody');
    expect(keptBytes(log)).toBe(100);
    // 100 kept + 60 is over 150: exactly the oldest body goes.
    log.record(call(10, 60));
    expect(
      log
        .list()
        .filter((c) => c.body_dropped !== undefined)
        .map((c) => c.body_size),
    ).toEqual([10]);
  });
});

describe('redaction reaches as deep as a body may nest', () => {
  it('a secret 40 levels down is redacted (the walk stopped at 32 and kept the rest as it came)', () => {
    let deep: Record<string, unknown> = { password: 'deep-secret', note: 'kept' };
    for (let i = 0; i < 40; i++) deep = { a: deep };
    const text = JSON.stringify(redact(deep));
    expect(text).not.toContain('deep-secret');
    expect(text).toContain('"note":"kept"');
    let deeper: unknown = { password: 'deeper-secret' };
    for (let i = 0; i < 200; i++) deeper = [deeper];
    expect(JSON.stringify(redact(deeper))).not.toContain('deeper-secret');
  });
});
