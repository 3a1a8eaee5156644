import {
  OPERATIONS_LIMIT,
  compiledOperationsPageSchema,
  operationResponseSchema,
  type Branch,
  type CreateEndpointRequest,
  type Endpoint,
  type EndpointOperationsResponse,
  type Operation,
  type OperationsPage,
  type Organization,
  type ProjectListItem,
  type ProjectsPage,
  type UpdateEndpointRequest,
} from "../contract/index.js";
import { executeCall, type Call, type CallDeps } from "./call.js";
import { Turns } from "./turns.js";
import { resolveOptions, type ApiClientOptions } from "./options.js";
import { checkLimit, pageIsConsistent, walkPages, withCursor } from "./paging.js";
import { projectCalls } from "./project-calls.js";
import { endpointCalls } from "./endpoint-calls.js";
import { RateLimiter, type RateLimiterStats } from "./rate-limiter.js";
import { paths } from "./routes.js";
import { ServerClock } from "./server-clock.js";
import { Transport } from "./transport.js";
import { findOpenOperations, operationReader, type OpenFilter } from "./operation-reads.js";
import type { WaitResult } from "./operation-watch.js";
import { followOperations, type WaitOptions } from "./wait-for-operations.js";

/** Per-call options. */
export interface CallOptions {
  /** Aborts the call, its retries and its waits; the call then rejects with the signal's reason. */
  readonly signal?: AbortSignal;
}

export interface PageParams {
  readonly limit: number;
  /** `pagination.cursor` of the previous page. */
  readonly cursor?: string;
}

/** A page of the projects list: the key's own projects, or an organisation's. */
export interface ProjectsPageParams extends PageParams {
  /** `org_id`: the projects of this organisation (a personal key must be one of its members). */
  readonly orgId?: string | undefined;
}

export interface WalkParams {
  readonly limit: number;
  /** Resume a walk from this cursor instead of the newest record. */
  readonly startCursor?: string;
}

/** An entry of the projects list that is not a usable project (a malformed id, say). */
export interface SkippedProject {
  /** Its `id` as sent, cut to 100 characters and JSON-quoted; `(none)` without one. */
  readonly id: string;
  /** What is wrong with it: the first schema issue. */
  readonly problem: string;
}

/** A page of the projects list: the usable projects, and the entries skipped. */
export type ProjectsPageRead = ProjectsPage & { readonly skipped: readonly SkippedProject[] };

export type NewEndpoint = CreateEndpointRequest["endpoint"];
export type EndpointChanges = UpdateEndpointRequest["endpoint"];

/** A call that starts, suspends or restarts an endpoint's compute. */
export type EndpointAction = (
  projectId: string,
  endpointId: string,
  options?: CallOptions,
) => Promise<EndpointOperationsResponse>;

export interface ApiClient {
  /** One page of a project's operations, newest first. */
  listOperations(
    projectId: string,
    page: PageParams,
    options?: CallOptions,
  ): Promise<OperationsPage>;
  /** Every non-empty page of a project's operations, newest first (see `walkPages`). */
  operationPages(
    projectId: string,
    walk: WalkParams,
    options?: CallOptions,
  ): AsyncGenerator<OperationsPage, void, undefined>;
  getOperation(projectId: string, operationId: string, options?: CallOptions): Promise<Operation>;
  /**
   * One page of the projects the API key can see. An entry that is not a usable project is
   * skipped (in `skipped`), not a failure of the page.
   */
  listProjects(
    page?: Partial<ProjectsPageParams>,
    options?: CallOptions,
  ): Promise<ProjectsPageRead>;
  /**
   * Every project the API key can see, page by page (`limit` per request, default 10): its
   * account's own projects, or with `orgId` those of that organisation. Each entry skipped goes
   * to `onSkipped`.
   */
  allProjects(
    walk?: Partial<WalkParams> & {
      readonly orgId?: string | undefined;
      readonly onSkipped?: (skipped: SkippedProject) => void;
    },
    options?: CallOptions,
  ): AsyncGenerator<ProjectListItem, void, undefined>;
  /** `GET /projects/{id}`: one project (what its list entry holds, and more). */
  getProject(projectId: string, options?: CallOptions): Promise<ProjectListItem>;
  /** `GET /projects/{id}/branches`: the project's branches. */
  listBranches(projectId: string, options?: CallOptions): Promise<Branch[]>;
  /** `GET /organizations/{org_id}`: an organisation the key may see (its name). */
  getOrganization(orgId: string, options?: CallOptions): Promise<Organization>;
  /** The compute endpoints of a project. */
  listEndpoints(projectId: string, options?: CallOptions): Promise<Endpoint[]>;
  getEndpoint(projectId: string, endpointId: string, options?: CallOptions): Promise<Endpoint>;

  // The calls that change an endpoint. The exporter itself only reads; these are the rest of
  // the API for the tools built on this client (`wait`, scripts, the tests). Each answers the
  // endpoint and the operations the change started, which `waitForOperations` follows to their
  // end. Like every POST, PATCH and DELETE, they are not retried after an answer that may mean
  // the change took effect (see README.md, Retries).

