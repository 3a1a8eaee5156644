import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { setTimeout as sleep } from "node:timers/promises";
import { API_BASE_PATH } from "../../contract/index.js";
import { ApiError } from "../errors.js";
import { UNKNOWN_ROUTE } from "./api-routes.js";
import { authenticate } from "./auth.js";
import { readBody } from "./body.js";
import { faultRetryAfter, type Fault, type FaultRegistry } from "./faults.js";
import type { RateLimiter } from "./rate-limiter.js";
import { requestContext, type Handler, type Reply } from "./request.js";
import { sendReply, type Delivery } from "./respond.js";
import type { Router } from "./router.js";
import { DROPPED, type RequestStats } from "./stats.js";

/** The path prefix of the simulator's control interface. */
export const SIM_BASE_PATH = "/_sim";

export interface ServerParts {
  readonly apiKey: string;
  readonly api: Router<Handler>;
  readonly sim: Router<Handler>;
  /** Applies every simulated event due now; called before any request is served. */
  settle(): void;
  /** Undefined when rate limiting is off. */
  readonly rateLimiter: RateLimiter | undefined;
  readonly faults: FaultRegistry;
  readonly stats: RequestStats;
  newRequestId(): string;
}

const MAX_CLIENT_REQUEST_ID = 256;

/**
 * The HTTP front door. For an API request: route, authenticate, rate-limit, apply faults, then
 * the handler; every API request is counted in the stats under its route name. `/_sim`
 * requests are authenticated but neither limited nor faulted.
 */
export function createSimulatorServer(parts: ServerParts): Server {
  return createServer((req, res) => {
    // Errors are answered inside `handle`; this only catches a failure to write the answer.
    handle(parts, req, res).catch(() => {
      res.destroy();
    });
  });
}

async function handle(
  parts: ServerParts,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const clientId = req.headers["x-request-id"];
  const requestId =
    typeof clientId === "string" && clientId !== "" && clientId.length <= MAX_CLIENT_REQUEST_ID
      ? clientId
      : parts.newRequestId();
  res.setHeader("X-Request-ID", requestId);
  const url = new URL(req.url ?? "/", "http://simulator");
  const method = req.method ?? "GET";
  const path = url.pathname;
  const isApi = path === API_BASE_PATH || path.startsWith(`${API_BASE_PATH}/`);
  const routeName = isApi ? apiRouteName(parts.api, method, path) : undefined;
  let reply: Reply;
  let delivery: Delivery = "intact";
  try {
    const rawBody = await readBody(req);
    parts.settle();
    authenticate(req.headers.authorization, parts.apiKey);
    if (routeName !== undefined) {
      const decided = await applyLimitsAndFaults(parts, routeName, method);
      if (decided === "drop") {
        parts.stats.record(routeName, DROPPED);
        req.socket.destroy();
        return;
      }
      delivery = decided.delivery;
      reply =
        decided.reply ??
        dispatch(parts.api, method, path.slice(API_BASE_PATH.length), url, rawBody);
    } else if (path === SIM_BASE_PATH || path.startsWith(`${SIM_BASE_PATH}/`)) {
      reply = dispatch(parts.sim, method, path.slice(SIM_BASE_PATH.length), url, rawBody);
    } else {
      throw new ApiError(404, "not_found", `no route for ${method} ${path}`);
    }
  } catch (error) {
    reply = errorReply(error);
  }
  if (routeName !== undefined) parts.stats.record(routeName, reply.status);
  sendReply(res, withRequestId(reply, requestId), delivery);
}

function apiRouteName(api: Router<Handler>, method: string, path: string): string {
  const match = api.match(method, path.slice(API_BASE_PATH.length));
  return match.kind === "not-found" ? UNKNOWN_ROUTE : match.name;
}

type Decision = "drop" | { readonly reply: Reply | undefined; readonly delivery: Delivery };

/** Rate limit first (a refused request meets no fault), then the configured faults. */
async function applyLimitsAndFaults(
  parts: ServerParts,
  route: string,
  method: string,
): Promise<Decision> {
  const limit = parts.rateLimiter?.check(route);
  if (limit !== undefined && !limit.allowed) {
    const seconds = String(limit.retryAfterSeconds);
    throw new ApiError(429, "rate_limited", "too many requests", { "Retry-After": seconds });
  }
  const { latencyMs, fault } = parts.faults.decide(route, method);
  if (latencyMs > 0) {
    await sleep(latencyMs);
    parts.settle();
  }
  return faultOutcome(fault);
}

function faultOutcome(fault: Fault | undefined): Decision {
  switch (fault?.kind) {
    case undefined:
    case "latency":
      return { reply: undefined, delivery: "intact" };
    case "drop":
      return "drop";
    case "malformed":
    case "truncated":
      return { reply: undefined, delivery: fault.kind };
    case "status": {
      const status = fault.status ?? 503;
      const retryAfter = faultRetryAfter(fault);
      throw new ApiError(
        status,
        status === 429 ? "rate_limited" : "injected_fault",
        `injected fault ${fault.id}`,
        retryAfter === undefined ? {} : { "Retry-After": String(retryAfter) },
      );
    }
  }
}

function dispatch(
  router: Router<Handler>,
  method: string,
  path: string,
  url: URL,
  rawBody: string,
): Reply {
  const match = router.match(method, path);
  switch (match.kind) {
    case "found":
      return match.handler(requestContext(match.params, url.searchParams, rawBody));
    case "method-not-allowed":
      throw new ApiError(405, "method_not_allowed", `${method} is not allowed here`, {
        Allow: match.allow.join(", "),
      });
    case "not-found":
      throw new ApiError(404, "not_found", `no route for ${method} ${url.pathname}`);
  }
}

function errorReply(error: unknown): Reply {
  if (error instanceof ApiError) {
    return {
      status: error.status,
      body: { code: error.code, message: error.message },
      headers: error.headers,
    };
  }
  const message = error instanceof Error ? error.message : String(error);
  return { status: 500, body: { code: "internal_error", message } };
}

/** Every error body carries the request id (the client's `X-Request-ID`, else a new one). */
function withRequestId(reply: Reply, requestId: string): Reply {
  if (reply.status < 400 || typeof reply.body !== "object" || reply.body === null) return reply;
  return { ...reply, body: { ...reply.body, request_id: requestId } };
}
