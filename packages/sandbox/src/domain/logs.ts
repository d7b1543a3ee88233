import { type Exchange, HAR_LIMITS, harEntry, harEntryWeight } from './har.js';
import type { HarEntry, ManagerState } from './types.js';

/** Characters the general log keeps in all (about 1 MiB of ASCII), and in one line. */
export const LOG_MAX = 1_000_000;
export const LOG_LINE_MAX = 2_000;

const sumWeights = (har: readonly HarEntry[]) => har.reduce((n, e) => n + harEntryWeight(e), 0);

/**
 * What the logs read and mark of the Store that holds them (the Store itself, which hands itself in):
 * named here so that the logs do not import the Store that imports them.
 */
export interface LogsHost {
  readonly manager: Pick<ManagerState, 'general_log' | 'har' | 'settings'>;
  readonly clock: { now(): number };
  touch(section: 'har'): void;
}

/**
 * The manager's logs: its general log and its HAR log (the requests through its ports). Every change
 * of them goes through here; the handlers and the ports ask.
 */
export class Logs {
  /** The size of the general-log array as last counted, and the array it was counted for (a reset or a load brings a new one). */
  private general: { of?: string[]; size: number } = { size: 0 };
  /** The HAR log's bytes (harEntryWeight) as last counted, and the array and length they were counted for. */
  private har: { of?: HarEntry[]; count: number; bytes: number } = { count: 0, bytes: 0 };

  constructor(private readonly s: LogsHost) {}

  /**
   * One line of the general log. The log is capped by size, not by lines: a line is cut at
   * LOG_LINE_MAX characters and the oldest lines go once the log holds more than LOG_MAX characters.
   */
  line(line: string): void {
    const lines = this.s.manager.general_log;
    const text = `${new Date(this.s.clock.now()).toISOString()} NOTICE:Manager: ${line.length > LOG_LINE_MAX ? `${line.slice(0, LOG_LINE_MAX)}…` : line}`;
    lines.push(text);
    let size = (this.general.of === lines ? this.general.size : lines.reduce((n, l) => n + l.length, 0) - text.length) + text.length;
    let drop = 0;
    while (size > LOG_MAX && drop < lines.length - 1) size -= (lines[drop++] as string).length;
    if (drop) lines.splice(0, drop);
    this.general = { of: lines, size };
  }

  /**
   * A request into the HAR log: one entry per request, the log trimmed to the settings' `logs` entries
   * and to HAR_LIMITS; with `logs: 0` nothing is logged (as the real manager: lib/manager.js 360-367,
   * lib/loki.js 91-99). Whether it was logged.
   */
  request(x: Exchange): boolean {
    const keep = Math.min(Math.max(0, Number(this.s.manager.settings.logs) || 0), HAR_LIMITS.entries);
    if (!keep) return false;
    const har = this.s.manager.har;
    // The bytes the log holds, counted as entries come and go; counted again when someone else changed it.
    if (har !== this.har.of || har.length !== this.har.count) this.har = { of: har, count: har.length, bytes: sumWeights(har) };
    const entry = harEntry(x);
    har.push(entry);
    this.har.bytes += harEntryWeight(entry);
    let drop = Math.max(0, har.length - keep);
    for (let i = 0; i < drop; i++) this.har.bytes -= harEntryWeight(har[i] as HarEntry);
    while (this.har.bytes > HAR_LIMITS.bytes && drop < har.length - 1) this.har.bytes -= harEntryWeight(har[drop++] as HarEntry);
    if (drop) har.splice(0, drop);
    this.har.count = har.length;
    this.s.touch('har');
    return true;
  }

  /** The HAR log keeps the entries `keep` says (its newest `n` after a smaller `logs`, those of the ports that stay). */
  keepRequests(keep: (entry: HarEntry, index: number, all: HarEntry[]) => boolean): void {
    const har = this.s.manager.har;
    const kept = har.filter(keep);
    if (kept.length === har.length) return;
    har.splice(0, har.length, ...kept);
    this.s.touch('har');
  }
}
