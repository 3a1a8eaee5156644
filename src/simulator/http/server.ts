import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { setTimeout as sleep } from "node:timers/promises";
import { API_BASE_PATH } from "../../contract/index.js";
import { ApiError } from "../errors.js";
import { accountOf, type KeyOwner } from "../model/accounts.js";
import { UNKNOWN_ROUTE } from "./api-routes.js";
import { authenticate } from "./auth.js";
import { readBody } from "./body.js";
import {
  DEFAULT_DRIP_BYTES,
  DEFAULT_DRIP_INTERVAL_MS,
  faultRetryAfter,
  isAnswerFault,
  type AnswerFaultKind,
  type Fault,
  type FaultRegistry,
  type RequestFacts,
} from "./faults.js";
import type { RateLimiter } from "./rate-limiter.js";
import { requestContext, type Handler, type Reply } from "./request.js";
import { sendReply, type Delivery, type StreamTracker } from "./respond.js";
import type { Router } from "./router.js";
import { DROPPED, type RequestStats } from "./stats.js";

/** The path prefix of the simulator's control interface. */
export const SIM_BASE_PATH = "/_sim";

export interface ServerParts {
  /** The owner of a presented API key, or undefined for an unknown key. */
  ownerOf(key: string): KeyOwner | undefined;
  readonly api: Router<Handler>;
  readonly sim: Router<Handler>;
  /** Applies every simulated event due now; called before any request is served. */
  settle(): void;
  /** The simulated time now (epoch ms): every answer's `Date` header, as a real server's clock. */
  nowMs(): number;
  /** Undefined when rate limiting is off. */
  readonly rateLimiter: RateLimiter | undefined;
  readonly faults: FaultRegistry;
  readonly stats: RequestStats;
  /** Answers still being streamed (`drip`, `oversized`), cut when the simulator closes. */
  readonly streams: StreamTracker;
  newRequestId(): string;
}

const MAX_CLIENT_REQUEST_ID = 256;
/** API bodies are small JSON documents (413 beyond, as documented). */
const MAX_API_BODY_BYTES = 1024 * 1024;
/** `/_sim` bodies may carry hostile scripted records (up to 1 MiB per text field). */
const MAX_SIM_BODY_BYTES = 16 * 1024 * 1024;

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
  res.setHeader("Date", new Date(parts.nowMs()).toUTCString());
  const url = new URL(req.url ?? "/", "http://simulator");
  const method = req.method ?? "GET";
  const path = url.pathname;
  const isApi = path === API_BASE_PATH || path.startsWith(`${API_BASE_PATH}/`);
  const isSim = path === SIM_BASE_PATH || path.startsWith(`${SIM_BASE_PATH}/`);
  const routeName = isApi ? apiRouteName(parts.api, method, path) : undefined;
  const projectId =
    routeName === undefined
      ? undefined
      : /^\/projects\/([^/]+)/.exec(path.slice(API_BASE_PATH.length))?.[1];
  let reply: Reply;
  let delivery: Delivery = "intact";
  try {
    const rawBody = await readBody(req, isSim ? MAX_SIM_BODY_BYTES : MAX_API_BODY_BYTES);
    parts.settle();
    const caller = authenticate(req.headers.authorization, (key) => parts.ownerOf(key));
    if (routeName !== undefined) {
      const facts = { hasCursor: url.searchParams.has("cursor"), projectId };
      const decided = await applyLimitsAndFaults(
        parts,
        accountOf(caller),
        routeName,
        method,
        facts,
      );
      if (decided === "drop") {
        parts.stats.record(routeName, DROPPED);
        req.socket.destroy();
        return;
      }
      delivery = decided.delivery;
      const apiPath = path.slice(API_BASE_PATH.length);
      reply = await dispatch(parts.api, method, apiPath, url, rawBody, caller, decided.answerFault);
    } else if (isSim) {
      const simPath = path.slice(SIM_BASE_PATH.length);
      reply = await dispatch(parts.sim, method, simPath, url, rawBody, caller);
    } else {
      throw new ApiError(404, "not_found", `no route for ${method} ${path}`);
    }
  } catch (error) {
    reply = errorReply(error);
  }
  if (routeName !== undefined) parts.stats.record(routeName, reply.status, projectId);
  sendReply(res, withRequestId(reply, requestId), delivery, parts.streams);
}

function apiRouteName(api: Router<Handler>, method: string, path: string): string {
  const match = api.match(method, path.slice(API_BASE_PATH.length));
  return match.kind === "not-found" ? UNKNOWN_ROUTE : match.name;
}

type Decision =
  "drop" | { readonly delivery: Delivery; readonly answerFault: AnswerFaultKind | undefined };

/** Rate limit first (a refused request meets no fault), then the configured faults. */
async function applyLimitsAndFaults(
  parts: ServerParts,
  account: string,
  route: string,
  method: string,
  facts: RequestFacts,
): Promise<Decision> {
  const limit = parts.rateLimiter?.check(route, account);
  if (limit !== undefined && !limit.allowed) {
    const seconds = String(limit.retryAfterSeconds);
    throw new ApiError(429, "rate_limited", "too many requests", { "Retry-After": seconds });
  }
  const { latencyMs, fault } = parts.faults.decide(route, method, facts);
  if (latencyMs > 0) {
    await sleep(latencyMs);
    parts.settle();
  }
  return faultOutcome(fault);
}

/** What the decisive fault (if any) does: refuse, drop, or let the request through and alter. */
function faultOutcome(fault: Fault | undefined): Decision {
  const through = (delivery: Delivery = "intact"): Decision => ({
    delivery,
    answerFault: isAnswerFault(fault?.kind) ? fault.kind : undefined,
  });
  switch (fault?.kind) {
    case undefined:
    case "latency":
    case "misdated": // never decisive: these hit operations, not requests
    case "failed_operations":
    case "overlap":
    case "cursor_cycle":
    case "no_pagination":
    case "foreign_project":
    case "null_fields":
      return through();
    case "drop":
      return "drop";
    case "malformed":
    case "truncated":
      return through(fault.kind);
    case "drip":
      return through({
        kind: "drip",
        bytes: fault.drip_bytes ?? DEFAULT_DRIP_BYTES,
        intervalMs: fault.drip_interval_ms ?? DEFAULT_DRIP_INTERVAL_MS,
      });
    case "oversized":
      return through({ kind: "oversized", sizeBytes: fault.size_bytes ?? 0 });
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
  caller: KeyOwner,
  answerFault?: AnswerFaultKind,
): Reply | Promise<Reply> {
  const match = router.match(method, path);
  switch (match.kind) {
    case "found": {
      const context = requestContext(match.params, url.searchParams, rawBody, caller, answerFault);
      return match.handler(context);
    }
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
