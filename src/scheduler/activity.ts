/**
 * Each project's recent activity: the operations its polls read, each weighing less as it ages
 * (`activityWeight`), and one more for each nudge. Activity ages by the API's clock: an
 * operation's age is the API's time less its `created_at`, both by the API's clock, so the
 * weights do not depend on our clock agreeing with the API's. Between polls that clock moves on
 * by the monotonic clock.
 */
import { ACTIVE_WEIGHT, activityWeight } from "./activity-plan.js";
import type { Entry } from "./entry.js";
import type { JobOutcome } from "./jobs.js";

/** The longest a project counts as active after its last operation, by default. */
const DEFAULT_ACTIVE_WINDOW_SECONDS = 3600;

export class Activity {
  private readonly windowMs: number;
  /** The API's time at the latest poll that gave it, and when that poll ended (monotonic ms). */
  private apiClock: { readonly apiMs: number; readonly monotonicMs: number } | undefined;

  constructor(activeWindowSeconds = DEFAULT_ACTIVE_WINDOW_SECONDS) {
    this.windowMs = activeWindowSeconds * 1000;
  }

  /** The project's recent activity now (0 when idle: nothing within the active window). */
  weightOf(entry: Entry, now: number): number {
    const at = this.apiNow(now);
    if (at === undefined || entry.activity === 0) return 0;
    const weight = entry.activity * activityWeight(at - entry.activityAtMs, this.windowMs);
    return weight >= ACTIVE_WEIGHT ? weight : 0;
  }

  /** A nudge: the operation the caller has just caused counts as one new one. */
  nudge(entry: Entry, now: number): void {
    const at = this.apiNow(now);
    if (at !== undefined) this.add(entry, at, 1);
  }

  /**
   * What a job's outcomes say of the project's activity: each operation its poll read weighs by
   * its age (by the API's clock), so that a project's weight is known from its first poll. A
   * poll from the top of the log reads again what the last one read; the larger of its sum and
   * the decayed weight counts, so that what it did not read (a nudge, or newer pages than a
   * catch-up's) still counts as it ages.
   */
  learn(entry: Entry, outcomes: readonly (JobOutcome | undefined)[], now: number): void {
    for (const o of outcomes) {
      if (o?.activityAgesMs === undefined || o.apiNowMs === undefined) continue;
      this.apiClock = { apiMs: o.apiNowMs, monotonicMs: now };
      const window = this.windowMs;
      const read = o.activityAgesMs.reduce((sum, age) => sum + activityWeight(age, window), 0);
      entry.activity = Math.max(this.add(entry, o.apiNowMs, 0), read);
    }
  }

  /** The API's time now; undefined before a poll gave it (no project has activity then). */
  private apiNow(now: number): number | undefined {
    const clock = this.apiClock;
    return clock === undefined ? undefined : clock.apiMs + (now - clock.monotonicMs);
  }

  /** Ages the project's activity to `at` (the API's clock), adds `weight`, and returns the sum. */
  private add(entry: Entry, at: number, weight: number): number {
    const decayed =
      entry.activity === 0
        ? 0
        : entry.activity * activityWeight(at - entry.activityAtMs, this.windowMs);
    entry.activity = decayed + weight;
    entry.activityAtMs = at;
    return entry.activity;
  }
}
