/**
 * The generic webhook's wire format, version 1 (documented in docs/webhook.md): the JSON body,
 * the idempotency key and the signature. Pure: the sink adds only the clock and the socket.
 */
import { createHash, createHmac } from "node:crypto";
import { z } from "zod";
import { ALERT_KINDS, INCIDENT_STATES, type Alert, type Incident } from "../../store/index.js";
import { PACKAGE } from "../../version.js";
import { incidentOf } from "./incident.js";

export const WEBHOOK_SCHEMA_VERSION = 1;

/**
 * One alert on the wire: snake_case, every key present, `null` for an absent value; but for the
 * names, which are absent while unknown (added within version 1: a receiver that does not know
 * them sees the body it saw before).
 */
export const webhookAlertSchema = z.strictObject({
  id: z.string(),
  kind: z.enum(ALERT_KINDS),
  project_id: z.string(),
  project_name: z.string().optional(),
  operation_id: z.string(),
  branch_id: z.string().nullable(),
  branch_name: z.string().optional(),
  endpoint_id: z.string().nullable(),
  endpoint_name: z.string().optional(),
  action: z.string(),
  status: z.string(),
  failures_count: z.number().int().nonnegative(),
  error: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
  duration_seconds: z.number().nonnegative(),
  detected_at: z.string(),
  link: z.string().nullable(),
  resolves: z.string().nullable(),
  also_resolves: z.array(z.string()),
  advice: z
    .strictObject({
      reason: z.string(),
      hit_ratio: z.number().nullable(),
      connections: z.number().int().nonnegative(),
      max_connections: z.number().int().positive().nullable(),
      min_compute_units: z.number(),
      max_compute_units: z.number(),
      window_seconds: z.number().nonnegative(),
      summary: z.string(),
    })
    .nullable(),
  /**
   * For `platform_incident`: the incident, the same `incident_id` in its opening, each update
   * and its resolution; each carries the whole current list (at most 100 projects).
   */
  incident: z
    .strictObject({
      incident_id: z.string(),
      state: z.enum(INCIDENT_STATES),
      region_id: z.string(),
      error_class: z.string(),
      projects: z.array(
        z.strictObject({ project_id: z.string(), project_name: z.string().optional() }),
      ),
      project_count: z.number().int().nonnegative(),
    })
    .nullable(),
});
export type WebhookAlert = z.infer<typeof webhookAlertSchema>;
export type WebhookIncident = NonNullable<WebhookAlert["incident"]>;

export const webhookPayloadSchema = z.strictObject({
  version: z.literal(WEBHOOK_SCHEMA_VERSION),
  group_key: z.string(),
  sent_at: z.string(),
  alerts: z.array(webhookAlertSchema).min(1),
});
export type WebhookPayload = z.infer<typeof webhookPayloadSchema>;

/** Header names (lower case, as HTTP/2 and node:http spell them). */
export const WEBHOOK_HEADERS = {
  idempotencyKey: "idempotency-key",
  timestamp: "x-pgcp-timestamp",
  signature: "x-pgcp-signature",
} as const;

/** Headers the sink sets or that frame the request: custom headers cannot set them. */
export const RESERVED_HEADERS: ReadonlySet<string> = new Set([
  "content-type",
  "content-length",
  "content-encoding",
  "transfer-encoding",
  "user-agent",
  "host",
  "connection",
  "keep-alive",
  "upgrade",
  "expect",
  "te",
  "trailer",
  "proxy-connection",
  WEBHOOK_HEADERS.idempotencyKey,
  WEBHOOK_HEADERS.timestamp,
  WEBHOOK_HEADERS.signature,
]);
/** Every `X-Pgcp-*` header is the sink's. */
export const RESERVED_HEADER_PREFIX = "x-pgcp-";

export function toWebhookAlert(alert: Alert): WebhookAlert {
  return {
    id: alert.id,
    kind: alert.kind,
    project_id: alert.projectId,
    ...(alert.projectName === undefined ? {} : { project_name: alert.projectName }),
    operation_id: alert.operationId,
    branch_id: alert.branchId ?? null,
    ...(alert.branchName === undefined ? {} : { branch_name: alert.branchName }),
    endpoint_id: alert.endpointId ?? null,
    ...(alert.endpointName === undefined ? {} : { endpoint_name: alert.endpointName }),
    action: alert.action,
    status: alert.status,
    failures_count: alert.failuresCount,
    error: alert.error ?? null,
    created_at: alert.createdAt,
    updated_at: alert.updatedAt,
    duration_seconds: alert.durationSeconds,
    detected_at: alert.detectedAt,
    link: alert.link ?? null,
    resolves: alert.resolves ?? null,
    also_resolves: [...(alert.alsoResolves ?? [])],
    advice: adviceOf(alert),
    incident: alert.kind === "platform_incident" ? toWebhookIncident(incidentOf(alert)) : null,
  };
}

