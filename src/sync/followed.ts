/**
 * An operation a poll follows, as it travels through the poll (with the page cursor it was last
 * read at) and as the state keeps it (with the alerts raised for it and where they went).
 */
import type { Operation } from "../contract/index.js";
import type { ProjectState } from "../store/index.js";
import type { AlertedTo } from "./poll-types.js";
import type { TrackedOperation } from "./tracker.js";

/** A tracked operation as it travels through one poll, with the page cursor it was read at. */
export type Followed = TrackedOperation & { readonly cursor?: string | undefined };

/** Handler for each record read; `fresh` when the walk found it new (see `walkLog`). */
export type RecordVisitor = (
  record: Operation,
  pageCursor: string | undefined,
  fresh: boolean,
) => void;

export function fromStored({ alerted: _alerted, ...t }: ProjectState["tracked"][number]): Followed {
  return {
    ...t,
    branchId: t.branchId,
    endpointId: t.endpointId,
    error: t.error,
    watchUntilMs: t.watchUntilMs,
    cursor: t.cursor,
  };
}

export function toStored(
  t: Followed,
  alerted: readonly AlertedTo[],
): ProjectState["tracked"][number] {
  const stored: ProjectState["tracked"][number] = {
    id: t.id,
    projectId: t.projectId,
    action: t.action,
    status: t.status,
    failuresCount: t.failuresCount,
    createdAtMs: t.createdAtMs,
    updatedAtMs: t.updatedAtMs,
    durationMs: t.durationMs,
    stuck: t.stuck,
    failed: t.failed,
  };
  if (t.branchId !== undefined) stored.branchId = t.branchId;
  if (t.endpointId !== undefined) stored.endpointId = t.endpointId;
  if (t.error !== undefined) stored.error = t.error;
  if (t.watchUntilMs !== undefined) stored.watchUntilMs = t.watchUntilMs;
  if (t.stuckStatus !== undefined) stored.stuckStatus = t.stuckStatus;
  if (t.cursor !== undefined) stored.cursor = t.cursor;
  if (alerted.length > 0) {
    stored.alerted = alerted.map((a) => ({
      id: a.id,
      sinks: [...a.sinks],
      ...(a.silenced === undefined ? {} : { silenced: a.silenced.map((q) => ({ ...q })) }),
    }));
  }
  return stored;
}
