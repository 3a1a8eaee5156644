import {
  createBranchRequestSchema,
  createEndpointRequestSchema,
  createProjectRequestSchema,
  OPERATIONS_LIMIT,
  OPTIONAL_OPERATION_FIELDS,
  PROJECTS_LIMIT,
  RESOURCE_ID_PATTERN,
  updateEndpointRequestSchema,
  type Operation,
} from "../../contract/index.js";
import { badRequest, notFound } from "../errors.js";
import { accountOf } from "../model/accounts.js";
import { BRANCH_ALREADY_DELETED } from "../model/branch-service.js";
import type { ControlPlane } from "../model/control-plane.js";
import { organizationView } from "../model/project-views.js";
import { ALREADY_DELETED } from "../model/endpoint-service.js";
import { parseIsoMicros } from "../time.js";
import { Router } from "./router.js";
import { integerQuery, param, type Handler, type RequestContext } from "./request.js";

/**
 * Names of the API routes, as used by fault injection, rate limiting and `/_sim/stats`.
 * Requests under the API path that match none are counted as `unknown`.
 */
export const API_ROUTE_NAMES = [
  "listProjects",
  "createProject",
  "getProject",
  "deleteProject",
  "listBranches",
  "createBranch",
  "getBranch",
  "deleteBranch",
  "listBranchEndpoints",
  "listOperations",
  "getOperation",
  "listEndpoints",
  "createEndpoint",
  "getEndpoint",
  "updateEndpoint",
  "deleteEndpoint",
  "startEndpoint",
  "suspendEndpoint",
  "restartEndpoint",
  "getOrganization",
] as const;
export type ApiRouteName = (typeof API_ROUTE_NAMES)[number];
export const UNKNOWN_ROUTE = "unknown";

/** The seed does not give the operations list's default page size; the projects list's is 10. */
const DEFAULT_OPERATIONS_LIMIT = 10;

/** The `org_id` query parameter, checked against the real API's pattern. */
function orgIdQuery(request: RequestContext): string | undefined {
  const raw = request.query.get("org_id");
  if (raw === null) return undefined;
  if (!RESOURCE_ID_PATTERN.test(raw)) throw badRequest("org_id must match ^[a-z0-9-]{1,60}$");
  return raw;
}

function operationsCursor(request: RequestContext): number | undefined {
  const raw = request.query.get("cursor");
  if (raw === null) return undefined;
  const us = parseIsoMicros(raw);
  if (us === undefined) throw badRequest("cursor is not a value returned by this API");
  return us;
}

/**
 * The cursor each list (per route and project) was last requested with, for `cursor_cycle`.
 * Only requests that were answered a page are remembered: one entry per project at most.
 */
class CursorMemory {
  private readonly last = new Map<string, string | undefined>();

  /** Remembers `cursor` as the list's latest; returns the one it replaces. */
  swap(key: string, cursor: string | undefined): string | undefined {
    const previous = this.last.get(key);
    this.last.set(key, cursor);
    return previous;
  }
}

/** What a list answer's `pagination` becomes under a fault: dropped or another cursor. */
type PaginationFault = "no_pagination" | { readonly cursor: string } | undefined;

interface ListRequest {
  readonly answerFault: RequestContext["answerFault"];
  /** The cursor the request was sent with. */
  readonly cursor: string | undefined;
  /** The one the previous request of the same list was sent with. */
  readonly previous: string | undefined;
  /** The page is full (`limit` items). */
  readonly full: boolean;
  /** Whether cursor `a` lies below `b` (further down the list). */
  readonly isBelow: (a: string, b: string) => boolean;
}

/**
 * `no_pagination` drops the object. `cursor_cycle` gives a full page requested with a cursor,
 * instead of its own cursor, the cursor the previous request of the same list was sent with
 * (unchanged when there was none), or the request's own when that one lies below the page's own
 * (following it would skip items). A client following cursors thus goes back up: from the
 * top, c1 → c2 → c1 → ….
 */
