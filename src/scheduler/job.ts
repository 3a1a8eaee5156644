/**
 * One project's job, as dispatch starts it: its poll when due; then its endpoint listing when
 * due, or at once when the poll saw an operation that changes endpoints (not after a poll that
 * was refused or failed on the API's side: the listing would fail too); then a describe when
 * one is wanted. As it ends, what its steps said is learnt: the project's lane, cost, activity,
 * slowness, refusals and backoff from failures, and when its next poll and listing are due.
 */
import type { Activity } from "./activity.js";
import type { Entry } from "./entry.js";
import { errorBackoffAfter } from "./error-backoff.js";
import type { DescribeReason, JobOutcome, PollOutcome, SchedulerJobs } from "./jobs.js";
import { updateCost } from "./budget.js";
import type { Planner } from "./planner.js";
import type { RefusalGate } from "./refusal-gate.js";
import type { TriggeredRate } from "./triggered-rate.js";

/** What the job runs with: the daemon's jobs, and the parts that learn from them. */
export interface JobParts {
  readonly jobs: SchedulerJobs;
  readonly planner: Planner;
  readonly activity: Activity;
  readonly triggered: TriggeredRate;
  readonly refusals: RefusalGate;
  readonly monotonic: () => number;
  /** The scheduler's random: the jitter of a failing project's backoff. */
  readonly random: () => number;
  /** The longest wait of a failing project's backoff. */
  readonly errorBackoffMaxMs: number;
}

/** One job's steps as they went (a step that failed ends the job). */
interface Steps {
  /** The poll was due when the job started. */
  readonly polled: boolean;
  listed: boolean;
  /** Each step's outcome, in order (the poll's first when it polled). */
  readonly outcomes: (JobOutcome | undefined)[];
}

/**
 * Why the project is described after its job's first step, if it is: only once the API answered
 * that step; at the start (again after a failed try), then after a poll that saw its branches
 * change.
 */
function describeReason(entry: Entry, first: JobOutcome | undefined): DescribeReason | undefined {
  if (first?.answered !== true) return undefined;
  if (first.branchesChanged === true) return "branches";
  return entry.describe ? "start" : undefined;
}

export class JobRunner {
  constructor(private readonly parts: JobParts) {}

  /**
   * Runs the project's job, started at `now`; calls `done` as it ends, once what it learnt is
   * in the entry.
   */
  async run(
    entry: Entry,
    now: number,
    probe: boolean,
    signal: AbortSignal,
    done: () => void,
  ): Promise<void> {
    const { jobs, planner } = this.parts;
    const steps: Steps = {
      polled: planner.pollDue(entry, now) <= now,
      listed: false,
      outcomes: [],
    };
    try {
      if (steps.polled) this.learnPoll(entry, steps, await jobs.poll(entry.id, signal));
      if (this.startsListing(entry, steps, now)) {
        steps.outcomes.push(await jobs.listEndpoints(entry.id, signal));
      }
      const reason = describeReason(entry, steps.outcomes[0]);
      if (jobs.describe !== undefined && reason !== undefined) {
        this.learnDescribe(entry, steps, now, await jobs.describe(entry.id, signal, reason));
      }
    } catch {
      // Jobs report their own failures; a failed job is simply due again next interval.
    } finally {
      this.learn(entry, steps, now, probe);
      done();
    }
  }

  /**
   * The poll's outcome: what a poll of the project costs (a failed one's retries are its
   * backoff's cost, not its polls'), and its lane (open operations: fast).
   */
  private learnPoll(entry: Entry, steps: Steps, outcome: PollOutcome): void {
    steps.outcomes.push(outcome);
    if (outcome.failed === undefined) {
      entry.requestsPerPoll = updateCost(entry.requestsPerPoll, outcome.requests);
    }
    entry.lane = outcome.open ? "fast" : "base";
  }

  /**
   * Whether the job lists the project's endpoints now (`Planner.listsEndpoints`), unless its
   * poll was refused or failed on the API's side: the listing would fail too. A listing not yet
   * due counts as triggered.
   */
  private startsListing(entry: Entry, steps: Steps, now: number): boolean {
    const { planner } = this.parts;
    const poll = steps.outcomes[0];
    if (!planner.listsEndpoints(entry, poll, now)) return false;
    if (poll?.refused !== undefined || poll?.failed !== undefined) return false;
    steps.listed = true;
    if (planner.endpointsDue(entry) > now) this.parts.triggered.count(now);
    return true;
  }

  /**
   * A describe's requests count with the listings operations trigger, so that the budget makes
   * room for them; once answered, the project is described.
   */
  private learnDescribe(entry: Entry, steps: Steps, now: number, described?: JobOutcome): void {
    for (let i = 0; i < (described?.requests ?? 0); i++) this.parts.triggered.count(now);
    steps.outcomes.push(described);
    entry.describe = entry.describe && described?.answered !== true;
  }

  /** What the job's steps say of the project, and when its next poll and listing are due. */
  private learn(entry: Entry, steps: Steps, now: number, probe: boolean): void {
    const { planner, refusals } = this.parts;
    const after = this.parts.monotonic();
    entry.slow = steps.outcomes.some((o) => o?.slow === true);
    this.parts.activity.learn(entry, steps.outcomes, after);
    const baseMs = planner.tierIntervalSeconds("active") * 1000;
    refusals.learn(entry, steps.outcomes, after, baseMs, probe);
    const poll = { polled: steps.polled, outcome: steps.outcomes[0] };
    entry.errorBackoff = errorBackoffAfter(entry.errorBackoff, poll, after, {
      baseMs,
      maxMs: this.parts.errorBackoffMaxMs,
      random: this.parts.random(),
    });
    const retryAtMs = entry.refusal?.retryAtMs ?? entry.errorBackoff?.retryAtMs;
    if (steps.polled) {
      entry.lastPoll = { startMs: now, endMs: after, spread: planner.drawSpread() };
      entry.nextPollMs = retryAtMs ?? planner.nextPollDue(entry, after);
    }
    if (steps.listed || planner.endpointsDue(entry) <= now) {
      entry.nextEndpointsMs = Math.max(planner.nextEndpointsDue(after), retryAtMs ?? 0);
    }
  }
}
