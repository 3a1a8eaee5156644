/**
 * A stand-in for PagerDuty's Events API v2 (`POST /v2/enqueue`), for tests: it takes the place
 * of the real service, which tests never reach. It implements the documented contract
 * (developer.pagerduty.com, "Send an Alert Event" and "Events API v2 Overview"), not our sink:
 *
 * - the body is validated as PagerDuty does: `routing_key` of 32 characters, `event_action`
 *   `trigger`, `acknowledge` or `resolve`, `dedup_key` of at most 255 characters (required but
 *   for a trigger), and for a trigger a `payload` with `summary` (at most 1,024 characters),
 *   `source`, `severity` (`critical`, `error`, `warning`, `info`), an ISO 8601 `timestamp` if
 *   given, strings for `component`, `group` and `class`, an object for `custom_details`, and
 *   `links` / `images` lists whose items have an `href` / `src`; the whole event at most 512 KB;
 * - a valid event is answered 202 `{status: "success", message: "Event processed", dedup_key}`;
 *   an invalid one 400 `{status: "invalid event", message: "Event object is invalid", errors}`;
 * - alerts are kept by `dedup_key` (per routing key): a trigger opens one, or is added to the
 *   open one with the same key; once resolved, a trigger with that key opens a new one, and an
 *   acknowledge or resolve for a key with no open alert is dropped (still 202). A trigger with
 *   no `dedup_key` gets a fresh one.
 *
 * Tests script other answers with `respondNext` (429 with `Retry-After`, 5xx, a dropped
 * connection), each used once; `ingest: true` takes the event before giving that answer (as
 * when PagerDuty took it but its answer was lost), and a scripted 2xx without a body then gets
 * the contract's.
 */
import { randomUUID } from "node:crypto";
import {
  startReceiver,
  type ReceivedRequest,
  type Receiver,
  type ResponseSpec,
} from "./receiver.js";

export const PAGERDUTY_PATH = "/v2/enqueue";

const SEVERITIES = new Set(["critical", "error", "warning", "info"]);
const ACTIONS = new Set(["trigger", "acknowledge", "resolve"]);
const MAX_EVENT_BYTES = 512 * 1024;

/** An event as received (only valid ones are kept). */
export interface PagerDutyEventIn {
  readonly routing_key: string;
  readonly event_action: "trigger" | "acknowledge" | "resolve";
  readonly dedup_key?: string;
  readonly payload?: {
    readonly summary: string;
    readonly source: string;
    readonly severity: string;
    readonly timestamp?: string;
    readonly component?: string;
    readonly group?: string;
    readonly class?: string;
    readonly custom_details?: Record<string, unknown>;
  };
  readonly links?: readonly { readonly href: string; readonly text?: string }[];
  readonly images?: readonly { readonly src: string }[];
  readonly client?: string;
  readonly client_url?: string;
}

/** An alert ("incident", for short) as PagerDuty keeps it. */
export interface PagerDutyIncident {
  /** 1 for the first alert opened, and so on. */
  readonly number: number;
  readonly routingKey: string;
  readonly dedupKey: string;
  status: "triggered" | "acknowledged" | "resolved";
  /** The events applied to it, in order (the first is the trigger that opened it). */
  readonly events: PagerDutyEventIn[];
}

/** What happened to one request. */
export interface PagerDutyRequestLog {
  readonly request: ReceivedRequest;
  /** What was answered (a scripted answer, or the contract's). */
  readonly status: number | "drop";
  /** Whether the event was applied to the alerts (ingested). */
  readonly ingested: boolean;
  readonly event?: PagerDutyEventIn;
  /** For a 400: PagerDuty's errors. */
  readonly errors?: readonly string[];
}

/** A scripted answer: a reply or a dropped connection, with or without taking the event. */
export type ScriptedAnswer = ResponseSpec & { readonly ingest?: boolean };