function paginationFault(
  list: ListRequest,
  pagination: { readonly cursor: string } | undefined,
): PaginationFault {
  if (list.answerFault === "no_pagination") return "no_pagination";
  if (list.answerFault !== "cursor_cycle" || list.cursor === undefined) return undefined;
  if (pagination === undefined || !list.full) return undefined;
  const { previous } = list;
  if (previous === undefined) return undefined;
  return { cursor: list.isBelow(previous, pagination.cursor) ? list.cursor : previous };
}

/** A list answer with its `pagination` object dropped or its cursor replaced. */
function alterPagination<
  T extends { readonly pagination?: { readonly cursor: string } | undefined },
>(page: T, fault: PaginationFault): T {
  if (fault === undefined) return page;
  const { pagination: _dropped, ...rest } = page;
  return (fault === "no_pagination" ? rest : { ...rest, pagination: fault }) as T;
}

/** A 200 answer with `body`. */
function ok(body: unknown): ReturnType<Handler> {
  return { status: 200, body };
}

/** The `/api/v2` routes (paths relative to it). */
export function apiRouter(plane: ControlPlane): Router<Handler> {
  const ids = (r: RequestContext): [string, string] => [
    param(r, "project_id"),
    param(r, "endpoint_id"),
  ];
  const router = new Router<Handler>();
  const cursors = new CursorMemory();
  const route = (method: string, path: string, name: ApiRouteName, handler: Handler): void => {
    // A project the key cannot see answers exactly as an unknown one.
    const scoped: Handler = path.includes(":project_id")
      ? (r) => {
          const projectId = param(r, "project_id");
          if (!plane.projects.visible(r.caller, projectId)) {
            throw notFound(`project ${projectId} not found`);
          }
          return handler(r);
        }
      : handler;
    router.add(method, path, name, scoped);
  };
  const branchIds = (r: RequestContext): [string, string] => [
    param(r, "project_id"),
    param(r, "branch_id"),
  ];

  route("GET", "/projects", "listProjects", listProjects(plane, cursors));
  route("POST", "/projects", "createProject", (r) => ({
    status: 201,
    body: plane.projects.create(r.caller, r.json(createProjectRequestSchema), orgIdQuery(r)),
  }));
  route("GET", "/organizations/:org_id", "getOrganization", (r) => {
    const org = plane.accounts.visibleOrganization(r.caller, param(r, "org_id"));
    return ok(organizationView(org, plane.accounts.createdUsOf(org.id)));
  });
  route("GET", "/projects/:project_id", "getProject", (r) =>
    ok(plane.projects.get(param(r, "project_id"))),
  );
  route("DELETE", "/projects/:project_id", "deleteProject", (r) =>
    ok(plane.projects.delete(param(r, "project_id"))),
  );
  route("GET", "/projects/:project_id/branches", "listBranches", (r) =>
    ok(plane.branches.list(param(r, "project_id"))),
  );
  route("GET", "/projects/:project_id/branches/:branch_id", "getBranch", (r) =>
    ok(plane.branches.get(...branchIds(r))),
  );
  route("GET", "/projects/:project_id/branches/:branch_id/endpoints", "listBranchEndpoints", (r) =>
    ok(plane.branches.endpoints(...branchIds(r))),
  );
  route("POST", "/projects/:project_id/branches", "createBranch", (r) => ({
    status: 201,
    body: plane.branches.create(param(r, "project_id"), r.json(createBranchRequestSchema)),
  }));
  route("DELETE", "/projects/:project_id/branches/:branch_id", "deleteBranch", (r) => {
    const result = plane.branches.delete(...branchIds(r));
    return result === BRANCH_ALREADY_DELETED ? { status: 204 } : ok(result);
  });
  route(
    "GET",
    "/projects/:project_id/operations",
    "listOperations",
    listOperations(plane, cursors),
  );
  route("GET", "/projects/:project_id/operations/:operation_id", "getOperation", (r) => {
    const answer = plane.getOperation(param(r, "project_id"), param(r, "operation_id"), {
      foreignProject: r.answerFault === "foreign_project",
    });
    return ok(
      r.answerFault === "null_fields"
        ? { ...answer, operation: withNullFields(answer.operation) }
        : answer,
    );
  });
  route("GET", "/projects/:project_id/endpoints", "listEndpoints", (r) =>
    ok(plane.endpoints.list(param(r, "project_id"))),
  );
  route("POST", "/projects/:project_id/endpoints", "createEndpoint", (r) => ({
    status: 201,
    body: plane.endpoints.create(param(r, "project_id"), r.json(createEndpointRequestSchema)),
  }));
  route("GET", "/projects/:project_id/endpoints/:endpoint_id", "getEndpoint", (r) =>
    ok(plane.endpoints.get(...ids(r))),
  );
  route("PATCH", "/projects/:project_id/endpoints/:endpoint_id", "updateEndpoint", (r) =>
    ok(plane.endpoints.update(...ids(r), r.json(updateEndpointRequestSchema))),
  );
  route("DELETE", "/projects/:project_id/endpoints/:endpoint_id", "deleteEndpoint", (r) => {
    const result = plane.endpoints.delete(...ids(r));
    return result === ALREADY_DELETED ? { status: 204 } : ok(result);
  });
  route("POST", "/projects/:project_id/endpoints/:endpoint_id/start", "startEndpoint", (r) =>
    ok(plane.endpoints.start(...ids(r))),
  );
  route("POST", "/projects/:project_id/endpoints/:endpoint_id/suspend", "suspendEndpoint", (r) =>
    ok(plane.endpoints.suspend(...ids(r))),
  );
  route("POST", "/projects/:project_id/endpoints/:endpoint_id/restart", "restartEndpoint", (r) =>
    ok(plane.endpoints.restart(...ids(r))),
  );
  return router;
}

