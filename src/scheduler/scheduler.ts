/**
 * The scheduler: a tick once a second replans and dispatches every project whose poll (or
 * endpoint listing) is due, never two jobs of one project at once, at most `maxConcurrent` in
 * flight; between ticks a timer wakes it at the next due time, and a job that ends makes room
 * for the next one due at once. Each
 * project keeps its own due time, spread with jitter; projects with open operations use the
 * fast lane. A project's endpoints are listed when a poll sees an operation that changes them
 * start or end, and on a slow timer for drift; it is described (its name, and its branches as
 * the job decides) once at the start and when a poll sees an operation that changes its
 * branches, never on a timer.
 * When the request budget cannot sustain every project at its interval, intervals stretch
 * (`activity-plan.ts`, or `budget.ts` for `uniform`).
 *
 * Due times and the tick are on the monotonic clock: a step of the wall clock, in either
 * direction and of any size, changes nothing in when projects are polled.
 *
 * With the `activity` strategy (the default) each project's interval follows its recent activity
 * (`activity-plan.ts`): open operations at the fast interval and the others at the base interval
 * while the budget holds them; when it does not, by the square root of their recent operations
 * (each counting less as it ages; open operations count as many), from the fast interval for
 * the busiest to `maxInterval` at most for idle ones. A project's next poll is one such interval
 * after its last, as the plan stands at every moment: when operations end and the budget's share
 * of the others grows, their polls come sooner at once. `uniform` stretches every interval by one
 * factor, fixed at each poll.
 *
 * What the API refuses backs off (`refusals.ts`): a project whose log answers 404 or 403 is
 * tried again after a doubling delay; while an account's key answers 401, its jobs wait and one
 * job at a time probes the key. `retryRefused` tries everything refused again at once.
 *
 * A project whose last job timed out (a server that drips its answers, or never finishes them)
 * is slow: slow projects together run at most `slowShare(maxConcurrent)` jobs at once, so that
 * however many there are, the other projects keep most of the slots.
 */
import { setMaxListeners } from "node:events";
import {
  firstDueMs,
  nextDueMs,
  planBudget,
  triggeredShare,
  updateCost,
  type Budget,
  type Lane,
} from "./budget.js";
import {
  ACTIVE_WEIGHT,
  activityWeight,
  intervalFor,
  planActivity,
  type ActivityPlan,
  type Tier,
} from "./activity-plan.js";
import { DueQueue, type Due } from "./due-queue.js";
import { refusedAgain, type Refusal, type RefusalKind } from "./refusals.js";

/** The tick: how often due jobs are looked for (a job that ends starts the next at once). */
const TICK_MS = 1000;

/**
 * Why a project is described: its first answered poll (`start`), a poll that saw its branches
 * change (`branches`), or a poll that raised alerts (`alert`: their names are wanted; the
 * poll's job reads them itself, before the alerts go).
 */
export type DescribeReason = "start" | "branches" | "alert";

/** How a job went, as far as the schedule cares. */
export interface JobOutcome {
  /** Requests the job made (a describe that found everything known makes none). */
  readonly requests?: number;
  /** The job failed because a request ran out of time: the project is slow. */
  readonly slow?: boolean;
  /** The API refused the project (404, 403) or the account's key (401). */
  readonly refused?: RefusalKind;
  /** The API answered the job's requests: the account's key is good. */
  readonly answered?: boolean;
  /**
   * How long ago (ms, by the API's clock) each operation the poll read was created, new or
   * already known (the control plane's periodic ones aside): the project's recent activity as
   * its log shows it, from its first poll on.
   */
  readonly activityAgesMs?: readonly number[];
  /**
   * The API's time (epoch ms, by its clock) when the poll read them: the ages' reference, and
   * the clock that the activity ages by between polls.
   */
  readonly apiNowMs?: number;
  /** The poll saw an operation that changes endpoints start or end: list them now. */
  readonly endpointsChanged?: boolean;
  /** The poll saw an operation that creates, deletes or moves a branch start or end. */
  readonly branchesChanged?: boolean;
}

/** How a poll went: a job's outcome, with the requests it made and whether operations are open. */
export interface PollOutcome extends JobOutcome {
  readonly requests: number;
  /** The project has operations open now: it is polled in the fast lane. */
  readonly open: boolean;
}

