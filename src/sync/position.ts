/**
 * Positions in a newest-first operations log whose records carry whole-second `created_at`
 * values. Many records can share a second and a page boundary can split them, so a position
 * is a second plus the ids already seen in that second (ties resolved by operation id).
 */
import type { Operation } from "../contract/index.js";
import type { Position } from "../store/index.js";
import { createdAtMs } from "./timestamps.js";

/** A position below every record: from it, every record is new. */
export const BOTTOM: Position = { second: 0, ids: [] };

export function secondOf(record: Pick<Operation, "created_at">): number {
  return Math.floor(createdAtMs(record) / 1000);
}

/** Where a record lies relative to a position. */
export type Placement = "above" | "at" | "below";

/**
 * "above": newer than the position (not yet walked). "at": in the position's second and
 * already seen. "below": in an earlier second. A walk stops at the first record that is not
 * above: the log is ordered by creation, so everything after it was there when the position
 * was committed, and was walked then.
 */
export function place(record: Operation, position: Position, ids: ReadonlySet<string>): Placement {
  const second = secondOf(record);
  if (second > position.second) return "above";
  if (second < position.second) return "below";
  return ids.has(record.id) ? "at" : "above";
}

/**
 * Collects the position of the newest records of a walk: the newest second among them (not
 * necessarily the first record's, when the log is out of order) and every id seen in it.
 */
export class TopCollector {
  private second: number | undefined;
  private ids: string[] = [];

  add(record: Operation): void {
    const s = secondOf(record);
    if (this.second === undefined || s > this.second) {
      this.second = s;
      this.ids = [record.id];
    } else if (s === this.second) {
      this.ids.push(record.id);
    }
  }

  /** The position of the newest records seen, merged with `floor` if in the same second. */
  position(floor: Position): Position | undefined {
    if (this.second === undefined) return undefined;
    if (this.second < floor.second) return floor;
    if (this.second === floor.second) {
      return { second: floor.second, ids: [...new Set([...floor.ids, ...this.ids])] };
    }
    return { second: this.second, ids: [...this.ids] };
  }
}
