/**
 * The command line of `pgcp-exporter wait`, read into what to wait for: which project, which
 * operations (ids, or the open ones, maybe on one branch or endpoint), how often, how long, the
 * retry grace, the output and the trace context to export spans under; or, with
 * `--print-trace-ids`, which operation's span ids to print. Every problem is a sentence naming
 * the flag; nothing is read yet. A malformed `--traceparent` is no problem here: tracing never
 * fails the wait, so it is warned about when the spans are sent (`wait-trace.ts`).
 */
import { parseArgs } from "node:util";
import { RESOURCE_ID_PATTERN, idSchema } from "../contract/index.js";
import { parseDuration } from "../config/index.js";
import { flagProblem } from "./usage.js";

export const WAIT_HELP = `usage: pgcp-exporter wait --project P (--operation ID ... | --open) [options]
       pgcp-exporter wait --print-trace-ids ID [--attempt N]

Waits until the control plane's operations have ended, polling about every 5 s, and exits 0
when all finished (or were skipped), 1 when one failed, 3 on timeout.

options:
  --project P          the project the operations belong to (required)
  --operation ID       an operation to wait for; repeat for several
  --open               wait for every operation of the project open now
  --branch B           with --open: only those on branch B
  --endpoint E         with --open: only those on endpoint E
  --interval D         pause between polls (default 5s)
  --timeout D          give up after this long, exit 3 (default 10m)
  --retry-grace D      watch a failed operation this much longer in case the service retries
                       it (default 0s: failed is the end)
  --output FORMAT      text (a line per status change and a summary; the default) or json
                       (one document at the end with each operation's final record)
  --exporter URL       a running exporter to nudge (POST /-/nudge) when the wait starts and
                       when it ends, so that it polls the project at once; basic auth as
                       https://user:password@host:9642 (a failed nudge is only a warning)
  --traceparent VALUE  the W3C trace context to export the operations' spans under (default
                       the TRACEPARENT variable, which CI tracing tools set)
  --print-trace-ids ID print the span ids the operation ID gets, as JSON, and exit (no API
                       call): its trace id and the span id of one attempt
  --attempt N          with --print-trace-ids: the attempt (default 1, the first)

Tracing: with an OTLP endpoint (OTEL_EXPORTER_OTLP_ENDPOINT or
OTEL_EXPORTER_OTLP_TRACES_ENDPOINT; OTEL_EXPORTER_OTLP_PROTOCOL http/protobuf or http/json,
OTEL_EXPORTER_OTLP_HEADERS), each operation that ended is exported as a span, a child of the
trace context when one is given. A malformed context or a collector that fails is a warning:
the exit status is the wait's.

Durations: seconds, or a value like 500ms, 30s, 5m, 1h30m.
The API key comes from PGCP_API_KEY (or the file PGCP_API_KEY_FILE names), the address from
PGCP_API_URL (default the real API).

exit status: 0 all finished or skipped; 1 one failed, error or cancelled; 2 a usage or
configuration error, or an operation or project the API does not know; 3 timeout; 4 the API
cannot be reached or refuses the key; 130 stopped by Ctrl-C or SIGTERM (the summary is printed).`;

export type WaitTarget =
  | { readonly kind: "ids"; readonly operationIds: readonly string[] }
  | { readonly kind: "open"; readonly branchId?: string; readonly endpointId?: string };

export type WaitOutput = "text" | "json";

export interface WaitRequest {
  readonly projectId: string;
  readonly target: WaitTarget;
  readonly intervalMs: number;
  readonly timeoutMs: number;
  readonly retryGraceMs: number;
  readonly output: WaitOutput;
  /** A running exporter to nudge at the start and the end. */
  readonly exporterUrl?: string;
  /** `--traceparent`, as given (it is read, and warned about, when spans are sent). */
  readonly traceParent?: string;
}

/** `--print-trace-ids`: the ids of one attempt of an operation. */
export interface TraceIdsRequest {
  readonly operationId: string;
  readonly attempt: number;
}

export type WaitArgs =
  | { readonly kind: "request"; readonly request: WaitRequest }
  | { readonly kind: "print_trace_ids"; readonly request: TraceIdsRequest }
  | { readonly kind: "help" }
  | { readonly kind: "usage_error"; readonly problems: readonly string[] };

const OPTIONS = {
  project: { type: "string" },
  operation: { type: "string", multiple: true },
  open: { type: "boolean" },
  branch: { type: "string" },
  endpoint: { type: "string" },
  interval: { type: "string", default: "5s" },
  timeout: { type: "string", default: "10m" },
  "retry-grace": { type: "string", default: "0s" },
  output: { type: "string", default: "text" },
  exporter: { type: "string" },
  traceparent: { type: "string" },
  "print-trace-ids": { type: "string" },
  attempt: { type: "string" },
  help: { type: "boolean", short: "h" },
} as const;

