/** The HTTP methods the API uses. */
export type HttpMethod = "GET" | "POST" | "PATCH" | "DELETE";

/**
 * Stable names of the API's calls. Errors and events carry them instead of URLs, so that ids in
 * paths never become metric label values and a route reads the same for every project.
 */
export type RouteName =
  | "listOperations"
  | "getOperation"
  | "listProjects"
  | "getProject"
  | "listBranches"
  | "getOrganization"
  | "listEndpoints"
  | "getEndpoint"
  | "createEndpoint"
  | "updateEndpoint"
  | "deleteEndpoint"
  | "startEndpoint"
  | "suspendEndpoint"
  | "restartEndpoint";

/** Path segments are encoded, so an id can never change which route a request reaches. */
const seg = encodeURIComponent;

export const paths = {
  projects: () => "/projects",
  project: (projectId: string) => `/projects/${seg(projectId)}`,
  branches: (projectId: string) => `/projects/${seg(projectId)}/branches`,
  organization: (orgId: string) => `/organizations/${seg(orgId)}`,
  operations: (projectId: string) => `/projects/${seg(projectId)}/operations`,
  operation: (projectId: string, operationId: string) =>
    `/projects/${seg(projectId)}/operations/${seg(operationId)}`,
  endpoints: (projectId: string) => `/projects/${seg(projectId)}/endpoints`,
  endpoint: (projectId: string, endpointId: string) =>
    `/projects/${seg(projectId)}/endpoints/${seg(endpointId)}`,
  endpointAction: (
    projectId: string,
    endpointId: string,
    action: "start" | "suspend" | "restart",
  ) => `/projects/${seg(projectId)}/endpoints/${seg(endpointId)}/${action}`,
} as const;
