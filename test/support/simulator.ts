/**
 * Starts a simulator for a test: manual clock, random port on 127.0.0.1, a fixed seed and key,
 * no rate limit (pass `rateLimit` to test it), no availability checker unless traffic is
 * generated (deterministic operation counts; pass `availabilityCheckSeconds` to have it; the
 * product default is on, every 600 s), and a small typed driver for the `/_sim` calls.
 * Shared by the simulator's own tests and the API client's contract tests.
 */
import type { Operation } from "../../src/contract/index.js";
import {
  startSimulator,
  type Fault,
  type RunningSimulator,
  type SimBulkRequest,
  type SimBulkResponse,
  type SimComputeRequest,
  type SimComputeResponse,
  type SimComputeView,
  type SimClockResponse,
  type SimApiKeyResponse,
  type SimConnectResponse,
  type SimCreateApiKeyRequest,
  type SimCreateOrganizationRequest,
  type SimCreateProjectRequest,
  type SimOrganization,
  type SimOrganizationResponse,
  type SimOrganizationsResponse,
  type SimFaultRequest,
  type SimOperationResponse,
  type SimProjectResponse,
  type SimScriptOperationRequest,
  type SimulatorOptions,
  type StatsView,
  type TruthOperation,
} from "../../src/simulator/index.js";

export const TEST_API_KEY = "test-api-key";
export const TEST_SEED = 42;

export interface HttpResult<T = unknown> {
  readonly status: number;
  readonly headers: Headers;
  /** The parsed JSON body, or undefined when the body is empty or not JSON. */
  readonly body: T;
  readonly text: string;
}

export interface RequestOptions {
  /** Serialised as JSON; a string is sent as is (to test malformed bodies). */
  readonly body?: unknown;
  readonly headers?: Readonly<Record<string, string>>;
  /** Default: the simulator's key. `null` sends no Authorization header. */
  readonly apiKey?: string | null;
}

/** A failed `/_sim` call: the driver throws it for any non-2xx answer. */
export class SimCallError extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
    call: string,
  ) {
    super(`${call} answered ${status}: ${JSON.stringify(body)}`);
  }
}

export interface SimDriver {
  /** A project (default: paid, one branch) of the default user, another `user`, or `org_id`. */
  createProject(request?: Partial<SimCreateProjectRequest>): Promise<SimProjectResponse>;
  createOrganization(request: SimCreateOrganizationRequest): Promise<SimOrganization>;
  listOrganizations(): Promise<readonly SimOrganization[]>;
  addMember(orgId: string, user: string): Promise<SimOrganization>;
  /** A personal key of `user`, or a key of the organisation `org`. */
  createApiKey(request: SimCreateApiKeyRequest): Promise<SimApiKeyResponse["api_key"]>;
  /** Moves the manual clock; returns the new simulated time (ISO). */
  advance(seconds: number): Promise<string>;
  clock(): Promise<SimClockResponse>;
  connect(endpointId: string): Promise<SimConnectResponse>;
  scriptOperation(request: SimScriptOperationRequest): Promise<Operation>;
  addFault(spec: SimFaultRequest): Promise<Fault>;
  listFaults(): Promise<Fault[]>;
  /** Removes every fault; returns how many there were. */
  clearFaults(): Promise<number>;
  /** Every operation of the project with its status history, newest first. */
  truth(projectId: string): Promise<TruthOperation[]>;
  stats(): Promise<StatsView>;
  resetStats(): Promise<void>;
  /** The projects the traffic keeps busy, most active first. */
  trafficProjects(): Promise<readonly string[]>;
  bulk(request: SimBulkRequest): Promise<SimBulkResponse>;
  /** An endpoint's compute (a simulator started with `computes`). */
  compute(endpointId: string): Promise<SimComputeView>;
  /** Sets an endpoint compute's hit ratio, working set, extension or hang. */
  configureCompute(endpointId: string, request: SimComputeRequest): Promise<SimComputeView>;
}

export interface TestSimulator {
  readonly simulator: RunningSimulator;
  readonly url: string;
  /** Base URL of the API (`…/api/v2`). */
  readonly apiUrl: string;
  readonly apiKey: string;
  readonly sim: SimDriver;
  /** A raw HTTP call to the API, `path` relative to `apiUrl`; never throws on a status. */
  api<T = unknown>(method: string, path: string, options?: RequestOptions): Promise<HttpResult<T>>;
  /** A raw HTTP call to any path of the simulator (e.g. `/_sim/clock`). */
  request<T = unknown>(
    method: string,
    path: string,
    options?: RequestOptions,
  ): Promise<HttpResult<T>>;
  /** The ids of every project (the first 400), sorted. */
  projectIds(): Promise<string[]>;
  close(): Promise<void>;
}

