/**
 * The measured rate of the listings and describes that operations trigger (not the slow timer's):
 * a count that decays over a window of base intervals, so that the budget makes room for what
 * they took of late.
 */

/**
 * The time constant of the measured rate of listings that operations trigger, in base intervals
 * (5 minutes at the default 30 s).
 */
const TRIGGERED_RATE_WINDOW_INTERVALS = 10;

export class TriggeredRate {
  private readonly windowMs: number;
  private triggered = { count: 0, atMs: 0 };

  constructor(baseIntervalSeconds: number) {
    this.windowMs = baseIntervalSeconds * 1000 * TRIGGERED_RATE_WINDOW_INTERVALS;
  }

  /** One request triggered at `now`. */
  count(now: number): void {
    this.triggered = { count: this.countAt(now) + 1, atMs: now };
  }

  /** Requests per minute the triggered requests take now. */
  perMinute(now: number): number {
    return (this.countAt(now) * 60_000) / this.windowMs;
  }

  private countAt(now: number): number {
    const age = Math.max(0, now - this.triggered.atMs);
    return this.triggered.count * Math.exp(-age / this.windowMs);
  }
}