/** A platform incident as the body's `incident` object. */
export function toWebhookIncident(incident: Incident): WebhookIncident {
  return {
    incident_id: incident.id,
    state: incident.state,
    region_id: incident.regionId,
    error_class: incident.errorClass,
    projects: incident.projects.map((p) => ({
      project_id: p.id,
      ...(p.name === undefined ? {} : { project_name: p.name }),
    })),
    project_count: incident.projectCount,
  };
}

function adviceOf(alert: Alert): WebhookAlert["advice"] {
  const a = alert.advice;
  if (a === undefined) return null;
  return {
    reason: a.reason,
    hit_ratio: a.hitRatio,
    connections: a.connections,
    max_connections: a.maxConnections,
    min_compute_units: a.minComputeUnits,
    max_compute_units: a.maxComputeUnits,
    window_seconds: a.windowSeconds,
    summary: a.summary,
  };
}

/**
 * The batch's group key: its project id (the notifier batches per project). A batch that
 * mixes projects, which the notifier does not send, gets the sorted ids joined by commas.
 */
export function groupKey(alerts: readonly Alert[]): string {
  return [...new Set(alerts.map((a) => a.projectId))].sort(compareCodeUnits).join(",");
}

export function webhookPayload(alerts: readonly Alert[], sentAtMs: number): WebhookPayload {
  return {
    version: WEBHOOK_SCHEMA_VERSION,
    group_key: groupKey(alerts),
    sent_at: new Date(sentAtMs).toISOString(),
    alerts: alerts.map(toWebhookAlert),
  };
}

/**
 * The same for every attempt at the same set of alerts, whatever their order: the hex SHA-256
 * of the distinct alert ids, sorted by code unit and joined by newlines.
 */
export function idempotencyKey(alerts: readonly Pick<Alert, "id">[]): string {
  const ids = [...new Set(alerts.map((a) => a.id))].sort(compareCodeUnits);
  return createHash("sha256").update(ids.join("\n")).digest("hex");
}

/** `v1=<hex HMAC-SHA256(secret, "<timestamp>.<body>")>`. */
export function signature(secret: string, timestamp: number, body: string): string {
  const mac = createHmac("sha256", secret).update(`${timestamp}.${body}`).digest("hex");
  return `v1=${mac}`;
}

export interface WebhookRequest {
  readonly body: string;
  readonly headers: Readonly<Record<string, string>>;
}

/**
 * The body and headers of one attempt: the custom headers first, then the sink's own (which
 * therefore win, though custom ones are also refused at configuration). `nowMs` gives both the
 * body's `sent_at` and the signed timestamp, so each attempt is signed afresh.
 */
export function webhookRequest(
  alerts: readonly Alert[],
  options: {
    readonly nowMs: number;
    readonly secret?: string | undefined;
    readonly headers?: Readonly<Record<string, string>> | undefined;
  },
): WebhookRequest {
  const body = JSON.stringify(webhookPayload(alerts, options.nowMs));
  const timestamp = Math.floor(options.nowMs / 1000);
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(options.headers ?? {})) {
    const lower = name.toLowerCase();
    if (!RESERVED_HEADERS.has(lower) && !lower.startsWith(RESERVED_HEADER_PREFIX)) {
      headers[lower] = value;
    }
  }
  headers["content-type"] = "application/json";
  headers["user-agent"] = `${PACKAGE.name}/${PACKAGE.version}`;
  headers[WEBHOOK_HEADERS.idempotencyKey] = idempotencyKey(alerts);
  headers[WEBHOOK_HEADERS.timestamp] = String(timestamp);
  if (options.secret !== undefined) {
    headers[WEBHOOK_HEADERS.signature] = signature(options.secret, timestamp, body);
  }
  return { body, headers };
}

function compareCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
