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
  }
}

/** The class a configured fault belongs to. */
export function classOf(fault: Fault): ApiFaultClass {
  if (fault.kind === "status") {
    if (fault.status === 429) return "429";
    if (fault.status === 423) return "423";
    return "5xx";
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
  }
}
