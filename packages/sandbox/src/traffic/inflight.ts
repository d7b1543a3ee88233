// Traffic not yet billed and logged: each request and tunnel counts from its admission until its
// usage is billed (the network) and its HAR entry written (a port), so that `sandbox.settled()` can
// wait for what a test sent instead of polling the logs.

export class Inflight {
  private n = 0;
  private waiters: (() => void)[] = [];

  /** Counts one piece of traffic; the function returned ends it (once, whatever it is called again). */
  start(): () => void {
    this.n++;
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      this.n--;
      if (this.n === 0) {
        const waiting = this.waiters;
        this.waiters = [];
        for (const w of waiting) w();
      }
    };
  }

  /** Counts `work` until it settles. */
  track<T>(work: Promise<T>): Promise<T> {
    const end = this.start();
    return work.finally(end);
  }

  get count(): number {
    return this.n;
  }

  /** Resolves once nothing is in flight. */
  idle(): Promise<void> {
    return this.n === 0 ? Promise.resolve() : new Promise((resolve) => this.waiters.push(resolve));
  }
}
