import type { EndStatus } from "../contract/index.js";
import type { OperationSnapshot } from "../store/index.js";

export type { OperationSnapshot };

/**
 * A change the tracker found between the committed view of an operation and a fresh record.
 * One observation may yield several (for example a failure, a retry and a finish all at once
 * when the operation moved on between two polls).
 */
export type Transition =
  /** An operation seen for the first time. */
  | { readonly kind: "new"; readonly op: OperationSnapshot }
  /** The status differs from the one last seen. */
  | { readonly kind: "status_changed"; readonly op: OperationSnapshot; readonly from: string }
  /**
   * The operation arrived at an end status `count` times since it was last seen (more than
   * once only for `failed`, when `failures_count` shows failures that fell between two reads).
   */
  | {
      readonly kind: "ended";
      readonly op: OperationSnapshot;
      readonly status: EndStatus;
      readonly count: number;
      /** Duration of each of those arrivals, in seconds (see `tracker.ts` for inferred ones). */
      readonly durationSeconds: number;
    }
  /** The service retried the operation `by` more times after failures (see `retriesSoFar`). */
  | { readonly kind: "retried"; readonly op: OperationSnapshot; readonly by: number }
  /** The operation has been open for longer than its action's stuck threshold. */
  | { readonly kind: "stuck"; readonly op: OperationSnapshot; readonly openSeconds: number }
  /** A failed or stuck operation finished after all. */
  | {
      readonly kind: "recovered";
      readonly op: OperationSnapshot;
      readonly after: "failed" | "stuck";
      /** The status and failures count of the failure (or stuck state) it recovers from. */
      readonly resolves: { readonly status: string; readonly failuresCount: number };
    };

export type TransitionKind = Transition["kind"];
