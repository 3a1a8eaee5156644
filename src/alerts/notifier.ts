/**
 * The notifier: drains the projects' durable outboxes into the sinks. Per sink, one message is
 * in flight at a time, at most one per `minIntervalMs`; a message carries alerts of one project
 * (grouped over a short window). After a 2xx the alerts are acknowledged in the project's state
 * (one commit); a failure is retried with backoff (or the receiver's Retry-After); an alert a
 * sink refuses for good, or that grows older than the sink's maximum age, goes to the dead
 * letters. Delivery is at-least-once: a duplicate needs the process to die between a sink's 2xx
 * and the acknowledgement's commit.
 */
import type { Logger } from "../logger.js";
import { errorFields } from "../logger.js";
import type { ProjectState } from "../store/index.js";
import type { NameLookup, OutboxChange } from "../sync/index.js";
import type { Alert } from "../store/index.js";
import type { FiringKeeper, SendResult, Sink } from "./alert.js";
import { systemClock, type Clock } from "../clock.js";
import { EntryBirths } from "./entry-births.js";
import { withNames } from "./names.js";
import { expired, nextBatch, retryDelayMs, type SinkPolicy } from "./delivery-plan.js";
import {
  acknowledge,
  acknowledgeFiring,
  alertForSink,
  deadLetter,
  expireFiring,
  settleEnded,
  type FiringAlert,
} from "../store/index.js";

/** A project whose outbox the notifier drains. */
export interface OutboxOwner {
  readonly projectId: string;
  readonly state: ProjectState | undefined;
  updateOutbox(nowMs: number, change: (state: ProjectState) => OutboxChange): Promise<boolean>;
}

/** What the notifier reports (metrics subscribe). */
export interface NotifierObserver {
  delivered?(sink: string, alerts: readonly Alert[], latencySeconds: readonly number[]): void;
  deliveryFailed?(
    sink: string,
    reason: Extract<SendResult, { ok: false }>["reason"],
    alerts: number,
  ): void;
  deadLettered?(sink: string, alerts: readonly Alert[], reason: string): void;
}

export interface NotifierOptions {
  readonly sinks: readonly { readonly sink: Sink; readonly policy: SinkPolicy }[];
  readonly projects: () => Iterable<OutboxOwner>;
  readonly logger: Logger;
  readonly observer?: NotifierObserver;
  /** Names beside ids: an alert raised before its names were known is sent with them. */
  readonly names?: NameLookup | undefined;
  /** How often the outboxes are looked at. */
  readonly tickMs?: number;
  /** Monotonic for the pace, backoff and ages; wall for what is stored (default: the system's). */
  readonly clock?: Clock;
  readonly random?: () => number;
}

interface SinkState {
  readonly sink: Sink;
  readonly policy: SinkPolicy;
  busy: boolean;
  /** No message before this time (monotonic: the sink's pace, or a 429's Retry-After). */
  notBeforeMs: number;
  /** Per project: consecutive failures and when to try again (monotonic). */
  readonly backoff: Map<string, { failures: number; retryAtMs: number }>;
  /** A sink that keeps alerts firing: when its firing set is next sent again (monotonic). */
  nextRefreshMs: number;
}

export class Notifier {
  private sinks: SinkState[];
  /** Set while the sinks are being replaced: no new message starts. */
  private swapping = false;
  private readonly abort = new AbortController();
  private readonly running = new Set<Promise<void>>();
  private timer: NodeJS.Timeout | undefined;
  private readonly clock: Clock;
  private readonly births: EntryBirths;
  private readonly random: () => number;

  constructor(private readonly options: NotifierOptions) {
    this.clock = options.clock ?? systemClock;
    this.births = new EntryBirths(this.clock);
    this.random = options.random ?? Math.random;
    this.sinks = options.sinks.map(({ sink, policy }) => ({
      sink,
      policy,
      busy: false,
      notBeforeMs: 0,
      backoff: new Map(),
      nextRefreshMs: 0,
    }));
  }

  start(): void {
    this.timer = setInterval(() => {
      this.tick();
    }, this.options.tickMs ?? 250);
    this.timer.unref();
  }

  /** Looks at every sink once; a sink with a message in flight is skipped. */
  tick(): void {
    if (this.abort.signal.aborted || this.swapping) return;
    for (const state of this.sinks) {
      if (state.busy) continue;
      state.busy = true;
      const run = this.drain(state).finally(() => {
        state.busy = false;
      });
      this.running.add(run);
      void run.finally(() => this.running.delete(run));
    }
  }