  /** `POST /projects/{id}/endpoints`: a new compute endpoint on a branch. */
  createEndpoint(
    projectId: string,
    endpoint: NewEndpoint,
    options?: CallOptions,
  ): Promise<EndpointOperationsResponse>;
  /** `PATCH …/endpoints/{id}`: changes an endpoint's settings (size, suspend delay, branch). */
  updateEndpoint(
    projectId: string,
    endpointId: string,
    changes: EndpointChanges,
    options?: CallOptions,
  ): Promise<EndpointOperationsResponse>;
  /**
   * `DELETE …/endpoints/{id}`: answers the endpoint as it last was, with no operations; null
   * when the endpoint does not exist or is already deleted (the API answers 204).
   */
  deleteEndpoint(
    projectId: string,
    endpointId: string,
    options?: CallOptions,
  ): Promise<EndpointOperationsResponse | null>;
  /** `POST …/endpoints/{id}/start`: starts an idle endpoint's compute. */
  startEndpoint: EndpointAction;
  /** `POST …/endpoints/{id}/suspend`: suspends an endpoint's compute. */
  suspendEndpoint: EndpointAction;
  /** `POST …/endpoints/{id}/restart`: restarts an endpoint's compute. */
  restartEndpoint: EndpointAction;
  /**
   * Polls the operations that have not ended until all have, or the timeout strikes: the end of
   * a change above, or of any operation read from the log. Each poll reads them with the fewest
   * requests (`operation-reads.ts`): a get for one, the log's newest page(s) for several.
   */
  waitForOperations(
    projectId: string,
    operations: readonly Operation[],
    options?: WaitOptions,
  ): Promise<WaitResult>;
  /** The current records of operations by id, with the fewest requests (404: an `ApiError`). */
  readOperations(
    projectId: string,
    operationIds: readonly string[],
    options?: CallOptions,
  ): Promise<readonly Operation[]>;
  /**
   * The project's operations that are open now (on a branch or endpoint, if `filter` says),
   * newest first, from the log's records of the 24 hours before its newest one.
   */
  openOperations(
    projectId: string,
    filter?: OpenFilter,
    options?: CallOptions,
  ): Promise<Operation[]>;
  /** The shared limiter's state: tokens left, requests in flight and queued, time waited. */
  limiterStats(): RateLimiterStats;
  /**
   * The API's time now (epoch ms), from the `Date` of its latest answer moved on by our
   * monotonic clock (`server-clock.ts`); undefined before any answer carried one.
   */
  serverNow(): number | undefined;
  /** Rejects queued requests, waits for those in flight, closes the connections. */
  close(): Promise<void>;
}

const operationCount = (page: OperationsPage): number => page.operations.length;

export function createApiClient(clientOptions: ApiClientOptions): ApiClient {
  const options = resolveOptions(clientOptions);
  const deps: CallDeps = {
    options,
    transport: new Transport({
      origin: options.origin,
      connections: options.maxConcurrency,
      connectTimeoutMs: options.connectTimeoutMs,
    }),
    limiter: new RateLimiter({
      refillPerSecond: options.refillPerSecond,
      burst: options.burst,
      maxConcurrency: options.maxConcurrency,
      clock: options.clock,
    }),
    turns: new Turns(),
    serverClock: new ServerClock(),
  };
  const call: Call = (spec) => executeCall(deps, spec);

  const listOperations: ApiClient["listOperations"] = async (projectId, page, callOptions) => {
    checkLimit("operations", page.limit, OPERATIONS_LIMIT);
    return call({
      route: "listOperations",
      method: "GET",
      path: paths.operations(projectId),
      query: { limit: page.limit, cursor: page.cursor },
      schema: compiledOperationsPageSchema,
      check: pageIsConsistent(page.cursor, page.limit, operationCount),
      signal: callOptions?.signal,
    });
  };

  const getOperation: ApiClient["getOperation"] = async (projectId, operationId, callOptions) => {
    const body = await call({
      route: "getOperation",
      method: "GET",
      path: paths.operation(projectId, operationId),
      schema: operationResponseSchema,
      signal: callOptions?.signal,
    });
    return body.operation;
  };

  return {
    listOperations,
    operationPages(projectId, walk, callOptions) {
      checkLimit("operations", walk.limit, OPERATIONS_LIMIT);
      return walkPages(
        (cursor) =>
          listOperations(projectId, withCursor({ limit: walk.limit }, cursor), callOptions),
        operationCount,
        walk.limit,
        walk.startCursor,
      );
    },
    getOperation,
    ...projectCalls(call),
    ...endpointCalls(call),
    waitForOperations: (projectId, operations, waitOptions) =>
      followOperations(
        operationReader({ listOperations, getOperation }, projectId),
        options.clock,
        operations,
        waitOptions,
      ),
    readOperations: (projectId, operationIds, callOptions) =>
      operationReader({ listOperations, getOperation }, projectId)(
        operationIds,
        callOptions?.signal,
      ),
    openOperations: (projectId, filter, callOptions) =>
      findOpenOperations(
        { listOperations, getOperation },
        projectId,
        filter ?? {},
        callOptions?.signal,
      ),
    limiterStats: () => deps.limiter.stats(),
    serverNow: () => deps.serverClock.now(options.clock.monotonic()),
    async close() {
      deps.limiter.close();
      await deps.transport.close();
    },
  };
}
