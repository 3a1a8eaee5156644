/**
 * `wait`'s spans: each operation it waited on that ended is sent as the span of its last attempt,
 * a child of the CI job's trace context (`--traceparent`, else the `TRACEPARENT` variable CI
 * tracing tools set), so that the job's trace shows the branch creation and the compute start it
 * waited for (docs/opentelemetry.md). Tracing never changes the exit status: a malformed context,
 * invalid settings or a collector that fails are each one line on standard error, naming no
 * URL credentials and no header.
 */
import { displayUrl, type OtlpTarget } from "../config/index.js";
import type { Operation } from "../contract/index.js";
import {
  finalAttemptSpan,
  loadWire,
  parseTraceParent,
  withoutSecrets,
  type TraceParent,
} from "../otlp/index.js";
import { PACKAGE } from "../version.js";
import type { WaitSettings } from "./wait-settings.js";

/** The trace context given, and where from (`--traceparent` or `TRACEPARENT`). */
export type TraceContext =
  | { readonly kind: "none" }
  | { readonly kind: "parent"; readonly source: string; readonly parent: TraceParent }
  | {
      readonly kind: "malformed";
      readonly source: string;
      readonly text: string;
      readonly reason: string;
    };

const FLAG = "--traceparent";

/** The context of `--traceparent` (which wins), else of `TRACEPARENT`; an empty one is none. */
export function readTraceContext(flag: string | undefined, env: NodeJS.ProcessEnv): TraceContext {
  const [source, text] = flag !== undefined ? [FLAG, flag] : ["TRACEPARENT", env.TRACEPARENT];
  if (text === undefined || text.trim() === "") return { kind: "none" };
  const read = parseTraceParent(text);
  return read.ok
    ? { kind: "parent", source, parent: read.parent }
    : { kind: "malformed", source, text, reason: read.reason };
}

/** How the spans are sent, as the settings and the context decide. */
export interface TracePlan {
  /** Where the spans go; absent: none are sent. */
  readonly target?: OtlpTarget;
  /** The context they are children of; absent: each is in its operation's own trace. */
  readonly parent?: TraceParent;
  /** The resource's attributes. */
  readonly resource: Readonly<Record<string, string>>;
  /** Warnings and notes for standard error, each one line, said before the wait. */
  readonly notes: readonly string[];
}

/**
 * The plan: no endpoint, no spans (and a note only when `--traceparent` asked for them); under a
 * valid context that is sampled, children of it; under a malformed one, a warning and spans
 * without a parent. A context its caller did not sample is respected as OpenTelemetry's
 * parent-based sampling does: no spans.
 */
export function planTracing(settings: WaitSettings, context: TraceContext): TracePlan {
  const resource = { "service.version": PACKAGE.version, ...settings.resource };
  const explicit = context.kind !== "none" && context.source === FLAG;
  if (settings.otlpProblem !== undefined) {
    return {
      resource,
      notes: [
        `warning: no spans are exported, the OpenTelemetry settings are invalid: ${settings.otlpProblem}`,
      ],
    };
  }
  const target = settings.traces;
  if (target === undefined) {
    // Spans turned off on purpose (OTEL_TRACES_EXPORTER=none) need no note.
    const note = `note: ${FLAG} is unused: no OTLP endpoint is set (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT)`;
    return { resource, notes: explicit && !settings.endpointSet ? [note] : [] };
  }
  switch (context.kind) {
    case "none":
      return { target, resource, notes: [] };
    case "malformed": {
      const shown = JSON.stringify(context.text.slice(0, 80));
      const warning = `warning: ${context.source} ${shown} ${context.reason}: the spans are exported without a parent`;
      return { target, resource, notes: [warning] };
    }
    case "parent": {
      if (context.parent.sampled) return { target, parent: context.parent, resource, notes: [] };
      const note = `note: the ${FLAG} context is not sampled (flags 00): no spans are exported`;
      return { resource, notes: explicit ? [note] : [] };
    }
  }
}

/**
 * Sends the span of each operation of `operations` that ended; a warning line when the collector
 * did not take them (never its URL's credentials, never a header).
 */
export async function sendWaitSpans(
  plan: TracePlan,
  operations: readonly Operation[],
): Promise<string | undefined> {
  const { target } = plan;
  if (target === undefined) return undefined;
  const records = operations
    .map((op) => finalAttemptSpan(op))
    .filter((record) => record !== undefined);
  if (records.length === 0) return undefined;
  // OpenTelemetry's packages are loaded only now, when there is something to send.
  const wire = await loadWire();
  const resource = wire.spanResource(plan.resource);
  const spans = records.map((record) =>
    wire.readableSpan(record, resource, { parent: plan.parent }),
  );
  const where = displayUrl(target.url);
  const what =
    spans.length === 1
      ? "the span of 1 operation was"
      : `the spans of ${spans.length} operations were`;
  try {
    const outcome = await wire.sendSpansOnce(target, spans);
    return outcome.ok ? undefined : `warning: ${what} not exported to ${where}: ${outcome.detail}`;
  } catch (error) {
    // Not expected (the send never rejects), and still never the job's failure.
    const detail = withoutSecrets(String(error), target).slice(0, 200);
    return `warning: ${what} not exported to ${where}: ${detail}`;
  }
}
