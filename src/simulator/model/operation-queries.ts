import type { Operation, OperationsPage } from "../../contract/index.js";
import { notFound } from "../errors.js";
import { toIsoMicros } from "../time.js";
import type { ProjectState, World } from "./state.js";
import { operationView, truthView, type TruthOperation } from "./views.js";

function requireProject(world: World, projectId: string): ProjectState {
  const project = world.project(projectId);
  if (project === undefined) throw notFound(`project ${projectId} not found`);
  return project;
}

/** How a page or a record is misshown (fault injection); nothing by default. */
export interface Misshown {
  /** `overlap`: with a cursor, the page starts one record earlier (see OperationLog). */
  readonly overlap?: boolean;
  /** `foreign_project`: every record claims this project id. */
  readonly projectId?: string;
}

/**
 * One page of a project's operations, newest first: at most `limit` records created strictly
 * before `beforeUs` (the decoded cursor), or the newest ones without a cursor.
 *
 * `pagination.cursor` is on every page, the last one included (as in the real API): the
 * creation time of the page's last record, or on an empty page the cursor that was sent (or,
 * without one, the current time, before which nothing exists either). It is always the real
 * creation time, also when the last record is misdated (shows another `created_at`): the next
 * page goes on from the record's place in the log.
 */
export function listOperations(
  world: World,
  projectId: string,
  beforeUs: number | undefined,
  limit: number,
  nowUs: number,
  misshown: Misshown = {},
): OperationsPage {
  const project = requireProject(world, projectId);
  const indices =
    misshown.overlap === true && beforeUs !== undefined
      ? project.log.newestFirstOverlapping(beforeUs, limit)
      : project.log.newestFirst(beforeUs, limit);
  const last = indices.at(-1);
  const cursorUs = last === undefined ? (beforeUs ?? nowUs) : project.log.createdAt(last);
  return {
    operations: indices.map((i) => operationView(project, i, misshown.projectId)),
    pagination: { cursor: toIsoMicros(cursorUs) },
  };
}

export function getOperation(
  world: World,
  projectId: string,
  operationId: string,
  misshown: Misshown = {},
): { operation: Operation } {
  const project = requireProject(world, projectId);
  const index = project.log.indexOf(operationId);
  if (index === undefined) throw notFound(`operation ${operationId} not found`);
  return { operation: operationView(project, index, misshown.projectId) };
}

export function operationTruth(world: World, projectId: string): { operations: TruthOperation[] } {
  // A deleted project's log stays readable here (the API answers 404 for it).
  const project = world.anyProject(projectId);
  if (project === undefined) throw notFound(`project ${projectId} not found`);
  return { operations: truthView(project) };
}
