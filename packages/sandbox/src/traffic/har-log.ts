import { type Exchange, HAR_LIMITS, harEntry, harEntryWeight } from '../domain/har.js';
import type { Store } from '../domain/state.js';
import type { HarEntry } from '../domain/types.js';

const sumWeights = (har: readonly HarEntry[]) => har.reduce((n, e) => n + harEntryWeight(e), 0);

/**
 * The manager's HAR log as the ports write it: one entry per request, the log trimmed to the
 * settings' `logs` entries and to HAR_LIMITS; with `logs: 0` nothing is logged (as the real manager:
 * lib/manager.js 360-367, lib/loki.js 91-99).
 */
export class HarLog {
  /** The HAR log's bytes (harEntryWeight) as last counted, and the array and length they were counted for. */
  private har: { of?: HarEntry[]; count: number; bytes: number } = { count: 0, bytes: 0 };

  constructor(
    private readonly store: Store,
    private readonly changed: () => void,
  ) {}

  append(x: Exchange): void {
    const keep = Math.min(Math.max(0, Number(this.store.manager.settings.logs) || 0), HAR_LIMITS.entries);
    if (!keep) return;
    const har = this.store.manager.har;
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
    this.store.touch('har');
    this.changed();
  }
}
