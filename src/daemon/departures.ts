/**
 * Projects that discovery no longer finds: they stop being polled at once, and their series
 * (and status-page rows) stay for a grace period, so that a project missing from one listing,
 * or deleted, does not vanish from dashboards between two scrapes. A project found again
 * before the grace ends is simply watched again, from its kept state. Pure bookkeeping: the
 * caller says when and what.
 */
export class Departures {
  /** Each departed project and when it departed (monotonic ms). */
  readonly #since = new Map<string, number>();

  /** `ids` departed at `nowMs` (one already departed keeps its first time). */
  departed(ids: Iterable<string>, nowMs: number): void {
    for (const id of ids) if (!this.#since.has(id)) this.#since.set(id, nowMs);
  }

  /** `ids` are watched again. */
  returned(ids: Iterable<string>): void {
    for (const id of ids) this.#since.delete(id);
  }

  /** The departed projects still within `graceMs`; forgets the others. */
  lingering(nowMs: number, graceMs: number): string[] {
    const out: string[] = [];
    for (const [id, since] of this.#since) {
      if (nowMs - since < graceMs) out.push(id);
      else this.#since.delete(id);
    }
    return out;
  }

  /** When the next grace ends (monotonic ms), if any project lingers. */
  nextExpiryMs(graceMs: number): number | undefined {
    let next: number | undefined;
    for (const since of this.#since.values()) next = Math.min(next ?? Infinity, since + graceMs);
    return next;
  }
}
