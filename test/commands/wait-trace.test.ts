/**
 * `pgcp-exporter wait` under a CI job's trace, run as the built command against the simulator
 * and the local OTLP receiver (it decodes by the OTLP specification, both encodings): each
 * operation waited on that ended arrives as a child span of the job's context, with the ids
 * anyone can derive and the exporter's attributes; a malformed context, invalid OpenTelemetry
 * settings and a collector that is down, slow or refusing are each a warning that leaves the
 * exit status and the secrets alone; `--print-trace-ids` prints the derived ids without the API.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { Operation } from "../../src/contract/index.js";
import { operationSpanIds, operationTraceId } from "../../src/otlp/ids.js";
import { runsThen, type Steps } from "../support/operation-steps.js";
import { startOtlpReceiver, type OtlpReceiver } from "../support/otlp-receiver.js";
import { runCli, type CliRun } from "../support/run-cli.js";
import type { TestSimulator } from "../support/simulator.js";
import { simulatorWithProject } from "../support/simulator-suite.js";

let sim: TestSimulator;
let projectId: string;
let branchId: string;
simulatorWithProject((s) => ({ sim, projectId, branchId } = s), {
  simulator: { clock: "real" },
});

let receiver: OtlpReceiver | undefined;
afterEach(async () => {
  await receiver?.close();
  receiver = undefined;
});

/** The CI job's span, as a tracing tool sets it in TRACEPARENT. */
const JOB = { traceId: "4bf92f3577b34da6a3ce929d0e0e4736", spanId: "00f067aa0ba902b7" };
const TRACEPARENT = `00-${JOB.traceId}-${JOB.spanId}-01`;

const FAST = ["--interval", "100ms", "--timeout", "15s"];

/** A scripted operation on the project's branch that has ended by the time `wait` reads it. */
function ended(action: string, steps: Steps): Promise<Operation> {
  return sim.sim.scriptOperation({ project_id: projectId, branch_id: branchId, action, steps });
}

const ids = (...ops: Operation[]) => ops.flatMap((op) => ["--operation", op.id]);

/** `wait --project <the project> …args` with the simulator's address and key, and `env`. */
async function wait(args: readonly string[], env: Record<string, string> = {}): Promise<CliRun> {
  const run = await runCli(["wait", "--project", projectId, ...args], {
    PGCP_API_URL: sim.apiUrl,
    PGCP_API_KEY: sim.apiKey,
    ...env,
  });
  expect(run.stdout + run.stderr).not.toContain(sim.apiKey);
  return run;
}

/** The environment that sends spans to the receiver. */
function collector(r: OtlpReceiver, more: Record<string, string> = {}): Record<string, string> {
  return { OTEL_EXPORTER_OTLP_ENDPOINT: r.url, ...more };
}

describe.each(["http/protobuf", "http/json"] as const)("over %s", (protocol) => {
  it("sends each operation that ended as a child of the job's span", async () => {
    receiver = await startOtlpReceiver();
    const created = await ended("create_branch", runsThen("finished", 0));
    // Failed once, retried by the service, then finished: its last attempt is the second.
    const started = await ended("start_compute", [
      { status: "running", after_seconds: 0 },
      { status: "failed", after_seconds: 0.05, error: "compute node unavailable" },
      { status: "running", after_seconds: 0.1 },
      { status: "finished", after_seconds: 0.15 },
    ]);
    const broken = await ended("apply_config", runsThen("error", 0, "disk on fire"));
    const run = await wait(
      [...ids(created, started, broken), ...FAST],
      collector(receiver, {
        OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
        OTEL_SERVICE_NAME: "ci-pipeline",
        TRACEPARENT,
      }),
    );
    // The wait's own outcome: one operation ended in error.
    expect([run.code, run.stderr]).toEqual([1, ""]);

    const spans = await receiver.waitForSpans((s) => s.length >= 3);
    expect(spans).toHaveLength(3);
    const byId = new Map(spans.map((s) => [s.attributes["pgcp.operation.id"], s]));
    const expected: [Operation, number, string][] = [
      [created, 1, "success"],
      [started, 2, "success"],
      [broken, 1, "error"],
    ];
    for (const [op, attempt, result] of expected) {
      const span = byId.get(op.id);
      const own = operationSpanIds(op.id, attempt);
      expect(span).toMatchObject({
        traceId: JOB.traceId,
        parentSpanId: JOB.spanId,
        spanId: own.spanId,
        name: op.action,
        resource: { "service.name": "ci-pipeline" },
      });
      expect(span?.attributes).toMatchObject({
        "cicd.pipeline.result": result,
        "pgcp.operation.id": op.id,
        "pgcp.operation.attempt": attempt,
        "pgcp.project.id": projectId,
        "pgcp.branch.id": branchId,
      });
      expect(typeof span?.resource["service.version"]).toBe("string");
      // The link to the operation's own span, which the exporter sends in the operation's trace.
      expect(span?.links).toContainEqual({
        traceId: own.traceId,
        spanId: own.spanId,
        attributes: { "pgcp.link.kind": "operation" },
      });
    }
    expect(byId.get(broken.id)?.status).toEqual({ code: 2, message: "disk on fire" });
    expect(byId.get(started.id)?.links).toContainEqual({
      ...operationSpanIds(started.id, 1),
      attributes: { "pgcp.link.kind": "previous_attempt" },
    });
  });
});