/** Reads `argv` (the arguments after `wait`): a request, a call for help, or what is wrong. */
export function parseWaitArgs(argv: readonly string[]): WaitArgs {
  let values;
  try {
    ({ values } = parseArgs({ args: [...argv], options: OPTIONS, strict: true }));
  } catch (error) {
    return { kind: "usage_error", problems: [flagProblem(error, Object.keys(OPTIONS))] };
  }
  if (values.help === true) return { kind: "help" };
  if (values["print-trace-ids"] !== undefined) {
    const extra = WAIT_ONLY.filter((flag) => values[flag] !== undefined);
    return traceIdsArgs(values["print-trace-ids"], values.attempt ?? "1", extra);
  }
  if (values.attempt !== undefined) {
    return { kind: "usage_error", problems: ["--attempt goes with --print-trace-ids"] };
  }
  const problems: string[] = [];
  const resourceId = (flag: string, value: string | undefined): string | undefined => {
    if (value !== undefined && !RESOURCE_ID_PATTERN.test(value)) {
      problems.push(`${flag} ${JSON.stringify(value)} is not an id (^[a-z0-9-]{1,60}$)`);
    }
    return value;
  };
  const duration = (flag: string, text: string, allowZero: boolean): number => {
    const seconds = parseDuration(text);
    if (seconds === undefined || !Number.isFinite(seconds) || (!allowZero && seconds <= 0)) {
      problems.push(
        `${flag} ${JSON.stringify(text)} is not a ${allowZero ? "" : "positive "}duration (use seconds or a value like 500ms, 30s, 5m)`,
      );
      return 0;
    }
    return Math.round(seconds * 1000);
  };

  const projectId = resourceId("--project", values.project);
  if (projectId === undefined) problems.push("--project is required");
  const branchId = resourceId("--branch", values.branch);
  const endpointId = resourceId("--endpoint", values.endpoint);
  const operationIds = values.operation ?? [];
  for (const id of operationIds) {
    if (!idSchema.safeParse(id).success) {
      problems.push(`--operation ${JSON.stringify(id)} is not an operation id`);
    }
  }
  if (operationIds.length > 0 && values.open === true) {
    problems.push("give either --operation or --open, not both");
  } else if (operationIds.length === 0 && values.open !== true) {
    problems.push("give --operation ID (one or more) or --open");
  }
  if (values.open !== true && (branchId !== undefined || endpointId !== undefined)) {
    problems.push("--branch and --endpoint choose among the open operations: use them with --open");
  }
  const intervalMs = duration("--interval", values.interval, false);
  const timeoutMs = duration("--timeout", values.timeout, false);
  const retryGraceMs = duration("--retry-grace", values["retry-grace"], true);
  const output = values.output;
  if (output !== "text" && output !== "json") {
    problems.push(`--output ${JSON.stringify(output)} is neither text nor json`);
  }
  const exporterUrl = values.exporter;
  if (exporterUrl !== undefined && !/^https?:\/\/[^/]/.test(exporterUrl)) {
    problems.push("--exporter must be the exporter's http:// or https:// address");
  }
  if (problems.length > 0 || projectId === undefined || (output !== "text" && output !== "json")) {
    return { kind: "usage_error", problems };
  }
  const target: WaitTarget =
    values.open === true
      ? {
          kind: "open",
          ...(branchId === undefined ? {} : { branchId }),
          ...(endpointId === undefined ? {} : { endpointId }),
        }
      : { kind: "ids", operationIds: [...new Set(operationIds)] };
  return {
    kind: "request",
    request: {
      projectId,
      target,
      intervalMs,
      timeoutMs,
      retryGraceMs,
      output,
      ...(exporterUrl === undefined ? {} : { exporterUrl }),
      ...(values.traceparent === undefined ? {} : { traceParent: values.traceparent }),
    },
  };
}

/** The flags that choose operations to wait for, which `--print-trace-ids` does not take. */
const WAIT_ONLY = ["operation", "open", "branch", "endpoint", "exporter"] as const;

/**
 * `--print-trace-ids ID [--attempt N]`, given the waiting flags that came with it (`extra`).
 * `--project` is allowed, and unused: nothing is read.
 */
function traceIdsArgs(
  operationId: string,
  attemptText: string,
  extra: readonly string[],
): WaitArgs {
  const problems: string[] = [];
  if (!idSchema.safeParse(operationId).success) {
    problems.push(`--print-trace-ids ${JSON.stringify(operationId)} is not an operation id`);
  }
  const attempt = /^[1-9]\d{0,8}$/.test(attemptText) ? Number(attemptText) : undefined;
  if (attempt === undefined) {
    problems.push(`--attempt ${JSON.stringify(attemptText)} is not a positive whole number`);
  }
  if (extra.length > 0) {
    const flags = extra.map((flag) => `--${flag}`).join(", ");
    problems.push(`--print-trace-ids reads nothing: give it without ${flags}`);
  }
  if (problems.length > 0 || attempt === undefined) return { kind: "usage_error", problems };
  return { kind: "print_trace_ids", request: { operationId, attempt } };
}