  /**
   * Delivers to `next` from now on (a reload). Messages in flight finish first, so that no alert
   * is sent twice at once; a sink kept by name keeps its pace and its backoff. Alerts pending
   * for a sink no longer configured stay in the outboxes (the status page lists them), and are
   * delivered if a sink of that name comes back.
   */
  async setSinks(
    next: readonly { readonly sink: Sink; readonly policy: SinkPolicy }[],
  ): Promise<void> {
    this.swapping = true;
    try {
      await this.idle();
      const previous = this.sinks;
      this.sinks = next.map(({ sink, policy }) => {
        const kept = previous.find((s) => s.sink.name === sink.name);
        return {
          sink,
          policy,
          busy: false,
          notBeforeMs: kept?.notBeforeMs ?? 0,
          backoff: kept?.backoff ?? new Map(),
          nextRefreshMs: kept?.nextRefreshMs ?? 0,
        };
      });
      await Promise.all(previous.map((s) => s.sink.close()));
    } finally {
      this.swapping = false;
    }
  }

  /** Resolves once nothing is in flight (tests). */
  async idle(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
  }

  /** Stops the timer, abandons messages in flight (their alerts stay pending) and waits. */
  async stop(): Promise<void> {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.abort.abort(new Error("the notifier is stopping"));
    await this.idle();
    await Promise.all(this.sinks.map((s) => s.sink.close()));
  }

  private async drain(state: SinkState): Promise<void> {
    const { sink, policy } = state;
    const log = this.options.logger;
    try {
      const owners = [...this.options.projects()];
      this.births.prune(() => owners.map((o) => o.state?.outbox ?? []));
      await this.expire(state, owners);
      const now = this.clock.monotonic();
      if (now < state.notBeforeMs) return;
      if (sink.firing !== undefined && now >= state.nextRefreshMs) {
        await this.refresh(state, sink.firing, owners);
        return;
      }
      const batch = nextBatch(
        owners.map((o) => ({
          projectId: o.projectId,
          outbox: o.state?.outbox ?? [],
          retryAtMs: state.backoff.get(o.projectId)?.retryAtMs,
        })),
        policy,
        now,
        (entry) => this.births.birthOf(entry),
      );
      const owner = owners.find((o) => o.projectId === batch?.projectId);
      if (batch === undefined || owner === undefined) return;

      // A recovery names, to each sink, only the alerts it resolves that the sink was sent.
      const alerts = batch.entries.map((e) => alertForSink(e, sink.name));
      const named = alerts.map((alert) => withNames(alert, this.options.names));
      const result = await sink.send(named, this.abort.signal, {
        firing: (owner.state?.firing ?? []).map((f) => this.named(f)),
      });
      if (this.abort.signal.aborted) return;
      const after = this.clock.monotonic();
      const wall = this.clock.wall();
      state.notBeforeMs = after + sink.minIntervalMs;
      const ids = new Set(alerts.map((a) => a.id));

      if (result.ok) {
        state.backoff.delete(owner.projectId);
        await owner.updateOutbox(wall, (s) => ({
          outbox: acknowledge(s.outbox, sink.name, ids),
          deadLetters: s.deadLetters,
          // What it took now fires (and a recovery ends what it resolves) until it ends.
          ...(sink.firing === undefined
            ? {}
            : { firing: acknowledgeFiring(s.firing ?? [], sink.name, alerts, wall) }),
        }));
        const latencies = batch.entries.map((e) => this.births.ageOf(e) / 1000);
        this.options.observer?.delivered?.(sink.name, alerts, latencies);
        log.info(
          { sink: sink.name, project: owner.projectId, alerts: alerts.length },
          "alerts delivered",
        );
        return;
      }
      this.options.observer?.deliveryFailed?.(sink.name, result.reason, alerts.length);
      if (result.permanent) {
        await this.giveUp(owner, sink.name, alerts, result.reason, wall, result.deadLetterReason);
        log.error(
          {
            sink: sink.name,
            project: owner.projectId,
            alerts: alerts.length,
            reason: result.reason,
            detail: result.detail,
          },
          "sink refused the alerts for good; they are dead-lettered",
        );
        return;
      }
      const failures = (state.backoff.get(owner.projectId)?.failures ?? 0) + 1;
      const delay = retryDelayMs(failures, result.retryAfterMs, this.random());
      state.backoff.set(owner.projectId, { failures, retryAtMs: after + delay });
      if (result.reason === "rate_limited")
        state.notBeforeMs = Math.max(state.notBeforeMs, after + delay);
      log.warn(
        {
          sink: sink.name,
          project: owner.projectId,
          alerts: alerts.length,
          reason: result.reason,
          detail: result.detail,
          retryInMs: delay,
        },
        "alert delivery failed; will retry",
      );
    } catch (error) {
      // A commit of the outbox failed: the alerts stay pending and are tried again.
      log.error({ sink: sink.name, ...errorFields(error) }, "notifier could not update an outbox");
    }
  }

