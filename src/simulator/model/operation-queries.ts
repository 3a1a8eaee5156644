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

/**
 * One page of a project's operations, newest first: at most `limit` records created strictly
 * before `beforeUs` (the decoded cursor), or the newest ones without a cursor.
 *
 * `pagination.cursor` is on every page, the last one included (as in the real API): the
 * creation time of the page's last record, or on an empty page the cursor that was sent (or,
 * without one, the current time, before which nothing exists either).
 */
export function listOperations(
  world: World,
  projectId: string,
  beforeUs: number | undefined,
  limit: number,
  nowUs: number,
): OperationsPage {
  const project = requireProject(world, projectId);
  const indices = project.log.newestFirst(beforeUs, limit);
  const last = indices.at(-1);
  const cursorUs = last === undefined ? (beforeUs ?? nowUs) : project.log.createdAt(last);
  return {
    operations: indices.map((i) => operationView(project, i)),
    pagination: { cursor: toIsoMicros(cursorUs) },
  };
}

export function getOperation(
  world: World,
  projectId: string,
  operationId: string,
): { operation: Operation } {
  const project = requireProject(world, projectId);
  const index = project.log.indexOf(operationId);
  if (index === undefined) throw notFound(`operation ${operationId} not found`);
  return { operation: operationView(project, index) };
}

export function operationTruth(world: World, projectId: string): { operations: TruthOperation[] } {
  return { operations: truthView(requireProject(world, projectId)) };
}
