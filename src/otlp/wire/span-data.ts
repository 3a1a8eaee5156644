/**
 * A span record as OpenTelemetry's span: its name, times, status, attributes and links, as the
 * OTLP exporters serialise it (docs/opentelemetry.md has the whole mapping). Pure: the ids come
 * from `ids.ts`, the times from the record.
 *
 * An operation's attempt is a span named by its action, from `created_at` to the attempt's end,
 * with status ERROR for `failed` and `error`, `cicd.pipeline.result` from its status, and the
 * `pgcp.*` attributes; a retry links to the attempt before it. A platform incident is a span
 * from its first failure to its resolution that links to the attempts whose failures joined it.
 */
import { SpanKind, SpanStatusCode, type Attributes, type Link } from "@opentelemetry/api";
import { hrTimeDuration, millisToHrTime } from "@opentelemetry/core";
import type { Resource } from "@opentelemetry/resources";
import type { ReadableSpan } from "@opentelemetry/sdk-trace-base";
import type { IncidentSpan, OperationSpan, SpanRecord } from "../../store/index.js";
import { isFailure } from "../../sync/index.js";
import { PACKAGE } from "../../version.js";
import { incidentSpanIds, operationSpanIds, type SpanIds, type TraceParent } from "../ids.js";

/** `cicd.pipeline.result` of each end status (OpenTelemetry's CI/CD conventions). */
export const PIPELINE_RESULT: Readonly<Record<string, string>> = {
  finished: "success",
  failed: "failure",
  error: "error",
  cancelled: "cancellation",
  skipped: "skip",
};

/** The instrumentation scope every span carries. */
const SCOPE = { name: PACKAGE.name, version: PACKAGE.version };

/** Where a span is placed: its own trace (the exporter's), or under a CI job's span (`wait`). */
export interface Placement {
  readonly parent?: TraceParent | undefined;
}

/** The span `record` tells of, for the OTLP exporters. */
export function readableSpan(
  record: SpanRecord,
  resource: Resource,
  placement: Placement = {},
): ReadableSpan {
  return record.kind === "operation"
    ? operationSpan(record, resource, placement.parent)
    : incidentSpan(record, resource);
}

/** The attributes of an operation's attempt (`pgcp.*` and the CI/CD conventions). */
export function operationAttributes(record: OperationSpan): Attributes {
  const attributes: Attributes = {
    "pgcp.operation.id": record.operationId,
    "pgcp.operation.action": record.action,
    "pgcp.operation.status": record.status,
    "pgcp.operation.attempt": record.attempt,
    "pgcp.operation.failures_count": record.failuresCount,
    "pgcp.project.id": record.projectId,
  };
  const optional: [string, string | undefined][] = [
    ["pgcp.project.name", record.projectName],
    ["pgcp.branch.id", record.branchId],
    ["pgcp.branch.name", record.branchName],
    ["pgcp.endpoint.id", record.endpointId],
    ["pgcp.endpoint.name", record.endpointName],
    ["pgcp.region.id", record.regionId],
  ];
  for (const [key, value] of optional) if (value !== undefined) attributes[key] = value;
  const result = PIPELINE_RESULT[record.status];
  if (result !== undefined) attributes["cicd.pipeline.result"] = result;
  if (isFailure(record.status)) attributes["error.type"] = record.status;
  return attributes;
}

function operationSpan(
  record: OperationSpan,
  resource: Resource,
  parent: TraceParent | undefined,
): ReadableSpan {
  const own = operationSpanIds(record.operationId, record.attempt);
  const links: Link[] = [];
  // Under a CI job's span, the span links to the operation's own (the exporter's) span.
  if (parent !== undefined) links.push(link(own, "operation"));
  if (record.attempt > 1) {
    links.push(link(operationSpanIds(record.operationId, record.attempt - 1), "previous_attempt"));
  }
  const failed = isFailure(record.status);
  return span({
    name: record.action,
    ids: parent === undefined ? own : { traceId: parent.traceId, spanId: own.spanId },
    parent,
    startMs: record.startMs,
    endMs: record.endMs,
    status: failed
      ? { code: SpanStatusCode.ERROR, message: record.error ?? record.status }
      : { code: SpanStatusCode.UNSET },
    attributes: operationAttributes(record),
    links,
    resource,
  });
}

function incidentSpan(record: IncidentSpan, resource: Resource): ReadableSpan {
  return span({
    name: "platform_incident",
    ids: incidentSpanIds(record.incidentId),
    parent: undefined,
    startMs: record.startMs,
    endMs: record.endMs,
    status: { code: SpanStatusCode.ERROR, message: record.errorClass },
    attributes: {
      "pgcp.incident.id": record.incidentId,
      "pgcp.incident.action": record.action,
      "pgcp.incident.error_class": record.errorClass,
      "pgcp.incident.failures": record.failures,
      "pgcp.incident.project_count": record.projectCount,
      "pgcp.region.id": record.regionId,
      "error.type": "platform_incident",
    },
    links: record.links.map((l) => link(operationSpanIds(l.operationId, l.attempt), "failure")),
    resource,
  });
}

function link(ids: SpanIds, kind: string): Link {
  return {
    context: { traceId: ids.traceId, spanId: ids.spanId, traceFlags: 1, isRemote: true },
    attributes: { "pgcp.link.kind": kind },
  };
}

function span(parts: {
  readonly name: string;
  readonly ids: SpanIds;
  readonly parent: TraceParent | undefined;
  readonly startMs: number;
  readonly endMs: number;
  readonly status: ReadableSpan["status"];
  readonly attributes: Attributes;
  readonly links: Link[];
  readonly resource: Resource;
}): ReadableSpan {
  const startTime = millisToHrTime(parts.startMs);
  // A record dated oddly never gives a span that ends before it starts.
  const endTime = millisToHrTime(Math.max(parts.startMs, parts.endMs));
  const context = { traceId: parts.ids.traceId, spanId: parts.ids.spanId, traceFlags: 1 };
  return {
    name: parts.name,
    kind: SpanKind.INTERNAL,
    spanContext: () => context,
    ...(parts.parent === undefined
      ? {}
      : {
          parentSpanContext: {
            traceId: parts.parent.traceId,
            spanId: parts.parent.spanId,
            traceFlags: parts.parent.sampled ? 1 : 0,
            isRemote: true,
          },
        }),
    startTime,
    endTime,
    duration: hrTimeDuration(startTime, endTime),
    status: parts.status,
    attributes: parts.attributes,
    links: parts.links,
    events: [],
    ended: true,
    resource: parts.resource,
    instrumentationScope: SCOPE,
    droppedAttributesCount: 0,
    droppedEventsCount: 0,
    droppedLinksCount: 0,
  };
}