/** How intervals follow the budget: by each project's activity, or one factor for all. */
export type PollStrategy = "activity" | "uniform";

export interface SchedulerJobs {
  /** Polls one project; resolves with the requests it made and whether operations are open. */
  poll(projectId: string, signal: AbortSignal): Promise<PollOutcome>;
  /** Lists one project's endpoints. */
  listEndpoints(projectId: string, signal: AbortSignal): Promise<JobOutcome | undefined>;
  /**
   * Reads what is shown of a project beside its id (its name while unknown, its branches): after
   * its first answered poll, and after one that saw its branches change. What it reads for each
   * `reason` is the job's to decide.
   */
  describe?(
    projectId: string,
    signal: AbortSignal,
    reason: DescribeReason,
  ): Promise<JobOutcome | undefined>;
}

/** Why the project is to be described after its poll, if it is. */
function describeReason(
  entry: { readonly describe: boolean },
  poll: JobOutcome | undefined,
): DescribeReason | undefined {
  if (poll?.branchesChanged === true) return "branches";
  return entry.describe ? "start" : undefined;
}

/** Jobs of slow projects allowed in flight at once: a quarter of the slots, at least one. */
export function slowShare(maxConcurrent: number): number {
  return Math.max(1, Math.floor(maxConcurrent / 4));
}

export interface SchedulerOptions {
  readonly baseIntervalSeconds: number;
  readonly fastIntervalSeconds: number;
  /** 0 turns the endpoint listing off. */
  readonly endpointsIntervalSeconds: number;
  readonly jitter: number;
  readonly headroom: number;
  readonly requestsPerMinute: number;
  /** Jobs in flight at once, across projects. */
  readonly maxConcurrent: number;
  /** Default `activity`. */
  readonly strategy?: PollStrategy;
  /**
   * The longest a project should wait between polls (activity strategy); default twice the
   * interval that fits when every project is polled alike (`alikeIntervalSeconds`).
   */
  readonly maxIntervalSeconds?: number | undefined;
  /**
   * How long an operation counts towards a project's activity, by the API's clock (default 1 h):
   * its weight halves every quarter of it.
   */
  readonly activeWindowSeconds?: number;
  /** Monotonic time in ms (the process's `Clock.monotonic`). */
  readonly monotonic: () => number;
  readonly random?: () => number;
}

/** A project's last poll, as its next one is planned from. */
interface LastPoll {
  /** When it started (monotonic ms): what "unpolled for" and `maxInterval` count from. */
  readonly startMs: number;
  /** When it ended: what the next interval counts from (activity strategy). */
  readonly endMs: number;
  /** The jitter drawn at its end: the next interval is the plan's times this. */
  readonly spread: number;
}

interface Entry {
  readonly id: string;
  lane: Lane;
  requestsPerPoll: number | undefined;
  nextPollMs: number;
  /** Its last poll (undefined before the first). */
  lastPoll: LastPoll | undefined;
  nextEndpointsMs: number;
  busy: boolean;
  /** Its last job timed out (see `slowShare`). */
  slow: boolean;
  /** The API refuses the project: it is tried again at `retryAtMs` (see `refusals.ts`). */
  refusal: Refusal | undefined;
  /**
   * Its recent activity: the operations its polls found, each weighing less as it ages (see
   * `activityWeight`), as of `activityAtMs` (the API's clock, see `activityNow`).
   */
  activity: number;
  activityAtMs: number;
  /** When it was last nudged (monotonic ms). */
  lastNudgeMs: number | undefined;
  /** It has not been described yet (or the last try failed): describe it after its next poll. */
  describe: boolean;
  /** The due time it is queued at (`Infinity` while its job runs): older copies are skipped. */
  queuedAt: number;
}

/** What a nudge did to one project. */
export type NudgeResult = "nudged" | "coalesced" | "unknown";

/**
 * The time constant of the measured rate of listings that operations trigger, in base intervals
 * (5 minutes at the default 30 s).
 */
const TRIGGERED_RATE_WINDOW_INTERVALS = 10;

/** The longest a project counts as active after its last operation, by default. */
const DEFAULT_ACTIVE_WINDOW_SECONDS = 3600;

