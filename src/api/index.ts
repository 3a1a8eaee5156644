/**
 * The typed client of the control-plane API: every call the exporter makes (it only reads), the
 * calls that change an endpoint, and following operations to their end, with auth, response
 * validation, one error type, safe retries and a shared rate limiter. It knows
 * nothing of metrics or alerts; those subscribe to its `events`. See README.md for the policy.
 */
export {
  createApiClient,
  type ApiClient,
  type CallOptions,
  type EndpointAction,
  type EndpointChanges,
  type NewEndpoint,
  type PageParams,
  type ProjectsPageRead,
  type SkippedProject,
  type WalkParams,
} from "./client.js";
export { DEFAULT_BASE_URL, type ApiClientOptions } from "./options.js";
export { ApiError, type ApiErrorFields, type ApiErrorKind } from "./errors.js";
export { isNotFound, rootAnswersNotFound, wrongBaseUrl } from "./base-url.js";
export type {
  ApiClientEvents,
  RateLimitPauseEvent,
  RateLimitWaitEvent,
  ResponseEvent,
  RetryEvent,
  TransportErrorEvent,
} from "./events.js";
export type { Clock } from "../clock.js";
export type { RateLimiterStats } from "./rate-limiter.js";
export type { HttpMethod, RouteName } from "./routes.js";
export {
  operationOutcome,
  waitVerdict,
  type OperationOutcome,
  type StatusChange,
  type WaitResult,
  type WaitVerdict,
} from "./operation-watch.js";
export { OPEN_LOOKBACK_MS, type OpenFilter } from "./operation-reads.js";
export type { WaitOptions } from "./wait-for-operations.js";
