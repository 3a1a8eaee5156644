/**
 * The span export: drains the projects' span queues to the collector, one export request at a
 * time, each carrying up to `batchSize` spans of any projects. What the collector takes leaves
 * the queues in a commit per project; a delivery is at least once, and a repeat (the process died
 * between the collector's 2xx and that commit) is the same span, with the same ids.
 *
 * A failed export leaves the spans queued and the export backs off (1 s doubling to 5 min, less a
 * random share), the exporter's own retries within the timeout aside. Spans the collector refuses
 * as malformed (400), and spans still queued when an outage outlasts `maxAge`, go to the span
 * dead letters; a request too large (413) is tried again in smaller batches. A refusal of us
 * (401, 403, 404) is a setting to fix: the spans wait. Polling, alerts and `/metrics` never wait
 * for the export.
 *
 * It runs when woken (a poll committed spans, a state was loaded) and when its backoff ends; with
 * nothing queued it does nothing.
 */
import type { Clock } from "../clock.js";
import type { OtlpTarget } from "../config/index.js";
import { errorFields, type Logger } from "../logger.js";
import {
  deadLetterSpans,
  removeFromSpanQueue,
  spanKey,
  type ProjectState,
  type QueuedSpan,
} from "../store/index.js";
import type { OutboxChange } from "../sync/index.js";
import { loadWire } from "./load-wire.js";
import { SILENT_OTLP_OBSERVER, type OtlpObserver, type SpanGiveUpReason } from "./observer.js";
import { OutageLog } from "./outage-log.js";
import { withoutSecrets } from "./redaction.js";
import type { SpanSender } from "./wire/span-sender.js";
import type { ExportOutcome } from "./wire/transport.js";

/** A project whose span queue the export drains (the roster's outbox owner is one). */
export interface SpanQueueOwner {
  readonly projectId: string;
  /** The committed state; undefined while it is not loaded (or its lease is not valid). */
  readonly state: ProjectState | undefined;
  updateOutbox(nowMs: number, change: (state: ProjectState) => OutboxChange): Promise<boolean>;
}

export interface SpanExportOptions {
  readonly target: OtlpTarget & { readonly batchSize: number; readonly maxAgeMs: number };
  /** The resource's attributes (`service.name` among them). */
  readonly resource: Readonly<Record<string, string>>;
  readonly owner: (projectId: string) => SpanQueueOwner | undefined;
  /** Every watched project (looked through once at the start). */
  readonly projects: () => Iterable<SpanQueueOwner>;
  readonly logger: Logger;
  readonly clock: Clock;
  readonly observer?: OtlpObserver | undefined;
  readonly random?: () => number;
}

/** The longest wait between two exports while the collector fails. */
const MAX_BACKOFF_MS = 300_000;

export class SpanExport {
  /** Projects that may hold queued spans, in the order they are served. */
  readonly #pending = new Set<string>();
  /** OpenTelemetry's exporter, loaded with its packages at the first export. */
  #sender: SpanSender | undefined;
  readonly #observer: OtlpObserver;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  #started = false;
  #stopped = false;
  /** Consecutive failed exports, and when the next may start (monotonic). */
  #failures = 0;
  #retryAtMs = 0;
  /** Spans per request: the configured batch, halved after each 413 until a request passes. */
  #batchLimit: number;
  /** One warning when exports start failing, one line when they work again. */
  readonly #outage: OutageLog;

  constructor(private readonly options: SpanExportOptions) {
    this.#observer = options.observer ?? SILENT_OTLP_OBSERVER;
    this.#batchLimit = options.target.batchSize;
    this.#outage = new OutageLog(options.logger, "traces", options.target);
  }

  start(): void {
    this.#started = true;
    for (const owner of this.options.projects()) this.#pending.add(owner.projectId);
    this.#schedule(0);
  }

  /** `projectId`'s span queue may hold spans (a poll committed some, its state was loaded). */
  wake(projectId: string): void {
    this.#pending.add(projectId);
    this.#schedule(0);
  }

  /** Resolves once no export is under way. */
  async idle(): Promise<void> {
    while (this.#running !== undefined) await this.#running;
  }

  /** Stops: an export under way ends (within the timeout); its spans stay queued if unsent. */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.idle();
    await this.#sender?.shutdown();
  }

  #schedule(delayMs: number): void {
    if (!this.#started || this.#stopped || this.#running !== undefined) return;
    const wait = Math.max(delayMs, this.#retryAtMs - this.options.clock.monotonic());
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#running = this.#drain()
        .catch((error: unknown) => {
          // Not expected (a send never rejects); the spans stay queued and are tried again.
          this.options.logger.error(errorFields(error), "the span export failed; it tries again");
          this.#backOff();
        })
        .finally(() => {
          this.#running = undefined;
          if (this.#pending.size > 0) this.#schedule(0);
        });
    }, wait);
    this.#timer.unref();
  }

