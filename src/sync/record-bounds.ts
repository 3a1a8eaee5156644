/**
 * What the engine keeps of a record is bounded, whatever the API sends: the record belongs to the
 * project whose log was read, its `action` and `status` become label values only when they look
 * like one and while the project has not collected too many undocumented ones, its error text is
 * cut to a fixed length, and an optional field sent as `null` is taken as absent. Pure: the caller
 * reports what was changed.
 */
import {
  DOCUMENTED_OPERATION_ACTIONS,
  END_STATUSES,
  OPEN_STATUSES,
  OPTIONAL_OPERATION_FIELDS,
  type Operation,
} from "../contract/index.js";

/** The label value that stands for every value beyond the bounds. */
export const OTHER_VALUE = "other";

/** What a label value may look like: the API's own are lowercase words joined by `_`. */
const LABEL_VALUE = /^[a-z][a-z0-9_]{0,63}$/;

/** The longest error text kept from a record (longer ones are cut, with a marker). */
export const MAX_ERROR_LENGTH = 2_000;

const DOCUMENTED: Record<"action" | "status", ReadonlySet<string>> = {
  action: new Set(DOCUMENTED_OPERATION_ACTIONS),
  status: new Set<string>([...END_STATUSES, ...OPEN_STATUSES]),
};

/** Why a record was changed before the engine kept it. */
export type BoundKind = "foreign_project" | "label_overflow" | "error_truncated" | "null_field";

/**
 * The undocumented values of `action` and of `status` one project may export: those it already
 * has (in its committed state) and new ones while fewer than `max` are held. Values that are not
 * label-shaped, or arrive beyond the limit, become `other`.
 */
export class LabelBudget {
  private readonly held: Record<"action" | "status", Set<string>> = {
    action: new Set(),
    status: new Set(),
  };

  constructor(
    private readonly max: number,
    existing: Iterable<{ readonly action: string; readonly status?: string }> = [],
  ) {
    for (const { action, status } of existing) {
      this.remember("action", action);
      if (status !== undefined) this.remember("status", status);
    }
  }

  /** The label value for `value`; undefined when it is kept as it is. */
  bound(label: "action" | "status", value: string): string | undefined {
    if (DOCUMENTED[label].has(value) || this.held[label].has(value)) return undefined;
    if (LABEL_VALUE.test(value) && this.held[label].size < this.max) {
      this.held[label].add(value);
      return undefined;
    }
    return OTHER_VALUE;
  }

  private remember(label: "action" | "status", value: string): void {
    if (value !== OTHER_VALUE && !DOCUMENTED[label].has(value)) this.held[label].add(value);
  }
}

export interface BoundRecord {
  readonly record: Operation;
  /** What was changed, if anything. */
  readonly changes: readonly BoundKind[];
}

/**
 * The record as the engine keeps it. The common case (everything within bounds) returns the
 * record itself, without a copy.
 */
export function boundRecord(
  record: Operation,
  projectId: string,
  labels: LabelBudget,
): BoundRecord {
  const action = labels.bound("action", record.action);
  const status = labels.bound("status", record.status);
  const foreign = record.project_id !== projectId;
  const longError = typeof record.error === "string" && record.error.length > MAX_ERROR_LENGTH;
  const nulls = OPTIONAL_OPERATION_FIELDS.some((field) => record[field] === null);
  if (action === undefined && status === undefined && !foreign && !longError && !nulls) {
    return { record, changes: [] };
  }
  const changes: BoundKind[] = [];
  if (foreign) changes.push("foreign_project");
  if (action !== undefined || status !== undefined) changes.push("label_overflow");
  if (longError) changes.push("error_truncated");
  if (nulls) changes.push("null_field");
  const kept: Operation = {
    ...record,
    project_id: projectId,
    action: action ?? record.action,
    status: status ?? record.status,
    ...(longError ? { error: truncate(record.error ?? "", MAX_ERROR_LENGTH) } : {}),
  };
  // An optional field sent as null is absent.
  return {
    record: nulls
      ? (Object.fromEntries(Object.entries(kept).filter(([, v]) => v !== null)) as Operation)
      : kept,
    changes,
  };
}

/** The first `max` characters of `text`, marked as cut with the length it had. */
export function truncate(text: string, max: number): string {
  if (text.length <= max) return text;
  return `${text.slice(0, max)}… [truncated: ${text.length} characters]`;
}
