import {
  createEndpointRequestSchema,
  OPERATIONS_LIMIT,
  PROJECTS_LIMIT,
  updateEndpointRequestSchema,
} from "../../contract/index.js";
import { badRequest } from "../errors.js";
import type { ControlPlane } from "../model/control-plane.js";
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
] as const;
export type ApiRouteName = (typeof API_ROUTE_NAMES)[number];
export const UNKNOWN_ROUTE = "unknown";

/** The seed does not give the operations list's default page size; the projects list's is 10. */
const DEFAULT_OPERATIONS_LIMIT = 10;

function operationsCursor(request: RequestContext): number | undefined {
  const raw = request.query.get("cursor");
  if (raw === null) return undefined;
  const us = parseIsoMicros(raw);
  if (us === undefined) throw badRequest("cursor is not a value returned by this API");
  return us;
}

/** The `/api/v2` routes (paths relative to it). */
export function apiRouter(plane: ControlPlane): Router<Handler> {
  const ok = (body: unknown): ReturnType<Handler> => ({ status: 200, body });
  const ids = (r: RequestContext): [string, string] => [
    param(r, "project_id"),
    param(r, "endpoint_id"),
  ];
  const router = new Router<Handler>();
  const route = (method: string, path: string, name: ApiRouteName, handler: Handler): void => {
    router.add(method, path, name, handler);
  };

  route("GET", "/projects", "listProjects", (r) => {
    const cursor = r.query.get("cursor") ?? undefined;
    return ok(plane.listProjects(cursor, integerQuery(r, "limit", PROJECTS_LIMIT)));
  });
  route("GET", "/projects/:project_id/operations", "listOperations", (r) => {
    const limit = integerQuery(r, "limit", {
      ...OPERATIONS_LIMIT,
      default: DEFAULT_OPERATIONS_LIMIT,
    });
    return ok(plane.listOperations(param(r, "project_id"), operationsCursor(r), limit));
  });
  route("GET", "/projects/:project_id/operations/:operation_id", "getOperation", (r) =>
    ok(plane.getOperation(param(r, "project_id"), param(r, "operation_id"))),
  );
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
