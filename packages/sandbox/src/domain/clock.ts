// The sandbox's clock: the machine's time plus an offset that tests move (`POST /__sandbox/clock`,
// `sandbox.clock.advance()`), as Stripe's test clocks do, so that ban expiry, usage days, cooling
// periods and the token rate limit can be tested without sleeping. Kept out of the state: a reset of
// the state leaves it where it is; `reset()` (or `DELETE /__sandbox/clock`) brings back real time.

export class Clock {
  private offset = 0;

  /** Milliseconds since the epoch, as the sandbox sees them. */
  now(): number {
    return Date.now() + this.offset;
  }

  /** Moves the clock forward by `ms` (not backward: what expired stays expired). */
  advance(ms: number): void {
    if (!Number.isFinite(ms) || ms < 0) throw new RangeError(`advance_ms must be a number of milliseconds >= 0, not ${ms}`);
    this.offset += ms;
  }

  /** Sets the clock to `at` (an ISO 8601 date-time or epoch milliseconds), which may not be before its current time. */
  set(at: string | number): void {
    const t = typeof at === 'number' ? at : Date.parse(at);
    if (!Number.isFinite(t)) throw new RangeError(`set must be an ISO 8601 date-time, not ${JSON.stringify(at)}`);
    if (t < this.now())
      throw new RangeError(`the clock only moves forward: ${new Date(t).toISOString()} is before ${new Date(this.now()).toISOString()}`);
    this.offset = t - Date.now();
  }

  /** Back to the machine's time. */
  reset(): void {
    this.offset = 0;
  }

  /** What the control endpoint answers. */
  state(): { now: string; offset_ms: number } {
    return { now: new Date(this.now()).toISOString(), offset_ms: this.offset };
  }
}