  /** Exports batches until the queues are empty, or an export fails. */
  async #drain(): Promise<void> {
    while (!this.#stopped) {
      const batch = this.#nextBatch();
      if (batch.length === 0) return;
      const spans = batch.flatMap(({ spans: queued }) => queued.map((q) => q.span));
      this.#sender ??= (await loadWire()).spanSender(this.options.target, this.options.resource);
      const outcome = await this.#sender.send(spans);
      if (outcome.ok) {
        const settled = await this.#settle(batch, (queue, keys) => ({
          queue: removeFromSpanQueue(queue, keys),
        }));
        this.#observer.spansSent(spans.length);
        this.#recovered();
        if (!settled) {
          this.#backOff();
          return;
        }
        continue;
      }
      if (!(await this.#failed(batch, outcome))) return;
    }
  }

  /**
   * The next request's spans: the oldest of each project with queued spans, the projects served
   * in turn so that a busy one cannot hold the others back.
   */
  #nextBatch(): { owner: SpanQueueOwner; spans: QueuedSpan[] }[] {
    const batch: { owner: SpanQueueOwner; spans: QueuedSpan[] }[] = [];
    let room = this.#batchLimit;
    for (const projectId of [...this.#pending]) {
      if (room === 0) break;
      const owner = this.options.owner(projectId);
      const queue = owner?.state?.spans ?? [];
      if (owner === undefined || queue.length === 0) {
        this.#pending.delete(projectId);
        continue;
      }
      const spans = queue.slice(0, room);
      room -= spans.length;
      batch.push({ owner, spans });
      // Served: to the back of the line.
      this.#pending.delete(projectId);
      this.#pending.add(projectId);
    }
    return batch;
  }

  /**
   * Commits a change of each project's queue for the spans of the batch; false when a commit
   * failed (the store out of reach: the spans stay queued and are sent again, with their ids).
   */
  async #settle(
    batch: readonly { owner: SpanQueueOwner; spans: readonly QueuedSpan[] }[],
    change: (
      queue: readonly QueuedSpan[],
      keys: ReadonlySet<string>,
      deadLetters: ProjectState["spanDeadLetters"],
    ) => { queue: QueuedSpan[]; deadLetters?: NonNullable<ProjectState["spanDeadLetters"]> },
  ): Promise<boolean> {
    let all = true;
    for (const { owner, spans } of batch) {
      const keys = new Set(spans.map((q) => spanKey(q.span)));
      try {
        await owner.updateOutbox(this.options.clock.wall(), (state) => {
          const next = change(state.spans ?? [], keys, state.spanDeadLetters);
          return {
            outbox: state.outbox,
            deadLetters: state.deadLetters,
            spanQueue: {
              queue: next.queue,
              deadLetters: next.deadLetters ?? state.spanDeadLetters ?? [],
            },
          };
        });
      } catch (error) {
        all = false;
        this.options.logger.debug(
          { project: owner.projectId, error: error instanceof Error ? error.message : error },
          "the span queue could not be committed; its spans stay queued",
        );
      }
    }
    return all;
  }

  /** After a failed export: whether to go on at once (a smaller batch) or wait. */
  async #failed(
    batch: readonly { owner: SpanQueueOwner; spans: readonly QueuedSpan[] }[],
    failure: Exclude<ExportOutcome, { ok: true }>,
  ): Promise<boolean> {
    // A collector may echo a token back in the body of its refusal.
    const outcome = { ...failure, detail: withoutSecrets(failure.detail, this.options.target) };
    const count = batch.reduce((n, b) => n + b.spans.length, 0);
    this.#observer.exportFailed("traces", outcome.reason);
    if (outcome.reason === "too_large" && count > 1) {
      this.#batchLimit = Math.max(1, Math.floor(count / 2));
      return true;
    }
    if (outcome.reason === "rejected" || outcome.reason === "too_large") {
      this.options.logger.error(
        { spans: count, reason: outcome.reason, detail: outcome.detail },
        "the OpenTelemetry collector refused spans for good; they went to the span dead letters",
      );
      await this.#giveUp(batch, "rejected", `${outcome.reason}: ${outcome.detail}`);
      return true;
    }
    this.#outage.failed(failure);
    await this.#expire();
    this.#backOff();
    return false;
  }

  /** Moves the spans of the batch to the dead letters. */
  async #giveUp(
    batch: readonly { owner: SpanQueueOwner; spans: readonly QueuedSpan[] }[],
    reason: SpanGiveUpReason,
    text: string,
  ): Promise<void> {
    const nowMs = this.options.clock.wall();
    await this.#settle(batch, (queue, keys, deadLetters) =>
      deadLetterSpans(queue, deadLetters ?? [], keys, text, nowMs),
    );
    this.#observer.spansDeadLettered(
      batch.reduce((n, b) => n + b.spans.length, 0),
      reason,
    );
  }

  /** While the collector fails, spans queued longer than `maxAge` go to the dead letters. */
  async #expire(): Promise<void> {
    const since = this.options.clock.wall() - this.options.target.maxAgeMs;
    const old: { owner: SpanQueueOwner; spans: QueuedSpan[] }[] = [];
    for (const projectId of this.#pending) {
      const owner = this.options.owner(projectId);
      const spans = (owner?.state?.spans ?? []).filter((q) => q.queuedAtMs < since);
      if (owner !== undefined && spans.length > 0) old.push({ owner, spans });
    }
    if (old.length === 0) return;
    const count = old.reduce((n, b) => n + b.spans.length, 0);
    this.options.logger.error(
      { spans: count, maxAgeSeconds: this.options.target.maxAgeMs / 1000 },
      "spans waited longer than otlp.traces.maxAge for the collector; they went to the span dead letters",
    );
    await this.#giveUp(old, "expired", "expired: the collector did not take it in time");
  }

  #backOff(): void {
    this.#failures += 1;
    const window = Math.min(MAX_BACKOFF_MS, 1000 * 2 ** (this.#failures - 1));
    const random = this.options.random ?? Math.random;
    this.#retryAtMs = this.options.clock.monotonic() + window * (0.75 + 0.25 * random());
  }

  #recovered(): void {
    this.#failures = 0;
    this.#retryAtMs = 0;
    this.#outage.succeeded();
  }
}