export class Scheduler {
  private readonly entries = new Map<string, Entry>();
  /** Every project not in a job, by when its next job is due (rebuilt at each replan). */
  private readonly queue = new DueQueue<Entry>();
  private readonly inFlight = new Set<Promise<void>>();
  /** Jobs in flight of projects that were slow when their job started. */
  private slowInFlight = 0;
  private readonly abort = new AbortController();
  private tickTimer: NodeJS.Timeout | undefined;
  /** The timer for the next due time between ticks, and when it fires (monotonic ms). */
  private wakeTimer: NodeJS.Timeout | undefined;
  private wakeAtMs = Infinity;
  private current: Budget = { demandPerMinute: 0, capacityPerMinute: 0, stretch: 1 };
  /** The intervals planned now (the uniform strategy's: one for all but the fast lane). */
  private plan: ActivityPlan = {
    openSeconds: 0,
    scale: 0,
    minSeconds: 0,
    maxSeconds: 0,
    beyondMax: false,
  };
  private maxInterval = 0;
  /** Listings triggered by operations: a count decaying over `triggeredWindowMs()`. */
  private triggered = { count: 0, atMs: 0 };
  /** The API's time at the latest poll that gave it, and when that poll ended (monotonic ms). */
  private apiClock: { readonly apiMs: number; readonly monotonicMs: number } | undefined;
  /** The API refuses the account's key: no job but one probe at a time, at `retryAtMs`. */
  private keyRefusal: Refusal | undefined;
  private probing = false;
  private readonly now: () => number;
  private readonly random: () => number;

  constructor(
    private readonly options: SchedulerOptions,
    private readonly jobs: SchedulerJobs,
  ) {
    this.now = options.monotonic;
    this.random = options.random ?? Math.random;
    // Every job in flight, and every API call of a job waiting for its turn or a retry,
    // listens to this one signal; their number is bounded by the jobs, not by a constant.
    setMaxListeners(0, this.abort.signal);
    this.replan();
  }

  /** The current budget: demand, capacity and the stretch factor applied to intervals. */
  get budget(): Budget {
    return this.current;
  }

  /**
   * The interval each tier of projects is polled at now: `active`, that of a project with one
   * operation just found (busier ones are polled more often, down to the base interval).
   */
  tierIntervalSeconds(tier: Tier): number {
    if (tier === "fast") return intervalFor(this.plan, 0, true);
    return intervalFor(this.plan, tier === "active" ? 1 : 0);
  }

  /** The longest a project waits between polls now (activity strategy: `maxInterval`). */
  maxIntervalSeconds(): number {
    return this.maxInterval;
  }

  projects(): string[] {
    return [...this.entries.keys()];
  }

  /** Adds projects (first polls spread over one interval) and removes those not listed. */
  setProjects(ids: readonly string[], opts: { immediate?: boolean } = {}): void {
    const wanted = new Set(ids);
    for (const id of this.entries.keys()) if (!wanted.has(id)) this.entries.delete(id);
    const now = this.now();
    for (const id of ids) {
      if (this.entries.has(id)) continue;
      const spread = opts.immediate === true ? 0 : this.random();
      this.entries.set(id, {
        id,
        lane: "base",
        requestsPerPoll: undefined,
        nextPollMs: firstDueMs(now, this.options.fastIntervalSeconds, spread),
        lastPoll: undefined,
        nextEndpointsMs: firstDueMs(now, this.options.fastIntervalSeconds, this.random()),
        busy: false,
        slow: false,
        refusal: undefined,
        activity: 0,
        activityAtMs: 0,
        lastNudgeMs: undefined,
        describe: true,
        queuedAt: Infinity,
      });
    }
    this.replan();
  }

  /** While the API refuses the account's key: since how many tries, and when the next is. */
  keyRefused(): Refusal | undefined {
    return this.keyRefusal;
  }

  /** The projects the API refuses now, with their backoff. */
  refusedProjects(): Map<string, Refusal> {
    const out = new Map<string, Refusal>();
    for (const e of this.entries.values()) if (e.refusal !== undefined) out.set(e.id, e.refusal);
    return out;
  }