/** `GET /projects`: a page of the caller's projects (or an organisation's), with its faults. */
function listProjects(plane: ControlPlane, cursors: CursorMemory): Handler {
  return (r) => {
    const cursor = r.query.get("cursor") ?? undefined;
    const limit = integerQuery(r, "limit", PROJECTS_LIMIT);
    const orgId = orgIdQuery(r);
    const page = plane.projects.list(r.caller, orgId, cursor, limit);
    const position = (id: string): number => plane.world.accountPositionOf(id) ?? -1;
    const fault = paginationFault(
      {
        answerFault: r.answerFault,
        cursor,
        previous: cursors.swap(`listProjects ${accountOf(r.caller)} ${orgId ?? ""}`, cursor),
        full: page.projects.length === limit,
        isBelow: (a, b) => position(a) > position(b),
      },
      page.pagination,
    );
    return ok(alterPagination(page, fault));
  };
}

/** `GET /projects/{id}/operations`: a page of the log, newest first, with its faults. */
function listOperations(plane: ControlPlane, cursors: CursorMemory): Handler {
  return (r) => {
    const projectId = param(r, "project_id");
    const limit = integerQuery(r, "limit", {
      ...OPERATIONS_LIMIT,
      default: DEFAULT_OPERATIONS_LIMIT,
    });
    const cursorUs = operationsCursor(r);
    const page = plane.listOperations(projectId, cursorUs, limit, {
      overlap: r.answerFault === "overlap",
      foreignProject: r.answerFault === "foreign_project",
    });
    const cursor = r.query.get("cursor") ?? undefined;
    const us = (c: string): number => parseIsoMicros(c) ?? Number.NEGATIVE_INFINITY;
    const fault = paginationFault(
      {
        answerFault: r.answerFault,
        cursor,
        previous: cursors.swap(`listOperations ${projectId}`, cursor),
        full: page.operations.length === limit,
        isBelow: (a, b) => us(a) < us(b),
      },
      page.pagination,
    );
    const answered = alterPagination(page, fault);
    return ok(
      r.answerFault === "null_fields"
        ? { ...answered, operations: answered.operations.map(withNullFields) }
        : answered,
    );
  };
}

/** The `null_fields` fault: every optional field a record lacks is sent as `null`. */
function withNullFields(operation: Operation): Operation {
  const out: Operation = { ...operation };
  for (const field of OPTIONAL_OPERATION_FIELDS) out[field] ??= null;
  return out;
}
