/** Shared steps of the simulator's tests (not a test file itself). */
import { expect } from "vitest";
import {
  errorBodySchema,
  endpointOperationsResponseSchema,
  endpointsResponseSchema,
  operationResponseSchema,
  operationsPageSchema,
  type Endpoint,
  type EndpointOperationsResponse,
  type Operation,
  type OperationsPage,
} from "../../src/contract/index.js";
import type { HttpResult, TestSimulator } from "../support/simulator.js";

export interface ReadyProject {
  readonly projectId: string;
  readonly branchIds: string[];
  /** The primary branch's read-write endpoint, active. */
  readonly endpoint: Endpoint;
}

/** Asserts a status and returns the body. */
export function expectStatus<T>(result: HttpResult<T>, status: number): T {
  expect(result.status, result.text).toBe(status);
  return result.body;
}

/**
 * Asserts that a call is refused with `status` and the error body's `code`; returns the error
 * message. `apiKey` picks another key than the simulator's.
 */
export async function expectApiError(
  t: TestSimulator,
  method: string,
  path: string,
  status: number,
  code: string,
  body?: unknown,
  apiKey?: string,
): Promise<string> {
  const result = await t.api(method, path, {
    ...(body === undefined ? {} : { body }),
    ...(apiKey === undefined ? {} : { apiKey }),
  });
  expect(result.status, `${method} ${path} ${JSON.stringify(body)}: ${result.text}`).toBe(status);
  const error = errorBodySchema.parse(result.body);
  expect(error.code).toBe(code);
  return error.message;
}

/** A project whose primary endpoint has started (5 simulated seconds after creation). */
export async function readyProject(
  t: TestSimulator,
  plan: "free" | "paid" = "paid",
  branches = 1,
): Promise<ReadyProject> {
  const created = await t.sim.createProject({ plan, branches });
  await t.sim.advance(5);
  const endpoints = await listEndpoints(t, created.project.id);
  const endpoint = endpoints[0];
  if (endpoint === undefined) throw new Error("project has no endpoint");
  expect(endpoint.current_state).toBe("active");
  return {
    projectId: created.project.id,
    branchIds: created.branches.map((b) => b.id),
    endpoint,
  };
}

export async function listEndpoints(t: TestSimulator, projectId: string): Promise<Endpoint[]> {
  const result = await t.api("GET", `/projects/${projectId}/endpoints`);
  return endpointsResponseSchema.parse(expectStatus(result, 200)).endpoints;
}

export async function getEndpoint(
  t: TestSimulator,
  projectId: string,
  endpointId: string,
): Promise<Endpoint> {
  const result = await t.api<{ endpoint: unknown }>(
    "GET",
    `/projects/${projectId}/endpoints/${endpointId}`,
  );
  return endpointOperationsResponseSchema.shape.endpoint.parse(expectStatus(result, 200).endpoint);
}

/** A call answering `{endpoint, operations}`, checked against the contract. */
export async function endpointCall(
  t: TestSimulator,
  method: string,
  path: string,
  status: number,
  body?: unknown,
): Promise<EndpointOperationsResponse> {
  const result = await t.api(method, path, body === undefined ? {} : { body });
  return endpointOperationsResponseSchema.parse(expectStatus(result, status));
}

export async function listPage(
  t: TestSimulator,
  projectId: string,
  limit: number,
  cursor?: string,
): Promise<OperationsPage> {
  const query = new URLSearchParams({ limit: String(limit) });
  if (cursor !== undefined) query.set("cursor", cursor);
  const result = await t.api("GET", `/projects/${projectId}/operations?${query.toString()}`);
  return operationsPageSchema.parse(expectStatus(result, 200));
}

export async function getOperation(
  t: TestSimulator,
  projectId: string,
  operationId: string,
): Promise<Operation> {
  const result = await t.api("GET", `/projects/${projectId}/operations/${operationId}`);
  return operationResponseSchema.parse(expectStatus(result, 200)).operation;
}

/** Every operation of the project, walked page by page, newest first. */
export async function walkAll(
  t: TestSimulator,
  projectId: string,
  limit: number,
): Promise<Operation[]> {
  const all: Operation[] = [];
  let cursor: string | undefined;
  for (;;) {
    const page = await listPage(t, projectId, limit, cursor);
    all.push(...page.operations);
    if (page.operations.length < limit) return all;
    cursor = page.pagination?.cursor;
  }
}

/** The operations of a project with a given action, newest first (from the ground truth). */
export async function operationsWithAction(
  t: TestSimulator,
  projectId: string,
  action: string,
): Promise<Operation[]> {
  return (await t.sim.truth(projectId)).filter((o) => o.action === action);
}