  /**
   * Tries everything refused again at once (after a configuration reload, or a discovery that
   * succeeded): the backoff of refused projects and of a refused key ends.
   */
  retryRefused(): void {
    const now = this.now();
    if (this.keyRefusal !== undefined) this.keyRefusal = { ...this.keyRefusal, retryAtMs: now };
    for (const entry of this.entries.values()) {
      if (entry.refusal === undefined) continue;
      entry.refusal = undefined;
      entry.nextPollMs = Math.min(entry.nextPollMs, now);
      this.enqueue(entry);
    }
    this.dispatch();
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
        const at = this.activityNow(now);
        if (at !== undefined) this.addActivity(entry, at, 1);
        entry.nextPollMs = Math.min(entry.nextPollMs, now);
        this.enqueue(entry);
        results.set(id, "nudged");
      }
    }
    this.dispatch();
    return results;
  }

  /** Starts the once-a-second tick (Node's timers run on the monotonic clock). */
  start(): void {
    if (this.tickTimer !== undefined) return;
    this.tickTimer = setInterval(() => {
      this.tick();
    }, TICK_MS);
    // The first tick at once: what is due at the start does not wait a second.
    this.tick();
  }

  /**
   * Dispatches every due job (at most `maxConcurrent` in flight). Returns without waiting for
   * them; `drain()` waits.
   */
  tick(): void {
    if (this.abort.signal.aborted) return;
    this.replan();
    this.dispatch();
  }

  /** Starts the jobs due now, the longest overdue first, while there is room. */
  private dispatch(): void {
    if (this.abort.signal.aborted || this.inFlight.size >= this.options.maxConcurrent) return;
    const now = this.now();
    // A refused key: nothing but one probe at a time, once its wait is over.
    const probe = this.keyRefusal !== undefined;
    if (probe && (this.probing || now < (this.keyRefusal?.retryAtMs ?? 0))) return;
    const slowLimit = slowShare(this.options.maxConcurrent);
    const held: Due<Entry>[] = [];
    while (this.inFlight.size < this.options.maxConcurrent) {
      const due = this.nextQueued();
      if (due === undefined || due.at > now) break;
      this.queue.pop();
      const entry = due.item;
      // Its activity has aged since it was queued, and its interval grown with it: not yet due.
      if (Math.min(this.pollDue(entry, now), this.endpointsDue(entry)) > now) {
        this.enqueue(entry);
        continue;
      }
      if (entry.slow && this.slowInFlight >= slowLimit) {
        held.push(due);
        continue;
      }
      this.run(entry, now, probe);
      if (probe) break;
    }
    for (const due of held) this.queue.push(due.item, due.at);
    const next = this.nextQueued()?.at ?? Infinity;
    this.wakeAt(probe ? (this.keyRefusal?.retryAtMs ?? next) : next, now);
  }

  /** The earliest queued entry still due at the time it was queued at (older copies dropped). */
  private nextQueued(): Due<Entry> | undefined {
    for (;;) {
      const due = this.queue.peek();
      if (due === undefined) return undefined;
      const entry = due.item;
      if (due.at === entry.queuedAt && !entry.busy && this.entries.get(entry.id) === entry) {
        return due;
      }
      this.queue.pop();
    }
  }

  /** Queues the entry at its due time now (after it changed). */
  private enqueue(entry: Entry): void {
    if (entry.busy) return;
    entry.queuedAt = Math.min(this.pollDue(entry), this.endpointsDue(entry));
    this.queue.push(entry, entry.queuedAt);
  }

  /** Queues every entry afresh: due times follow the plan, which each replan may change. */
  private enqueueAll(): void {
    const items: Due<Entry>[] = [];
    const now = this.now();
    for (const entry of this.entries.values()) {
      if (entry.busy) continue;
      entry.queuedAt = Math.min(this.pollDue(entry, now), this.endpointsDue(entry));
      items.push({ item: entry, at: entry.queuedAt });
    }
    this.queue.reset(items);
  }

  /**
   * Between ticks, a timer for the next due time: a poll starts when it is due, not at the
   * tick after it (only once the tick runs; before `start` jobs run when asked).
   */
  private wakeAt(atMs: number, now: number): void {
    if (this.tickTimer === undefined || !Number.isFinite(atMs)) return;
    if (this.wakeTimer !== undefined && this.wakeAtMs <= atMs) return;
    clearTimeout(this.wakeTimer);
    this.wakeAtMs = atMs;
    this.wakeTimer = setTimeout(
      () => {
        this.wakeTimer = undefined;
        this.wakeAtMs = Infinity;
        this.dispatch();
      },
      Math.max(1, atMs - now),
    );
  }

  /** Waits for every job in flight. */
  async drain(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  /**
   * Stops the tick and aborts the jobs in flight (a poll abandoned this way commits nothing),
   * then waits for them to settle.
   */
  async stop(): Promise<void> {
    clearInterval(this.tickTimer);
    clearTimeout(this.wakeTimer);
    this.wakeTimer = undefined;
    this.abort.abort(new Error("the scheduler is stopping"));
    await this.drain();
  }

  /**
   * When the project's poll is due. Under the activity strategy: one interval after its last
   * poll ended, as the plan and its activity stand now (not as they stood at that poll, so
   * that the polls spend what the plan counts on when the budget's share moves), spread by the
   * jitter drawn then, and never beyond `maxInterval` after it started (`boundMs`); sooner when
   * nudged. Under `uniform`, as planned at its last poll. A refused project keeps its backoff.
   */
  private pollDue(entry: Entry, now = this.now()): number {
    const last = entry.lastPoll;
    if (this.options.strategy === "uniform" || entry.refusal !== undefined || last === undefined) {
      return entry.nextPollMs;
    }
    const planned = last.endMs + this.intervalOf(entry, now) * last.spread * 1000;
    return Math.min(entry.nextPollMs, planned, last.startMs + this.boundMs());
  }

  /**
   * How long after a poll started the next one is due at the latest: `maxInterval`, less one
   * tick (at most half of it), so that a poll that waits for a busy event loop or a tick still
   * reads the log within the bound.
   */
  private boundMs(): number {
    const maxMs = this.maxInterval * 1000;
    return maxMs - Math.min(TICK_MS, maxMs / 2);
  }

  private endpointsDue(entry: Entry): number {
    return this.options.endpointsIntervalSeconds > 0 ? entry.nextEndpointsMs : Infinity;
  }

  private run(entry: Entry, now: number, probe: boolean): void {
    entry.busy = true;
    entry.queuedAt = Infinity;
    if (probe) this.probing = true;
    const countedSlow = entry.slow;
    if (countedSlow) this.slowInFlight += 1;
    const job = (async () => {
      const outcomes: (JobOutcome | undefined)[] = [];
      let listed = false;
      const polled = this.pollDue(entry, now) <= now;
      try {
        if (polled) {
          const outcome = await this.jobs.poll(entry.id, this.abort.signal);
          outcomes.push(outcome);
          entry.requestsPerPoll = updateCost(entry.requestsPerPoll, outcome.requests);
          entry.lane = outcome.open ? "fast" : "base";
        }
        // Listed when due, or at once when the poll saw an operation that changes endpoints; a
        // refused project's endpoints are not listed: they would be refused too.
        const listing =
          this.options.endpointsIntervalSeconds > 0 &&
          (this.endpointsDue(entry) <= now || outcomes[0]?.endpointsChanged === true);
        if (listing && outcomes[0]?.refused === undefined) {
          listed = true;
          if (this.endpointsDue(entry) > now) this.countTriggered(now);
          outcomes.push(await this.jobs.listEndpoints(entry.id, this.abort.signal));
        }
        // Described once the API answered the job: at the start (again after a failed try),
        // then after a poll that saw its branches change. Its requests count with the listings
        // operations trigger, so the budget makes room for them.
        const first = outcomes[0];
        const reason = describeReason(entry, first);
        if (this.jobs.describe !== undefined && first?.answered === true && reason !== undefined) {
          const described = await this.jobs.describe(entry.id, this.abort.signal, reason);
          for (let i = 0; i < (described?.requests ?? 0); i++) this.countTriggered(now);
          outcomes.push(described);
          entry.describe = entry.describe && described?.answered !== true;
        }
      } catch {
        // Jobs report their own failures; a failed job is simply due again next interval.
      } finally {
        const after = this.now();
        entry.slow = outcomes.some((o) => o?.slow === true);
        this.learnActivity(entry, outcomes, after);
        this.learnRefusals(entry, outcomes, after, probe);
        if (polled) {
          entry.lastPoll = {
            startMs: now,
            endMs: after,
            spread: 1 + this.options.jitter * (2 * this.random() - 1),
          };
          entry.nextPollMs = entry.refusal?.retryAtMs ?? this.nextPollDue(entry, after);
        }
        if (listed || this.endpointsDue(entry) <= now) {
          const interval = this.options.endpointsIntervalSeconds * this.current.stretch;
          entry.nextEndpointsMs = Math.max(
            this.due(after, interval),
            entry.refusal?.retryAtMs ?? 0,
          );
        }
        entry.busy = false;
        this.enqueue(entry);
        if (probe) this.probing = false;
        if (countedSlow) this.slowInFlight -= 1;
      }
    })();
    this.inFlight.add(job);
    void job.finally(() => {
      this.inFlight.delete(job);
      // Only while the tick runs: before `start` (tests, `--once`) jobs run when asked.
      if (this.tickTimer !== undefined) this.dispatch();
    });
  }

  /** What a job's outcomes say of the project's and the key's refusal. */
  private learnRefusals(
    entry: Entry,
    outcomes: readonly (JobOutcome | undefined)[],
    now: number,
    probe: boolean,
  ): void {
    const baseMs = this.tierIntervalSeconds("active") * 1000;
    if (outcomes.some((o) => o?.refused === "key")) {
      // Jobs that started before the key was refused say nothing new: only a probe counts.
      if (this.keyRefusal === undefined || probe) {
        this.keyRefusal = refusedAgain(this.keyRefusal, now, baseMs);
      }
    } else if (outcomes.some((o) => o?.answered === true)) {
      this.keyRefusal = undefined;
    }
    if (outcomes.some((o) => o?.refused === "project")) {
      entry.refusal = refusedAgain(entry.refusal, now, baseMs);
    } else if (outcomes.some((o) => o !== undefined && o.refused === undefined)) {
      entry.refusal = undefined;
    }
  }

  private countTriggered(now: number): void {
    this.triggered = { count: this.triggeredCount(now) + 1, atMs: now };
  }

  private triggeredWindowMs(): number {
    return this.options.baseIntervalSeconds * 1000 * TRIGGERED_RATE_WINDOW_INTERVALS;
  }

  private triggeredCount(now: number): number {
    const age = Math.max(0, now - this.triggered.atMs);
    return this.triggered.count * Math.exp(-age / this.triggeredWindowMs());
  }

  /** Requests per minute the listings that operations trigger take now (measured). */
  private triggeredPerMinute(now: number): number {
    return (this.triggeredCount(now) * 60_000) / this.triggeredWindowMs();
  }

  private activeWindowMs(): number {
    return (this.options.activeWindowSeconds ?? DEFAULT_ACTIVE_WINDOW_SECONDS) * 1000;
  }

  /**
   * The API's time now, by which activity ages: an operation's age is the API's time less its
   * `created_at`, both by the API's clock, so the weights do not depend on our clock agreeing
   * with the API's. Between polls it moves on by the monotonic clock. Undefined before a poll
   * gave it (no project has activity then).
   */
  private activityNow(now: number): number | undefined {
    const clock = this.apiClock;
    return clock === undefined ? undefined : clock.apiMs + (now - clock.monotonicMs);
  }

  /** The project's recent activity now (0 when idle: nothing within the active window). */
  private weightOf(entry: Entry, now: number): number {
    const at = this.activityNow(now);
    if (at === undefined || entry.activity === 0) return 0;
    const weight = entry.activity * activityWeight(at - entry.activityAtMs, this.activeWindowMs());
    return weight >= ACTIVE_WEIGHT ? weight : 0;
  }

  /** Ages the project's activity to `at` (the API's clock), adds `weight`, and returns the sum. */
  private addActivity(entry: Entry, at: number, weight: number): number {
    const decayed =
      entry.activity === 0
        ? 0
        : entry.activity * activityWeight(at - entry.activityAtMs, this.activeWindowMs());
    entry.activity = decayed + weight;
    entry.activityAtMs = at;
    return entry.activity;
  }

  /**
   * What a job's outcomes say of the project's activity: each operation its poll read weighs by
   * its age (by the API's clock), so that a project's weight is known from its first poll. A
   * poll from the top of the log reads again what the last one read; the larger of its sum and
   * the decayed weight counts, so that what it did not read (a nudge, or newer pages than a
   * catch-up's) still counts as it ages.
   */
  private learnActivity(
    entry: Entry,
    outcomes: readonly (JobOutcome | undefined)[],
    now: number,
  ): void {
    for (const o of outcomes) {
      if (o?.activityAgesMs === undefined || o.apiNowMs === undefined) continue;
      this.apiClock = { apiMs: o.apiNowMs, monotonicMs: now };
      const window = this.activeWindowMs();
      const read = o.activityAgesMs.reduce((sum, age) => sum + activityWeight(age, window), 0);
      entry.activity = Math.max(this.addActivity(entry, o.apiNowMs, 0), read);
    }
  }

  /**
   * When the project's next poll is due as planned after a poll: under `uniform`, one interval
   * on, spread with jitter; under the activity strategy nothing is fixed then (`pollDue` follows
   * the plan), only a nudge or a backoff brings it forward.
   */
  private nextPollDue(entry: Entry, now: number): number {
    return this.options.strategy === "uniform"
      ? this.due(now, this.intervalOf(entry, now))
      : Infinity;
  }

  /** Seconds until the project's next poll is due, by the plan. */
  private intervalOf(entry: Entry, now: number): number {
    return intervalFor(this.plan, this.weightOf(entry, now), entry.lane === "fast");
  }

  private due(now: number, intervalSeconds: number): number {
    // Intervals arrive already stretched.
    return nextDueMs(now, intervalSeconds, 1, this.options.jitter, this.random());
  }

  /** Plans the intervals afresh, and queues every project by its due time under them. */
  private replan(): void {
    this.planIntervals();
    this.enqueueAll();
  }

  /**
   * The interval that fits if every project were polled alike, none with open operations and no
   * listing triggered: what `maxInterval` defaults to twice of. It follows the fleet and the
   * budget, not the operations of the moment, so that the bound does not move under a burst.
   */
  private alikeIntervalSeconds(planned: readonly Entry[]): number {
    const { options } = this;
    const alike = planBudget({
      projects: planned.map((e) => ({ lane: "base", requestsPerPoll: e.requestsPerPoll ?? 1 })),
      baseIntervalSeconds: options.baseIntervalSeconds,
      fastIntervalSeconds: options.fastIntervalSeconds,
      endpointsIntervalSeconds: options.endpointsIntervalSeconds,
      requestsPerMinute: options.requestsPerMinute,
      headroom: options.headroom,
    });
    return options.baseIntervalSeconds * alike.stretch;
  }

  private planIntervals(): void {
    const { options } = this;
    // Refused projects are tried far less often than their interval: they cost next to nothing.
    const planned = [...this.entries.values()].filter((e) => e.refusal === undefined);
    const now = this.now();
    const triggered = this.triggeredPerMinute(now);
    this.current = planBudget({
      projects: planned.map((e) => ({ lane: e.lane, requestsPerPoll: e.requestsPerPoll ?? 1 })),
      baseIntervalSeconds: options.baseIntervalSeconds,
      fastIntervalSeconds: options.fastIntervalSeconds,
      endpointsIntervalSeconds: options.endpointsIntervalSeconds,
      requestsPerMinute: options.requestsPerMinute,
      headroom: options.headroom,
      triggeredPerMinute: triggered,
    });
    const { stretch } = this.current;
    const uniform = {
      fast: options.fastIntervalSeconds * stretch,
      active: options.baseIntervalSeconds * stretch,
      idle: options.baseIntervalSeconds * stretch,
    };
    if (options.strategy === "uniform") {
      this.plan = {
        openSeconds: uniform.fast,
        scale: 0,
        minSeconds: uniform.idle,
        maxSeconds: uniform.idle,
        beyondMax: false,
      };
      this.maxInterval = uniform.idle;
      return;
    }
    // The endpoint listings keep the uniform plan's share, and those operations trigger what
    // they took of late; the polls share the rest.
    const listings =
      (options.endpointsIntervalSeconds > 0
        ? (planned.length * 60) / (options.endpointsIntervalSeconds * stretch)
        : 0) + triggeredShare(triggered, this.current.capacityPerMinute);
    const projects = planned.map((e) => ({
      cost: Math.max(1, e.requestsPerPoll ?? 1),
      weight: this.weightOf(e, now),
      open: e.lane === "fast",
    }));
    this.maxInterval = options.maxIntervalSeconds ?? 2 * this.alikeIntervalSeconds(planned);
    this.plan = planActivity({
      projects,
      fastIntervalSeconds: options.fastIntervalSeconds,
      baseIntervalSeconds: options.baseIntervalSeconds,
      maxIntervalSeconds: this.maxInterval,
      capacityPerMinute: Math.max(0, this.current.capacityPerMinute - listings),
    });
  }
}
