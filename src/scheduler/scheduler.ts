/**
 * The scheduler: a tick once a second replans and dispatches every project whose poll (or
 * endpoint listing) is due, never two jobs of one project at once, at most `maxConcurrent` in
 * flight; between ticks a timer wakes it at the next due time, and a job that ends makes room
 * for the next one due at once. Each project keeps its own due time, spread with jitter;
 * projects with open operations use the fast lane. A project's endpoints are listed when a poll
 * sees an operation that changes them start or end, and on a slow timer for drift; it is
 * described (its name, and its branches as the job decides) once at the start and when a poll
 * sees an operation that changes its branches, never on a timer.
 *
 * Due times and the tick are on the monotonic clock: a step of the wall clock, in either
 * direction and of any size, changes nothing in when projects are polled.
 *
 * When the request budget cannot sustain every project at its interval, intervals stretch: by
 * each project's recent activity (the default), or by one factor for all (`uniform`). What the
 * API refuses backs off: a project whose log answers 404 or 403, and an account whose key
 * answers 401; so does a project whose polls fail on the API's side (server errors, timeouts,
 * malformed answers), costing the budget only what its backoff costs; `retryRefused` tries
 * every project backing off, and a refused key, again at once.
 *
 * The scheduler only puts together parts with one job each, which share one entry per project
 * (`entry.ts`): planning (`planner.ts`), dispatch (`dispatcher.ts`), one project's job and what
 * it learns (`job.ts`), and the refusals (`refusal-gate.ts`) and backoffs from failures
 * (`error-backoff.ts`); `index.ts` says what each holds.
 */
import { Activity } from "./activity.js";
import type { Tier } from "./activity-plan.js";
import { firstDueMs, type Budget } from "./budget.js";
import { Dispatcher } from "./dispatcher.js";
import { newEntry, type Entry } from "./entry.js";
import { ERROR_BACKOFF_MAX_MS, projectBackoffs, type ProjectBackoff } from "./error-backoff.js";
import { JobRunner } from "./job.js";
import type { SchedulerJobs } from "./jobs.js";
import type { SchedulerOptions } from "./options.js";
import { Planner } from "./planner.js";
import { RefusalGate } from "./refusal-gate.js";
import type { Refusal } from "./refusals.js";
import { TriggeredRate } from "./triggered-rate.js";

/** What a nudge did to one project. */
export type NudgeResult = "nudged" | "coalesced" | "unknown";

export class Scheduler {
  private readonly entries = new Map<string, Entry>();
  private readonly activity: Activity;
  private readonly planner: Planner;
  private readonly refusals = new RefusalGate();
  private readonly dispatcher: Dispatcher;
  private readonly now: () => number;
  private readonly random: () => number;

  constructor(
    private readonly options: SchedulerOptions,
    private readonly jobs: SchedulerJobs,
  ) {
    this.now = options.monotonic;
    this.random = options.random ?? Math.random;
    this.activity = new Activity(options.activeWindowSeconds);
    const triggered = new TriggeredRate(options.baseIntervalSeconds);
    this.planner = new Planner(options, this.activity, triggered, this.random);
    const { planner, activity, refusals } = this;
    const runner = new JobRunner({
      jobs: this.jobs,
      planner,
      activity,
      triggered,
      refusals,
      monotonic: this.now,
      random: this.random,
      errorBackoffMaxMs:
        options.errorBackoffMaxSeconds === undefined
          ? ERROR_BACKOFF_MAX_MS
          : options.errorBackoffMaxSeconds * 1000,
    });
    this.dispatcher = new Dispatcher({
      maxConcurrent: options.maxConcurrent,
      monotonic: this.now,
      entries: this.entries,
      dueAt: (entry, now) => planner.dueAt(entry, now),
      refusals,
      run: (...args) => runner.run(...args),
    });
  }

  /** The current budget: demand, capacity and the stretch factor applied to intervals. */
  get budget(): Budget {
    return this.planner.budget;
  }

