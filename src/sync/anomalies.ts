/**
 * What a poll found odd in the API's answers and worked around (a record read twice, out of
 * order, dated in the future, claiming another project, with an unbounded label or error text).
 * None of these fails the poll; each is counted and logged, with one example operation.
 */
import type { BoundKind } from "./record-bounds.js";
import type { WalkAnomalyKind } from "./walk.js";

export type AnomalyKind = WalkAnomalyKind | BoundKind | "future_record";

export interface AnomalyCount {
  readonly kind: AnomalyKind;
  readonly count: number;
  /** The id of one operation it concerned. */
  readonly example: string;
}

/** What each anomaly means and what the exporter did about it, for the log. */
export const ANOMALY_MEANING: Readonly<Record<AnomalyKind, string>> = {
  duplicate_record: "a record appeared twice in one walk (overlapping pages); counted once",
  out_of_order_record: "a record lay out of the log's newest-first order; the walk went on past it",
  future_record:
    "a record is dated beyond the future tolerance; counted once, it does not move the checkpoint",
  foreign_project:
    "a record in this project's log claimed another project; attributed to this project",
  label_overflow:
    "an action or status is not label-shaped, or past the limit of undocumented values; exported as other",
  error_truncated: "a record's error text was longer than the limit; kept cut short",
  null_field:
    "a record had null in an optional field (branch_id, endpoint_id, error, …); taken as absent",
};

/** Counts a poll's anomalies by kind. */
export class AnomalyTally {
  private readonly counts = new Map<AnomalyKind, { count: number; example: string }>();

  add(kind: AnomalyKind, operationId: string): void {
    const entry = this.counts.get(kind);
    if (entry === undefined) this.counts.set(kind, { count: 1, example: operationId });
    else entry.count += 1;
  }

  list(): AnomalyCount[] {
    return [...this.counts].map(([kind, { count, example }]) => ({ kind, count, example }));
  }
}
