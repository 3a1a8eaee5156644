/**
 * Planning: the plan of the moment (`schedule-plan.ts`), made afresh at each replan, and what it
 * makes of each project's due times. With the `activity` strategy (the default) each project's
 * interval follows its recent activity (`activity.ts`, `activity-plan.ts`): open operations at
 * the fast interval and the others at the base interval while the budget holds them; when it
 * does not, by the square root of their recent operations (each counting less as it ages; open
 * operations count as many), from the fast interval for the busiest to `maxInterval` at most for
 * idle ones. A project's next poll is one such interval after its last, as the plan stands at
 * every moment: when operations end and the budget's share of the others grows, their polls
 * come sooner at once. `uniform` stretches every interval by one factor, fixed at each poll.
 * Both spread due times with jitter.
 */
import { intervalFor, type Tier } from "./activity-plan.js";
import type { Activity } from "./activity.js";
import { nextDueMs, type Budget } from "./budget.js";
import { TICK_MS } from "./dispatcher.js";
import type { Entry } from "./entry.js";
import { backoffPerMinute } from "./error-backoff.js";
import type { JobOutcome } from "./jobs.js";
import type { SchedulerOptions } from "./options.js";
import { planSchedule, type PlannedProject, type SchedulePlan } from "./schedule-plan.js";
import type { TriggeredRate } from "./triggered-rate.js";

export class Planner {
  private current: SchedulePlan;

  constructor(
    private readonly options: SchedulerOptions,
    private readonly activity: Activity,
    private readonly triggered: TriggeredRate,
    private readonly random: () => number,
  ) {
    // Planned for no project until the first replan.
    this.current = planSchedule(options, [], 0);
  }

  /** The current budget: demand, capacity and the stretch factor applied to intervals. */
  get budget(): Budget {
    return this.current.budget;
  }

  /**
   * The interval each tier of projects is polled at now: `active`, that of a project with one
   * operation just found (busier ones are polled more often, down to the base interval).
   */
  tierIntervalSeconds(tier: Tier): number {
    if (tier === "fast") return intervalFor(this.current.intervals, 0, true);
    return intervalFor(this.current.intervals, tier === "active" ? 1 : 0);
  }

  /** The longest a project waits between polls now (activity strategy: `maxInterval`). */
  maxIntervalSeconds(): number {
    return this.current.maxIntervalSeconds;
  }

  /**
   * Plans the intervals afresh for the projects: refused ones are not planned, and those backing
   * off from failed polls cost what their backoff costs, taken before the plan's share.
   */
  replan(entries: Iterable<Entry>, now: number): void {
    const planned: PlannedProject[] = [];
    let backingOff = 0;
    for (const e of entries) {
      if (e.refusal !== undefined) continue;
      if (e.errorBackoff !== undefined) {
        backingOff += backoffPerMinute(e.errorBackoff);
        continue;
      }
      const weight = this.activity.weightOf(e, now);
      planned.push({ lane: e.lane, requestsPerPoll: e.requestsPerPoll ?? 1, weight });
    }
    this.current = planSchedule(this.options, planned, this.triggered.perMinute(now) + backingOff);
  }

  /** When the project's next job is due: its poll or its endpoint listing, whichever first. */
  dueAt(entry: Entry, now: number): number {
    return Math.min(this.pollDue(entry, now), this.endpointsDue(entry));
  }

  /**
   * When the project's poll is due. Under the activity strategy: one interval after its last
   * poll ended, as the plan and its activity stand now (not as they stood at that poll, so
   * that the polls spend what the plan counts on when the budget's share moves), spread by the
   * jitter drawn then, and never beyond `maxInterval` after it started (`boundMs`); sooner when
   * nudged. Under `uniform`, as planned at its last poll. A project refused or backing off
   * from failed polls keeps its backoff.
   */
  pollDue(entry: Entry, now: number): number {
    const last = entry.lastPoll;
    const backsOff = entry.refusal !== undefined || entry.errorBackoff !== undefined;
    if (this.options.strategy === "uniform" || backsOff || last === undefined) {
      return entry.nextPollMs;
    }
    const planned = last.endMs + this.intervalOf(entry, now) * last.spread * 1000;
    return Math.min(entry.nextPollMs, planned, last.startMs + this.boundMs());
  }

  endpointsDue(entry: Entry): number {
    return this.options.endpointsIntervalSeconds > 0 ? entry.nextEndpointsMs : Infinity;
  }

  /**
   * Whether a job lists the project's endpoints: when they are due, or at once when its poll
   * saw an operation that changes them.
   */
  listsEndpoints(entry: Entry, poll: JobOutcome | undefined, now: number): boolean {
    return (
      this.options.endpointsIntervalSeconds > 0 &&
      (this.endpointsDue(entry) <= now || poll?.endpointsChanged === true)
    );
  }

  /** The jitter a poll draws as it ends: its next interval is the plan's times this. */
  drawSpread(): number {
    return 1 + this.options.jitter * (2 * this.random() - 1);
  }

  /**
   * When the project's next poll is due as planned after a poll: under `uniform`, one interval
   * on, spread with jitter; under the activity strategy nothing is fixed then (`pollDue` follows
   * the plan), only a nudge or a backoff brings it forward.
   */
  nextPollDue(entry: Entry, now: number): number {
    return this.options.strategy === "uniform"
      ? this.due(now, this.intervalOf(entry, now))
      : Infinity;
  }

  /** When the project's endpoints are listed next after a listing: one stretched interval on. */
  nextEndpointsDue(now: number): number {
    return this.due(now, this.options.endpointsIntervalSeconds * this.current.budget.stretch);
  }

  /**
   * How long after a poll started the next one is due at the latest: `maxInterval`, less one
   * tick (at most half of it), so that a poll that waits for a busy event loop or a tick still
   * reads the log within the bound.
   */
  private boundMs(): number {
    const maxMs = this.current.maxIntervalSeconds * 1000;
    return maxMs - Math.min(TICK_MS, maxMs / 2);
  }

  /** Seconds until the project's next poll is due, by the plan. */
  private intervalOf(entry: Entry, now: number): number {
    return intervalFor(
      this.current.intervals,
      this.activity.weightOf(entry, now),
      entry.lane === "fast",
    );
  }

  private due(now: number, intervalSeconds: number): number {
    // Intervals arrive already stretched.
    return nextDueMs(now, intervalSeconds, 1, this.options.jitter, this.random());
  }
}
