/**
 * The client's endpoint calls: reading a project's compute endpoints, and the calls that change
 * one (create, update, delete, start, suspend, restart), each answering the endpoint and the
 * operations the change started.
 */
import { z } from "zod";
import {
  compiledEndpointsResponseSchema,
  endpointOperationsResponseSchema,
  endpointSchema,
  type EndpointOperationsResponse,
} from "../contract/index.js";
import type { Call } from "./call.js";
import type { ApiClient, CallOptions, EndpointAction } from "./client.js";
import { paths, type RouteName } from "./routes.js";

/** `GET /projects/{project_id}/endpoints/{endpoint_id}` (real API). */
const endpointResponseSchema = z.object({ endpoint: endpointSchema });

/** The client's calls whose route names an endpoint (`listEndpoints` … `restartEndpoint`). */
export type EndpointCalls = Pick<ApiClient, Extract<RouteName, `${string}Endpoint${string}`>>;

export function endpointCalls(call: Call): EndpointCalls {
  /** The calls that change an endpoint all answer `{endpoint, operations}`. */
  const endpointChange = (
    route: RouteName,
    method: "POST" | "PATCH",
    path: string,
    body: unknown,
    callOptions: CallOptions | undefined,
  ): Promise<EndpointOperationsResponse> =>
    call({
      route,
      method,
      path,
      body,
      schema: endpointOperationsResponseSchema,
      signal: callOptions?.signal,
    });

  /** `POST …/endpoints/{id}/{action}`: no body, the same answer as every change. */
  const endpointAction =
    (route: RouteName, action: "start" | "suspend" | "restart"): EndpointAction =>
    (projectId, endpointId, callOptions) =>
      endpointChange(
        route,
        "POST",
        paths.endpointAction(projectId, endpointId, action),
        undefined,
        callOptions,
      );

  return {
    async listEndpoints(projectId, callOptions) {
      const body = await call({
        route: "listEndpoints",
        method: "GET",
        path: paths.endpoints(projectId),
        schema: compiledEndpointsResponseSchema,
        signal: callOptions?.signal,
      });
      return body.endpoints;
    },
    async getEndpoint(projectId, endpointId, callOptions) {
      const body = await call({
        route: "getEndpoint",
        method: "GET",
        path: paths.endpoint(projectId, endpointId),
        schema: endpointResponseSchema,
        signal: callOptions?.signal,
      });
      return body.endpoint;
    },
    createEndpoint: (projectId, endpoint, callOptions) =>
      endpointChange(
        "createEndpoint",
        "POST",
        paths.endpoints(projectId),
        { endpoint },
        callOptions,
      ),
    updateEndpoint: (projectId, endpointId, changes, callOptions) =>
      endpointChange(
        "updateEndpoint",
        "PATCH",
        paths.endpoint(projectId, endpointId),
        { endpoint: changes },
        callOptions,
      ),
    deleteEndpoint: (projectId, endpointId, callOptions) =>
      call({
        route: "deleteEndpoint",
        method: "DELETE",
        path: paths.endpoint(projectId, endpointId),
        schema: endpointOperationsResponseSchema.nullable(),
        signal: callOptions?.signal,
      }),
    startEndpoint: endpointAction("startEndpoint", "start"),
    suspendEndpoint: endpointAction("suspendEndpoint", "suspend"),
    restartEndpoint: endpointAction("restartEndpoint", "restart"),
  };
}