it("prefers --traceparent to TRACEPARENT, and reports the ids in the JSON document", async () => {
  receiver = await startOtlpReceiver();
  const op = await ended("create_branch", runsThen("finished", 0));
  const flag = { traceId: "0af7651916cd43dd8448eb211c80319c", spanId: "b7ad6b7169203331" };
  const run = await wait(
    [
      ...ids(op),
      ...FAST,
      "--output",
      "json",
      "--traceparent",
      `00-${flag.traceId}-${flag.spanId}-01`,
    ],
    collector(receiver, { TRACEPARENT }),
  );
  expect([run.code, run.stderr]).toEqual([0, ""]);
  const [span] = await receiver.waitForSpans((s) => s.length >= 1);
  expect(span).toMatchObject({ traceId: flag.traceId, parentSpanId: flag.spanId });
  const doc = JSON.parse(run.stdout) as {
    trace_parent?: { trace_id: string; span_id: string };
    operations: { id: string; trace_id?: string; span_id?: string; attempt?: number }[];
  };
  expect(doc.trace_parent).toEqual({ trace_id: flag.traceId, span_id: flag.spanId });
  expect(doc.operations).toEqual([
    expect.objectContaining({
      id: op.id,
      trace_id: operationTraceId(op.id),
      span_id: operationSpanIds(op.id, 1).spanId,
      attempt: 1,
    }),
  ]);
  expect(span?.spanId).toBe(doc.operations[0]?.span_id);
});

it("sends nothing under a context the job did not sample, as parent-based sampling does", async () => {
  receiver = await startOtlpReceiver();
  const op = await ended("create_branch", runsThen("finished", 0));
  const unsampled = `00-${JOB.traceId}-${JOB.spanId}-00`;
  const run = await wait([...ids(op), ...FAST], collector(receiver, { TRACEPARENT: unsampled }));
  expect([run.code, run.stderr]).toEqual([0, ""]);
  expect(receiver.receiver.requests).toHaveLength(0);
});

describe("a malformed trace context", () => {
  it("is a warning naming the problem; the spans go without a parent, the exit status stands", async () => {
    receiver = await startOtlpReceiver();
    const op = await ended("start_compute", runsThen("failed", 0, "no capacity"));
    const zeros = `00-${"0".repeat(32)}-${JOB.spanId}-01`;
    const run = await wait([...ids(op), ...FAST], collector(receiver, { TRACEPARENT: zeros }));
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(
      `pgcp-exporter wait: warning: TRACEPARENT "${zeros}" has a trace id of all zeros: the spans are exported without a parent\n`,
    );
    const [span] = await receiver.waitForSpans((s) => s.length >= 1);
    // Then it is the operation's own span, in the operation's own trace.
    expect(span).toMatchObject({ ...operationSpanIds(op.id, 1), parentSpanId: "" });
    expect(span?.links).toEqual([]);
  });

  it("is said the same way for --traceparent", async () => {
    receiver = await startOtlpReceiver();
    const op = await ended("create_branch", runsThen("finished", 0));
    const run = await wait(
      [...ids(op), ...FAST, "--traceparent", "not-a-context"],
      collector(receiver),
    );
    expect(run.code).toBe(0);
    expect(run.stderr).toContain(
      'warning: --traceparent "not-a-context" is not version-traceid-spanid-flags in lowercase hex',
    );
    await receiver.waitForSpans((s) => s.length >= 1);
  });
});

