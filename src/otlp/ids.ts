/**
 * The ids a span gets, derived from what it is about, so that the same operation attempt always
 * gives the same span (a delivery repeated after a crash is the same span, not a second one)
 * and anyone can compute them (docs/opentelemetry.md):
 *
 *   trace id  = the first 16 bytes of SHA-256("pgcp-exporter/operation/" + operation id)
 *   span id   = the first 8 bytes of SHA-256("pgcp-exporter/operation/" + operation id
 *                                            + "/attempt/" + attempt)
 *
 * and for a platform incident "pgcp-exporter/incident/" + incident id, its span id from that
 * text + "/span". Ids are lowercase hex. An id of all zeros (invalid in OpenTelemetry, and never
 * seen in practice) has its last byte set to 1.
 *
 * It also reads and writes W3C trace context (`traceparent`), which CI tracing tools set.
 */
import { createHash } from "node:crypto";

const OPERATION = "pgcp-exporter/operation/";
const INCIDENT = "pgcp-exporter/incident/";

/** A span's place: its trace and its own id (lowercase hex). */
export interface SpanIds {
  readonly traceId: string;
  readonly spanId: string;
}

/** The trace of an operation: every attempt's span is in it. */
export function operationTraceId(operationId: string): string {
  return digest(OPERATION + operationId, 16);
}

/** The ids of an operation's attempt (1 for the first). */
export function operationSpanIds(operationId: string, attempt: number): SpanIds {
  return {
    traceId: operationTraceId(operationId),
    spanId: digest(`${OPERATION}${operationId}/attempt/${attempt}`, 8),
  };
}

/** The ids of a platform incident's span. */
export function incidentSpanIds(incidentId: string): SpanIds {
  return {
    traceId: digest(INCIDENT + incidentId, 16),
    spanId: digest(`${INCIDENT}${incidentId}/span`, 8),
  };
}

function digest(text: string, bytes: number): string {
  const hash = createHash("sha256").update(text, "utf8").digest().subarray(0, bytes);
  if (hash.every((b) => b === 0)) hash[bytes - 1] = 1;
  return hash.toString("hex");
}

/** A W3C trace context's parent: the trace and span that new spans become children of. */
export interface TraceParent extends SpanIds {
  /** The parent was sampled (flag 01). */
  readonly sampled: boolean;
}

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;

/**
 * Reads a `traceparent` header value (W3C Trace Context, level 1): the parent, or why it is not
 * one. A later version's extra fields are allowed, as the specification asks.
 */
export function parseTraceParent(
  text: string,
): { ok: true; parent: TraceParent } | { ok: false; reason: string } {
  const match = TRACEPARENT.exec(text.trim());
  if (match === null) {
    return { ok: false, reason: "is not version-traceid-spanid-flags in lowercase hex" };
  }
  const [, version = "", traceId = "", spanId = "", flags = "", rest] = match;
  if (version === "ff") return { ok: false, reason: "has the invalid version ff" };
  if (version === "00" && rest !== undefined) {
    return { ok: false, reason: "has fields after the flags, which version 00 does not allow" };
  }
  if (/^0+$/.test(traceId)) return { ok: false, reason: "has a trace id of all zeros" };
  if (/^0+$/.test(spanId)) return { ok: false, reason: "has a parent id of all zeros" };
  return { ok: true, parent: { traceId, spanId, sampled: (parseInt(flags, 16) & 1) === 1 } };
}

/** The `traceparent` value of a span. */
export function formatTraceParent(ids: SpanIds, sampled = true): string {
  return `00-${ids.traceId}-${ids.spanId}-${sampled ? "01" : "00"}`;
}