export interface PagerDutyReceiver {
  readonly receiver: Receiver;
  /** The events URL to configure (`http://127.0.0.1:<port>/v2/enqueue`). */
  readonly url: string;
  /** Every request, with what became of it, in arrival order. */
  readonly log: readonly PagerDutyRequestLog[];
  /** Every alert opened, oldest first (a key resolved and triggered again opens another). */
  readonly incidents: readonly PagerDutyIncident[];
  /** The alerts opened with `dedupKey`, oldest first. */
  incidentsFor(dedupKey: string): PagerDutyIncident[];
  /** Answers for the next requests, in order, each used once (before the contract applies). */
  respondNext(...answers: ScriptedAnswer[]): void;
  /** Chooses an answer per request (undefined: the contract's); after `respondNext`'s queue. */
  setScript(script: ((request: ReceivedRequest) => ScriptedAnswer | undefined) | undefined): void;
  close(): Promise<void>;
}

export async function startPagerDutyReceiver(): Promise<PagerDutyReceiver> {
  const log: PagerDutyRequestLog[] = [];
  const incidents: PagerDutyIncident[] = [];
  const queue: ScriptedAnswer[] = [];
  let script: ((request: ReceivedRequest) => ScriptedAnswer | undefined) | undefined;

  const open = (routingKey: string, dedupKey: string): PagerDutyIncident | undefined =>
    incidents.find(
      (i) => i.routingKey === routingKey && i.dedupKey === dedupKey && i.status !== "resolved",
    );

  /** Applies a valid event; returns its dedup key. */
  const ingest = (event: PagerDutyEventIn): string => {
    const dedupKey = event.dedup_key ?? randomUUID();
    const current = open(event.routing_key, dedupKey);
    switch (event.event_action) {
      case "trigger":
        if (current === undefined) {
          incidents.push({
            number: incidents.length + 1,
            routingKey: event.routing_key,
            dedupKey,
            status: "triggered",
            events: [event],
          });
        } else current.events.push(event);
        break;
      case "acknowledge":
        if (current !== undefined) {
          current.status = "acknowledged";
          current.events.push(event);
        }
        break;
      case "resolve":
        if (current !== undefined) {
          current.status = "resolved";
          current.events.push(event);
        }
        break;
    }
    return dedupKey;
  };

  const answer = (request: ReceivedRequest): ResponseSpec => {
    const scripted = queue.shift() ?? script?.(request);
    const checked = request.path === PAGERDUTY_PATH ? validate(request) : undefined;
    if (scripted !== undefined) {
      const take = scripted.ingest === true && checked?.event !== undefined;
      const dedupKey = take && checked.event !== undefined ? ingest(checked.event) : undefined;
      log.push({
        request,
        status: "drop" in scripted ? "drop" : (scripted.status ?? 200),
        ingested: take,
        ...(checked?.event === undefined ? {} : { event: checked.event }),
      });
      const { ingest: _ignored, ...spec } = scripted;
      // A 2xx for an event taken, with no body scripted: the contract's body.
      const status = "drop" in spec ? undefined : (spec.status ?? 200);
      if (
        dedupKey !== undefined &&
        status !== undefined &&
        status >= 200 &&
        status < 300 &&
        !("body" in spec) &&
        !("json" in spec)
      ) {
        return {
          ...spec,
          json: { status: "success", message: "Event processed", dedup_key: dedupKey },
        };
      }
      return spec;
    }
    if (request.path !== PAGERDUTY_PATH || request.method !== "POST") {
      log.push({ request, status: 404, ingested: false });
      return { status: 404, json: { status: "not found" } };
    }
    if (checked?.event === undefined) {
      const errors = checked?.errors ?? ["Event object is invalid"];
      log.push({ request, status: 400, ingested: false, errors });
      return {
        status: 400,
        json: { status: "invalid event", message: "Event object is invalid", errors },
      };
    }
    const dedupKey = ingest(checked.event);
    log.push({ request, status: 202, ingested: true, event: checked.event });
    return {
      status: 202,
      json: { status: "success", message: "Event processed", dedup_key: dedupKey },
    };
  };

  const receiver = await startReceiver({ fallback: answer });
  return {
    receiver,
    url: `${receiver.url}${PAGERDUTY_PATH}`,
    log,
    incidents,
    incidentsFor: (dedupKey) => incidents.filter((i) => i.dedupKey === dedupKey),
    respondNext(...answers) {
      queue.push(...answers);
    },
    setScript(next) {
      script = next;
    },
    close: () => receiver.close(),
  };
}