describe("a collector that fails", () => {
  const token = "collector-TOKEN-7c1e99";

  it("is one warning when it is down: the exit status stands, no header is shown", async () => {
    const down = await startOtlpReceiver();
    const url = down.url;
    await down.close();
    const op = await ended("create_branch", runsThen("finished", 0));
    const run = await wait([...ids(op), ...FAST], {
      OTEL_EXPORTER_OTLP_ENDPOINT: url,
      OTEL_EXPORTER_OTLP_HEADERS: `authorization=Bearer%20${token}`,
      OTEL_EXPORTER_OTLP_TIMEOUT: "1000",
      TRACEPARENT,
    });
    expect(run.code).toBe(0);
    const lines = run.stderr.split("\n").filter((line) => line !== "");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      new RegExp(
        `^pgcp-exporter wait: warning: the span of 1 operation was not exported to ${url}/v1/traces: `,
      ),
    );
    expect(run.stdout + run.stderr).not.toContain(token);
  });

  it("shows neither the URL's credentials nor a token the collector echoes in its refusal", async () => {
    receiver = await startOtlpReceiver();
    receiver.setFallback({ status: 401, body: `invalid credentials: Bearer ${token}` });
    const withUser = new URL(receiver.url);
    withUser.username = "ci";
    withUser.password = "url-PASSWORD-42";
    const op = await ended("create_branch", runsThen("failed", 0, "quota"));
    const run = await wait([...ids(op), ...FAST], {
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${withUser.href}v1/traces`,
      OTEL_EXPORTER_OTLP_HEADERS: `authorization=Bearer%20${token}`,
      TRACEPARENT,
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      `warning: the span of 1 operation was not exported to ${receiver.url}/v1/traces: HTTP 401`,
    );
    expect(run.stdout + run.stderr).not.toMatch(new RegExp(`${token}|url-PASSWORD-42`));
    // The collector did get the header: the refusal was its answer to it.
    expect(receiver.receiver.requests[0]?.headers.authorization).toBe(`Bearer ${token}`);
  });

  it("holds the job up no longer than the export's timeout when it does not answer", async () => {
    receiver = await startOtlpReceiver();
    receiver.setFallback({ delayMs: 15_000 });
    const op = await ended("create_branch", runsThen("finished", 0));
    const started = Date.now();
    const run = await wait(
      [...ids(op), ...FAST],
      collector(receiver, { OTEL_EXPORTER_OTLP_TIMEOUT: "1000", TRACEPARENT }),
    );
    expect(run.code).toBe(0);
    expect(run.stderr).toContain("warning: the span of 1 operation was not exported");
    // The collector would answer after 15 s; the command is done long before.
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});

describe("without a collector", () => {
  it("sends nothing and says nothing of TRACEPARENT", async () => {
    const op = await ended("create_branch", runsThen("finished", 0));
    const run = await wait([...ids(op), ...FAST], { TRACEPARENT });
    expect([run.code, run.stderr]).toEqual([0, ""]);
  });

  it("notes that --traceparent is unused", async () => {
    const op = await ended("create_branch", runsThen("finished", 0));
    const run = await wait([...ids(op), ...FAST, "--traceparent", TRACEPARENT]);
    expect(run.code).toBe(0);
    expect(run.stderr).toBe(
      "pgcp-exporter wait: note: --traceparent is unused: no OTLP endpoint is set (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT)\n",
    );
  });
});

it("warns, and still waits, when the OpenTelemetry settings are meant for another tool", async () => {
  receiver = await startOtlpReceiver();
  const op = await ended("create_branch", runsThen("finished", 0));
  const run = await wait(
    [...ids(op), ...FAST],
    collector(receiver, { OTEL_EXPORTER_OTLP_PROTOCOL: "grpc", TRACEPARENT }),
  );
  expect(run.code).toBe(0);
  expect(run.stderr).toContain(
    "warning: no spans are exported, the OpenTelemetry settings are invalid: otlp.protocol:",
  );
  expect(run.stderr).toContain("(from OTEL_EXPORTER_OTLP_PROTOCOL)");
  expect(receiver.receiver.requests).toHaveLength(0);
});

describe("--print-trace-ids", () => {
  const opId = "0c6e0d4e-6d7e-4b1f-9b53-2f0f3b7f6a01";

  it("prints the derived ids of an attempt, with no API to read", async () => {
    for (const [args, attempt] of [
      [[], 1],
      [["--attempt", "3"], 3],
    ] as const) {
      const run = await runCli(["wait", "--print-trace-ids", opId, ...args]);
      expect([run.code, run.stderr]).toEqual([0, ""]);
      expect(JSON.parse(run.stdout)).toEqual({
        operation_id: opId,
        trace_id: operationSpanIds(opId, attempt).traceId,
        span_id: operationSpanIds(opId, attempt).spanId,
        attempt,
      });
    }
  });

  it.each([
    [["--attempt", "0"], '--attempt "0" is not a positive whole number'],
    [["--open"], "--print-trace-ids reads nothing: give it without --open"],
  ])("refuses %j", async (args, problem) => {
    const run = await runCli(["wait", "--print-trace-ids", opId, ...args]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(problem);
  });
});