  /**
   * Sends a sink's firing set again (and its ended alerts once, resolved): alerts that have fired
   * for the sink's `firingForMs` end first, and ended alerts the sink took leave the set. A
   * failure is logged and tried again at the next interval; nothing is lost meanwhile.
   */
  private async refresh(
    state: SinkState,
    keeper: FiringKeeper,
    owners: readonly OutboxOwner[],
  ): Promise<void> {
    const { sink } = state;
    state.nextRefreshMs = this.clock.monotonic() + keeper.resendIntervalMs;
    // How long alerts have fired is kept across restarts, so it is read on the wall clock.
    const now = this.clock.wall();
    const sent: { owner: OutboxOwner; firing: FiringAlert[] }[] = [];
    for (const owner of owners) {
      const all = owner.state?.firing ?? [];
      if (!all.some((f) => f.sink === sink.name)) continue;
      const expired = expireFiring(all, sink.name, keeper.firingForMs, now);
      if (expired.some((f, i) => f !== all[i])) {
        await owner.updateOutbox(now, (s) => ({
          outbox: s.outbox,
          deadLetters: s.deadLetters,
          firing: expireFiring(s.firing ?? [], sink.name, keeper.firingForMs, now),
        }));
      }
      sent.push({ owner, firing: expired.filter((f) => f.sink === sink.name) });
    }
    if (sent.length === 0) return;
    // With the names learned since it was first sent (annotations: the alert stays the same one).
    const result = await keeper.refresh(
      sent.flatMap((s) => s.firing).map((f) => this.named(f)),
      this.abort.signal,
    );
    if (this.abort.signal.aborted) return;
    if (!result.ok) {
      const alerts = sent.reduce((n, s) => n + s.firing.length, 0);
      this.options.observer?.deliveryFailed?.(sink.name, result.reason, alerts);
      this.options.logger.warn(
        { sink: sink.name, reason: result.reason, detail: result.detail },
        "re-sending the firing alerts failed; will try again at the next interval",
      );
      return;
    }
    for (const { owner, firing } of sent) {
      if (!firing.some((f) => f.endedAtMs !== undefined)) continue;
      await owner.updateOutbox(this.clock.wall(), (s) => ({
        outbox: s.outbox,
        deadLetters: s.deadLetters,
        firing: settleEnded(s.firing ?? [], sink.name, firing),
      }));
    }
  }

  /** A firing alert with the names known now that it did not carry yet. */
  private named(firing: FiringAlert): FiringAlert {
    const alert = withNames(firing.alert, this.options.names);
    return alert === firing.alert ? firing : { ...firing, alert };
  }

  /** Moves alerts older than the sink's maximum age to the dead letters. */
  private async expire(state: SinkState, owners: readonly OutboxOwner[]): Promise<void> {
    const now = this.clock.monotonic();
    for (const owner of owners) {
      const old = expired(owner.state?.outbox ?? [], state.policy, now, (entry) =>
        this.births.birthOf(entry),
      );
      if (old.length === 0) continue;
      const alerts = old.map((e) => e.alert);
      await this.giveUp(owner, state.sink.name, alerts, "max_age", this.clock.wall());
      this.options.logger.error(
        {
          sink: state.sink.name,
          project: owner.projectId,
          alerts: alerts.length,
          maxAgeSeconds: state.policy.maxAgeMs / 1000,
        },
        "alerts were not delivered within the sink's maximum age; they are dead-lettered",
      );
    }
  }

  private async giveUp(
    owner: OutboxOwner,
    sink: string,
    alerts: readonly Alert[],
    reason: string,
    nowMs: number,
    /** What the dead letters keep as the reason, when more than `reason` (a metric label). */
    text: string = reason,
  ): Promise<void> {
    const ids = new Set(alerts.map((a) => a.id));
    await owner.updateOutbox(nowMs, (s) =>
      deadLetter(s.outbox, s.deadLetters, sink, ids, text, nowMs),
    );
    this.options.observer?.deadLettered?.(sink, alerts, reason);
  }
}