async function call<T>(
  method: string,
  url: string,
  apiKey: string,
  options: RequestOptions = {},
): Promise<HttpResult<T>> {
  const headers: Record<string, string> = { Accept: "application/json", ...options.headers };
  const key = options.apiKey === undefined ? apiKey : options.apiKey;
  if (key !== null) headers.Authorization = `Bearer ${key}`;
  let body: string | undefined;
  if (options.body !== undefined) {
    body = typeof options.body === "string" ? options.body : JSON.stringify(options.body);
    headers["Content-Type"] = "application/json";
  }
  const response = await fetch(url, { method, headers, ...(body === undefined ? {} : { body }) });
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = text === "" ? undefined : JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status: response.status, headers: response.headers, body: parsed as T, text };
}

export async function startTestSimulator(
  options: Partial<SimulatorOptions> = {},
): Promise<TestSimulator> {
  const simulator = await startSimulator({
    apiKey: TEST_API_KEY,
    clock: "manual",
    seed: TEST_SEED,
    rateLimit: false,
    port: 0,
    host: "127.0.0.1",
    ...(options.traffic === undefined || options.traffic === false
      ? { availabilityCheckSeconds: 0 }
      : {}),
    ...options,
  });
  const key = simulator.apiKey;
  const request = <T>(method: string, path: string, o?: RequestOptions): Promise<HttpResult<T>> =>
    call<T>(method, simulator.url + path, key, o);
  const simCall = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const result = await request<T>(method, `/_sim${path}`, body === undefined ? {} : { body });
    if (result.status < 200 || result.status > 299) {
      throw new SimCallError(result.status, result.body, `${method} /_sim${path}`);
    }
    return result.body;
  };
  const sim: SimDriver = {
    createProject: (r) => simCall("POST", "/projects", { plan: "paid", branches: 1, ...r }),
    createOrganization: async (r) =>
      (await simCall<SimOrganizationResponse>("POST", "/organizations", r)).organization,
    listOrganizations: async () =>
      (await simCall<SimOrganizationsResponse>("GET", "/organizations")).organizations,
    addMember: async (orgId, user) =>
      (
        await simCall<SimOrganizationResponse>(
          "POST",
          `/organizations/${encodeURIComponent(orgId)}/members`,
          { user },
        )
      ).organization,
    createApiKey: async (r) => (await simCall<SimApiKeyResponse>("POST", "/api-keys", r)).api_key,
    advance: async (seconds) =>
      (await simCall<{ now: string }>("POST", "/clock/advance", { seconds })).now,
    clock: () => simCall("GET", "/clock"),
    connect: (endpointId) =>
      simCall("POST", `/endpoints/${encodeURIComponent(endpointId)}/connect`),
    scriptOperation: async (r) =>
      (await simCall<SimOperationResponse>("POST", "/operations", r)).operation,
    addFault: async (spec) => (await simCall<{ fault: Fault }>("POST", "/faults", spec)).fault,
    listFaults: async () => (await simCall<{ faults: Fault[] }>("GET", "/faults")).faults,
    clearFaults: async () => (await simCall<{ cleared: number }>("DELETE", "/faults")).cleared,
    truth: async (projectId) =>
      (
        await simCall<{ operations: TruthOperation[] }>(
          "GET",
          `/truth?project_id=${encodeURIComponent(projectId)}`,
        )
      ).operations,
    stats: () => simCall("GET", "/stats"),
    resetStats: async () => {
      await simCall("DELETE", "/stats");
    },
    trafficProjects: async () =>
      (await simCall<{ projects: string[] }>("GET", "/traffic")).projects,
    bulk: (r) => simCall("POST", "/bulk", r),
    compute: async (endpointId) =>
      (
        await simCall<SimComputeResponse>(
          "GET",
          `/endpoints/${encodeURIComponent(endpointId)}/compute`,
        )
      ).compute,
    configureCompute: async (endpointId, r) =>
      (
        await simCall<SimComputeResponse>(
          "POST",
          `/endpoints/${encodeURIComponent(endpointId)}/compute`,
          r,
        )
      ).compute,
  };
  return {
    simulator,
    url: simulator.url,
    apiUrl: simulator.apiUrl,
    apiKey: key,
    sim,
    api: (method, path, o) => call(method, simulator.apiUrl + path, key, o),
    request: (method, path, o) => request(method, path, o),
    projectIds: async () => {
      const listed = await call<{ projects: { id: string }[] }>(
        "GET",
        `${simulator.apiUrl}/projects?limit=400`,
        key,
      );
      return listed.body.projects.map((p) => p.id).sort();
    },
    close: () => simulator.close(),
  };
}

/**
 * Latency on the operations reads (20 ms on each, 80 ms more on a quarter of them): each poll
 * stretches over many milliseconds, so that a good share of a test's kills land while a walk
 * is in flight rather than between polls.
 */
export async function slowOperationReads(t: TestSimulator): Promise<void> {
  for (const route of ["listOperations", "getOperation"] as const) {
    await t.sim.addFault({ route, kind: "latency", latency_ms: 20 });
    await t.sim.addFault({ route, kind: "latency", latency_ms: 80, rate: 0.25 });
  }
}
