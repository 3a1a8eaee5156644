/**
 * The soak's fault classes: what is injected into the simulator's API (through `/_sim/faults`,
 * each fault with a `count`, so that it is spent by itself) and into the alert sink (the
 * receiver's answers), drawn from a seeded generator.
 */
import type { Fault, SimFaultRequest } from "../../src/simulator/index.js";
import type { ResponseSpec } from "../support/receiver.js";

export const API_FAULT_CLASSES = [
  "429",
  "5xx",
  "423",
  "latency",
  "malformed",
  "truncated",
  "drop",
  // A misbehaving API (a broken proxy, a server bug, a skewed clock).
  "drip",
  "oversized",
  "overlap",
  "cursor_cycle",
  "no_pagination",
  "foreign_project",
  "future_date",
  "out_of_order",
] as const;
export type ApiFaultClass = (typeof API_FAULT_CLASSES)[number];

export const SINK_OUTAGE_MODES = ["503", "500", "429", "drop", "slow"] as const;
export type SinkOutageMode = (typeof SINK_OUTAGE_MODES)[number];

/** The API routes the daemon calls. */
const ROUTES = [
  "listOperations",
  "listOperations",
  "listOperations",
  "listOperations",
  "listOperations",
  "getOperation",
  "listEndpoints",
  "listProjects",
  undefined,
  undefined,
] as const;

/** Latency beyond this (ms) outlasts the daemon's API timeout in the soak's configuration. */
export const API_TIMEOUT_SECONDS = 2;
/** The daemon's cap on an answer's size; an `oversized` fault pads answers well beyond it. */
export const API_MAX_RESPONSE_BYTES = 1024 * 1024;
/**
 * The daemon's future tolerance: the simulated clock runs twenty times faster than the wall
 * clock the daemon judges dates by, so ordinary records are hours ahead by the end of a soak.
 */
export const FUTURE_TOLERANCE_SECONDS = 7 * 86_400;
/** How far a `future_date` fault moves a record ahead (far beyond the tolerance), in seconds. */
const FAR_FUTURE_SECONDS = 75 * 365 * 86_400;
/** The webhook sink's timeout; a `slow` outage answers after it. */
export const SINK_TIMEOUT_SECONDS = 1.5;

export function pick<T>(random: () => number, items: readonly T[]): T {
  if (items.length === 0) throw new Error("pick from an empty list");
  return items[Math.floor(random() * items.length)] as T;
}

const int = (random: () => number, min: number, max: number) =>
  min + Math.floor(random() * (max - min + 1));

/** One burst of `kind` on a random route. */
export function faultSpec(random: () => number, kind: ApiFaultClass): SimFaultRequest {
  const route = pick(random, ROUTES);
  const on = route === undefined ? {} : { route };
  switch (kind) {
    case "429":
      return {
        ...on,
        kind: "status",
        status: 429,
        retry_after_seconds: int(random, 1, 3),
        count: int(random, 4, 30),
      };
    case "5xx":
      return {
        ...on,
        kind: "status",
        status: pick(random, [500, 502, 503, 504]),
        count: int(random, 2, 12),
      };
    case "423":
      return {
        ...on,
        kind: "status",
        status: 423,
        retry_after_seconds: 1,
        count: int(random, 2, 10),
      };
    case "latency":
      // Some spikes only slow the answer; most outlast the client's timeout, long enough for
      // a call to run out of attempts (and the failure to be logged).
      return {
        ...on,
        kind: "latency",
        latency_ms: random() < 0.3 ? int(random, 100, 800) : int(random, 2500, 4000),
        count: int(random, 4, 20),
      };
    case "malformed":
    case "truncated":
    case "drop":
      return { ...on, kind, count: int(random, 2, 8) };
    case "drip":
      // A byte every 100 ms: never silent for the timeout, never done within it.
      return { ...on, kind: "drip", drip_interval_ms: 100, count: int(random, 2, 6) };
    case "oversized":
      return {
        ...on,
        kind: "oversized",
        size_bytes: API_MAX_RESPONSE_BYTES * int(random, 2, 8),
        count: int(random, 2, 6),
      };
    case "overlap":
      return { route: "listOperations", kind: "overlap", count: int(random, 5, 30) };
    case "cursor_cycle":
      return {
        route: pick(random, ["listOperations", "listOperations", "listProjects"]),
        kind: "cursor_cycle",
        count: int(random, 2, 8),
      };
    case "no_pagination":
      return {
        route: pick(random, ["listOperations", "listOperations", "listProjects"]),
        kind: "no_pagination",
        count: int(random, 2, 8),
      };
    case "foreign_project":
      return {
        route: pick(random, ["listOperations", "getOperation"]),
        kind: "foreign_project",
        count: int(random, 5, 20),
      };
    case "future_date":
      return { kind: "misdated", offset_seconds: FAR_FUTURE_SECONDS, count: int(random, 1, 3) };
    case "out_of_order":
      // Dated some fifty years back, as a server bug might.
      return {
        kind: "misdated",
        offset_seconds: -FAR_FUTURE_SECONDS,
        count: int(random, 1, 3),
      };
  }
}

/** The class a configured fault belongs to. */
export function classOf(fault: Fault): ApiFaultClass {
  if (fault.kind === "status") {
    if (fault.status === 429) return "429";
    if (fault.status === 423) return "423";
    return "5xx";
  }
  if (fault.kind === "misdated")
    return (fault.offset_seconds ?? 0) > 0 ? "future_date" : "out_of_order";
  // Tested on its own (test/daemon/time-and-refusals.test.ts): the soak does not inject it.
  if (fault.kind === "null_fields") throw new Error("the soak injects no null_fields fault");
  if (fault.kind === "failed_operations") {
    throw new Error("the soak injects no failed_operations fault");
  }
  return fault.kind;
}

/** The receiver's answer during an outage of `mode`. */
export function outageAnswer(random: () => number, mode: SinkOutageMode): ResponseSpec {
  switch (mode) {
    case "503":
      return { status: 503, body: "unavailable" };
    case "500":
      return { status: 500, body: "internal error" };
    case "429":
      return {
        status: 429,
        headers: { "retry-after": String(int(random, 1, 2)) },
        body: "slow down",
      };
    case "drop":
      return { drop: true };
    case "slow":
      // Answered after the sink gave up: never a delivery, whatever the status.
      return { status: 503, delayMs: SINK_TIMEOUT_SECONDS * 1000 + 1000, body: "too late" };
  }
}

/** The reason `pgcp_api_retries_total` gives a retry caused by each class. */
export function retryReasonMatches(cls: ApiFaultClass, reason: string): boolean {
  switch (cls) {
    case "429":
      return reason === "http_429";
    case "423":
      return reason === "http_423";
    case "5xx":
      return /^http_5\d\d$/.test(reason);
    case "latency":
      return reason === "timeout";
    case "malformed":
      return reason === "invalid_response";
    case "truncated":
    case "drop":
      return reason === "network";
    case "cursor_cycle":
    case "no_pagination":
      // A page that hands back its own cursor, or none: an inconsistent answer, retried.
      return reason === "invalid_response";
    case "drip":
    case "oversized":
      // Neither is worth repeating within the call: the poll fails and says why.
      return false;
    case "overlap":
    case "foreign_project":
    case "future_date":
    case "out_of_order":
      // Worked around without a failure: the anomaly's log line is the evidence.
      return false;
  }
}
