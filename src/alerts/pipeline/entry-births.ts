/**
 * When each outbox entry was raised, on the monotonic clock: the grouping window, the maximum
 * age and the delivery latency are durations, and a step of the wall clock must not shorten or
 * stretch them. An entry raised in this process is born when first seen; one read back after a
 * restart is born as long ago as its stored wall time says (never in the future), the best that
 * can be known across a restart.
 */
import type { Clock } from "../../clock.js";
import type { OutboxEntry } from "../../store/index.js";

/** How often entries that left every outbox are forgotten (monotonic ms). */
const PRUNE_EVERY_MS = 60_000;

export class EntryBirths {
  readonly #births = new Map<string, number>();
  #prunedAt: number;

  constructor(private readonly clock: Clock) {
    this.#prunedAt = clock.monotonic();
  }

  /** The entry's birth in monotonic ms. */
  birthOf(entry: OutboxEntry): number {
    const id = entry.alert.id;
    let birth = this.#births.get(id);
    if (birth === undefined) {
      birth = this.clock.monotonic() - Math.max(0, this.clock.wall() - entry.createdAtMs);
      this.#births.set(id, birth);
    }
    return birth;
  }

  /** How long the entry has waited, in ms. */
  ageOf(entry: OutboxEntry): number {
    return this.clock.monotonic() - this.birthOf(entry);
  }

  /** Forgets, now and then, the entries no longer in any of `outboxes`. */
  prune(outboxes: () => Iterable<readonly OutboxEntry[]>): void {
    const now = this.clock.monotonic();
    if (now - this.#prunedAt < PRUNE_EVERY_MS) return;
    this.#prunedAt = now;
    const live = new Set<string>();
    for (const outbox of outboxes()) for (const entry of outbox) live.add(entry.alert.id);
    for (const id of this.#births.keys()) if (!live.has(id)) this.#births.delete(id);
  }
}
