/**
 * The notifier: drains the projects' durable outboxes into the sinks, one lane per sink
 * (`sink-lane.ts`, run through the stages of `lane-stages.ts`). Per sink, one message is in
 * flight at a time, at most one per `minIntervalMs`; a message carries alerts of one project
 * (grouped over a short window). After a 2xx the alerts are acknowledged in the project's state
 * (one commit); a failure is retried with backoff (or the receiver's Retry-After); an alert a
 * sink refuses for good, or that grows older than the sink's maximum age, goes to the dead
 * letters. Delivery is at-least-once: a duplicate needs the process to die between a sink's 2xx
 * and the acknowledgement's commit.
 *
 * A lane runs when it is woken (`wake`: a project's outbox gained alerts, or its state was
 * loaded with some) or when its next due time comes (a grouping window ends, a backoff or the
 * sink's pace runs out, an alert reaches its maximum age, the firing set is due again): one
 * timer for the earliest of them. With no alert pending it does nothing at all.
 */
import type { Logger } from "../../logger.js";
import type { NameLookup } from "../../sync/index.js";
import { systemClock, type Clock } from "../../clock.js";
import type { Sink } from "../sinks/sink.js";
import type { SinkPolicy } from "./delivery-plan.js";
import { EntryBirths } from "./entry-births.js";
import { runLane, type LaneEnv, type NotifierObserver } from "./lane-stages.js";
import { SinkLane, type OutboxOwner } from "./sink-lane.js";

export type { NotifierObserver } from "./lane-stages.js";
export type { OutboxOwner } from "./sink-lane.js";

/** How long a lane that could do nothing waits before it looks again (an outbox unwritable). */
const QUIET_MS = 250;

export interface NotifierOptions {
  readonly sinks: readonly { readonly sink: Sink; readonly policy: SinkPolicy }[];
  /** A watched project's outbox, or undefined when it is not watched. */
  readonly owner: (projectId: string) => OutboxOwner | undefined;
  /** Every watched project (looked through once when the sinks change). */
  readonly projects: () => Iterable<OutboxOwner>;
  readonly logger: Logger;
  readonly observer?: NotifierObserver;
  /** Names beside ids: an alert raised before its names were known is sent with them. */
  readonly names?: NameLookup | undefined;
  /** Monotonic for the pace, backoff and ages; wall for what is stored (default: the system's). */
  readonly clock?: Clock;
  readonly random?: () => number;
}

export class Notifier {
  #lanes: SinkLane[];
  /** Set while the sinks are being replaced: no new run starts. */
  #swapping = false;
  #started = false;
  readonly #abort = new AbortController();
  readonly #running = new Set<Promise<unknown>>();
  #timer: NodeJS.Timeout | undefined;
  readonly #env: LaneEnv;

  constructor(private readonly options: NotifierOptions) {
    const clock = options.clock ?? systemClock;
    this.#env = {
      ownerOf: options.owner,
      clock,
      births: new EntryBirths(clock),
      names: options.names,
      logger: options.logger,
      observer: options.observer,
      signal: this.#abort.signal,
      random: options.random ?? Math.random,
    };
    this.#lanes = options.sinks.map(({ sink, policy }) => new SinkLane(sink, policy));
  }

  start(): void {
    this.#started = true;
    this.#schedule();
  }

  /** `projectId`'s outbox may hold work for the sinks (new alerts, a state loaded). */
  wake(projectId: string): void {
    const owner = this.options.owner(projectId);
    if (owner === undefined) return;
    for (const lane of this.#lanes) lane.note(owner);
    this.#schedule();
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
    this.#swapping = true;
    try {
      await this.idle();
      const previous = this.#lanes;
      this.#lanes = next.map(
        ({ sink, policy }) =>
          new SinkLane(
            sink,
            policy,
            previous.find((l) => l.name === sink.name),
          ),
      );
      for (const owner of this.options.projects()) {
        for (const lane of this.#lanes) lane.note(owner);
      }
      await Promise.all(previous.map((l) => l.sink.close()));
    } finally {
      this.#swapping = false;
    }
    this.#schedule();
  }

  /** Resolves once nothing is in flight. */
  async idle(): Promise<void> {
    while (this.#running.size > 0) await Promise.allSettled([...this.#running]);
  }

  /** Stops the timer, abandons messages in flight (their alerts stay pending) and waits. */
  async stop(): Promise<void> {
    this.#started = false;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#abort.abort(new Error("the notifier is stopping"));
    await this.idle();
    await Promise.all(this.#lanes.map((l) => l.sink.close()));
  }

  /** Runs every lane that is due, and sets the timer for the next due time of the others. */
  #schedule(): void {
    if (!this.#started || this.#swapping || this.#abort.signal.aborted) return;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    const { births, clock } = this.#env;
    births.prune(() => this.#lanes.flatMap((l) => this.#outboxesOf(l.pending)));
    const now = clock.monotonic();
    let next = Infinity;
    for (const lane of this.#lanes) {
      if (lane.busy) continue;
      const due = lane.dueMs(this.options.owner, (e) => births.birthOf(e));
      if (due === undefined) continue;
      if (due <= now) this.#run(lane);
      else next = Math.min(next, due);
    }
    if (next === Infinity) return;
    this.#timer = setTimeout(
      () => {
        this.#timer = undefined;
        this.#schedule();
      },
      Math.max(1, Math.ceil(next - now)),
    );
    this.#timer.unref();
  }

  #run(lane: SinkLane): void {
    lane.busy = true;
    const run = runLane(lane, this.#env)
      .then((did) => {
        if (!did) lane.quietUntilMs = this.#env.clock.monotonic() + QUIET_MS;
      })
      .finally(() => {
        lane.busy = false;
        this.#running.delete(run);
        this.#schedule();
      });
    this.#running.add(run);
  }

  #outboxesOf(ids: Iterable<string>) {
    const outboxes = [];
    for (const id of ids) {
      const outbox = this.options.owner(id)?.state?.outbox;
      if (outbox !== undefined) outboxes.push(outbox);
    }
    return outboxes;
  }
}