  /**
   * The interval each tier of projects is polled at now: `active`, that of a project with one
   * operation just found (busier ones are polled more often, down to the base interval).
   */
  tierIntervalSeconds(tier: Tier): number {
    return this.planner.tierIntervalSeconds(tier);
  }

  /** The longest a project waits between polls now (activity strategy: `maxInterval`). */
  maxIntervalSeconds(): number {
    return this.planner.maxIntervalSeconds();
  }

  projects(): string[] {
    return [...this.entries.keys()];
  }

  /** Adds projects (first polls spread over one interval) and removes those not listed. */
  setProjects(ids: readonly string[], opts: { immediate?: boolean } = {}): void {
    const wanted = new Set(ids);
    for (const id of this.entries.keys()) if (!wanted.has(id)) this.entries.delete(id);
    const now = this.now();
    const interval = this.options.fastIntervalSeconds;
    for (const id of ids) {
      if (this.entries.has(id)) continue;
      const pollMs = firstDueMs(now, interval, opts.immediate === true ? 0 : this.random());
      this.entries.set(id, newEntry(id, pollMs, firstDueMs(now, interval, this.random())));
    }
    this.replan();
  }

  /** While the API refuses the account's key: since how many tries, and when the next is. */
  keyRefused(): Refusal | undefined {
    return this.refusals.keyRefused();
  }

  /** The projects the API refuses now, with their backoff. */
  refusedProjects(): Map<string, Refusal> {
    return this.refusals.refusedProjects(this.entries.values());
  }

  /**
   * The projects polled with backoff now (refused, or failing on the API's side), with why,
   * since how many tries, and when the next is.
   */
  projectBackoffs(): Map<string, ProjectBackoff> {
    return projectBackoffs(this.entries.values());
  }

  /**
   * Tries everything backing off again at once (after a configuration reload, or a discovery
   * that succeeded): the backoff of refused projects, of failing ones and of a refused key ends.
   */
  retryRefused(): void {
    const retried = this.refusals.retry(this.entries.values(), this.now());
    for (const entry of retried) this.dispatcher.enqueue(entry);
    this.dispatcher.dispatch();
  }

  /**
   * Polls the projects next (a caller that has just caused operations asks): each is due now
   * and counts as active. A project nudged within the fast interval already has its poll
   * coming: the nudge is coalesced into it. The rate limiter keeps the requests within budget.
   */
  nudge(ids: readonly string[]): Map<string, NudgeResult> {
    const now = this.now();
    const results = new Map<string, NudgeResult>();
    for (const id of ids) {
      const entry = this.entries.get(id);
      if (entry === undefined) {
        results.set(id, "unknown");
      } else if (
        entry.lastNudgeMs !== undefined &&
        now - entry.lastNudgeMs < this.options.fastIntervalSeconds * 1000
      ) {
        results.set(id, "coalesced");
      } else {
        entry.lastNudgeMs = now;
        this.activity.nudge(entry, now);
        entry.nextPollMs = Math.min(entry.nextPollMs, now);
        this.dispatcher.enqueue(entry);
        results.set(id, "nudged");
      }
    }
    this.dispatcher.dispatch();
    return results;
  }

  /** Starts the once-a-second tick (Node's timers run on the monotonic clock). */
  start(): void {
    this.dispatcher.start(() => {
      this.tick();
    });
  }

  /**
   * Dispatches every due job (at most `maxConcurrent` in flight). Returns without waiting for
   * them; `drain()` waits.
   */
  tick(): void {
    if (this.dispatcher.stopped) return;
    this.replan();
    this.dispatcher.dispatch();
  }

  /** Waits for every job in flight. */
  drain(): Promise<void> {
    return this.dispatcher.drain();
  }

  /**
   * Stops the tick and aborts the jobs in flight (a poll abandoned this way commits nothing),
   * then waits for them to settle.
   */
  stop(): Promise<void> {
    return this.dispatcher.stop();
  }

  /** Plans the intervals afresh, and queues every project by its due time under them. */
  private replan(): void {
    this.planner.replan(this.entries.values(), this.now());
    this.dispatcher.enqueueAll();
  }
}