/** The event, or PagerDuty's errors for it. */
function validate(request: ReceivedRequest): { event?: PagerDutyEventIn; errors?: string[] } {
  if (request.rawBody.length > MAX_EVENT_BYTES) return { errors: ["Event is too large"] };
  const body = request.json;
  if (!isObject(body)) return { errors: ["Event object is invalid"] };
  const errors: string[] = [];
  const { routing_key, event_action, dedup_key, payload, links, images } = body;
  if (typeof routing_key !== "string") errors.push("'routing_key' is missing or blank");
  else if (routing_key.length !== 32) {
    errors.push("Length of 'routing_key' is incorrect (should be 32 characters)");
  }
  if (typeof event_action !== "string" || !ACTIONS.has(event_action)) {
    errors.push("'event_action' is invalid (must be one of: trigger, acknowledge, resolve)");
  }
  if (dedup_key !== undefined) {
    if (typeof dedup_key !== "string" || dedup_key === "") errors.push("'dedup_key' is invalid");
    else if (dedup_key.length > 255) errors.push("'dedup_key' is longer than 255 characters");
  } else if (event_action === "acknowledge" || event_action === "resolve") {
    errors.push("'dedup_key' is required for acknowledge and resolve events");
  }
  if (event_action === "trigger") {
    if (!isObject(payload)) errors.push("'payload' is missing or blank");
    else {
      const { summary, source, severity, timestamp } = payload;
      if (typeof summary !== "string" || summary.trim() === "") {
        errors.push("'payload.summary' is missing or blank");
      } else if (characters(summary) > 1024) {
        errors.push("'payload.summary' is longer than 1024 characters");
      }
      if (typeof source !== "string" || source.trim() === "") {
        errors.push("'payload.source' is missing or blank");
      }
      if (typeof severity !== "string" || !SEVERITIES.has(severity)) {
        errors.push(
          "'payload.severity' is invalid (must be one of: critical, error, warning, info)",
        );
      }
      if (
        timestamp !== undefined &&
        (typeof timestamp !== "string" || Number.isNaN(Date.parse(timestamp)))
      ) {
        errors.push("'payload.timestamp' is not a valid ISO 8601 timestamp");
      }
      for (const key of ["component", "group", "class"] as const) {
        if (payload[key] !== undefined && typeof payload[key] !== "string") {
          errors.push(`'payload.${key}' must be a string`);
        }
      }
      if (payload.custom_details !== undefined && !isObject(payload.custom_details)) {
        errors.push("'payload.custom_details' must be an object");
      }
    }
    if (
      links !== undefined &&
      !(Array.isArray(links) && links.every((l) => hasString(l, "href")))
    ) {
      errors.push("'links' must be a list of objects with an 'href'");
    }
    if (
      images !== undefined &&
      !(Array.isArray(images) && images.every((i) => hasString(i, "src")))
    ) {
      errors.push("'images' must be a list of objects with a 'src'");
    }
  }
  return errors.length > 0 ? { errors } : { event: body as unknown as PagerDutyEventIn };
}

/** Characters (code points), as PagerDuty counts them. */
function characters(text: string): number {
  return text.replace(/[\uD800-\uDBFF][\uDC00-\uDFFF]/g, "_").length;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function hasString(value: unknown, key: string): boolean {
  return isObject(value) && typeof value[key] === "string";
}
