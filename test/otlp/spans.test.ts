/**
 * Operations reach OpenTelemetry as spans (docs/opentelemetry.md): the exporter in-process,
 * watching the simulator, sends to the local OTLP receiver (`test/support/otlp-receiver.ts`,
 * which decodes by the OTLP specification: no collector can run here). Shown over both
 * encodings: one span per attempt that ended, with the documented ids, times and attributes,
 * none twice; and through a collector outage, nothing lost, while polling and `/metrics` go on
 * and the collector's token is never logged.
 */
import { afterEach, describe, expect, it } from "vitest";
import { operationSpanIds, operationTraceId } from "../../src/otlp/ids.js";
import type { TruthOperation } from "../../src/simulator/index.js";
import {
  startOtlpReceiver,
  type OtlpReceiver,
  type ReceivedSpan,
} from "../support/otlp-receiver.js";
import type { TestSimulator } from "../support/simulator.js";
import { removeDir, tempDir } from "../support/temp-dir.js";
import {
  createProject,
  exporterSettings,
  failsThenFinishes,
  sampleValue,
  scriptOperation,
  startAlertExporter,
  startSim,
  waitFor,
  waitForFirstPolls,
  type AlertExporter,
  type SimProject,
} from "../alerts/e2e/support.js";
import { runsThen } from "../support/operation-steps.js";

const TOKEN = "OTLPTOKENSECRET-5d1c";

interface Harness {
  readonly sim: TestSimulator;
  readonly receiver: OtlpReceiver;
  readonly exporter: AlertExporter;
  readonly project: SimProject;
}

let closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  const now = closers;
  closers = [];
  for (const close of now.reverse()) await close();
});

async function start(protocol: "http/protobuf" | "http/json"): Promise<Harness> {
  const sim = await startSim();
  closers.push(() => sim.close());
  const receiver = await startOtlpReceiver();
  closers.push(() => receiver.close());
  const dir = await tempDir("pgcp-otlp-spans-");
  closers.push(() => removeDir(dir));
  const project = await createProject(sim);
  const exporter = await startAlertExporter(
    [
      exporterSettings(sim, dir, [project.projectId]),
      {
        otlp: {
          endpoint: receiver.url,
          protocol,
          timeout: 2,
          serviceName: "pgcp-test",
          metrics: { enabled: false },
        },
      },
    ],
    { OTEL_EXPORTER_OTLP_HEADERS: `authorization=Bearer%20${TOKEN}` },
  );
  closers.push(() => exporter.stop());
  await waitForFirstPolls(exporter, [project.projectId]);
  return { sim, receiver, exporter, project };
}

/** The attempts of the truth's operations that ended, as the documented numbering gives them. */
function expectedAttempts(truth: readonly TruthOperation[], ids: ReadonlySet<string>) {
  return truth
    .filter((op) => ids.has(op.id))
    .flatMap((op) =>
      op.history
        .filter((h) => ["failed", "error", "finished", "cancelled", "skipped"].includes(h.status))
        .map((h) => ({
          op,
          status: h.status,
          attempt:
            h.status === "failed" || h.status === "error"
              ? Math.max(h.failures_count, 1)
              : h.failures_count + 1,
          // The API's updated_at is the arrival's time in whole seconds.
          endMs: Math.floor(Date.parse(h.at) / 1000) * 1000,
        })),
    );
}

const key = (s: { traceId: string; spanId: string }) => `${s.traceId}/${s.spanId}`;

describe.each(["http/protobuf", "http/json"] as const)("over %s", (protocol) => {
  it("sends one span per attempt that ended, with the documented ids, times and attributes", async () => {
    const { sim, receiver, exporter, project } = await start(protocol);
    const retried = await scriptOperation(
      sim,
      project,
      "start_compute",
      failsThenFinishes(1, 3, "compute node unavailable"),
      { onEndpoint: true },
    );
    const plain = await scriptOperation(sim, project, "create_branch", runsThen("finished", 1));
    // The failure is read as it stands before the retry, so its span ends at its updated_at.
    await sim.sim.advance(2);
    await waitFor("the failure read", () =>
      exporter
        .state(project.projectId)
        ?.tracked.some((t) => t.id === retried.id && t.status === "failed"),
    );
    await sim.sim.advance(3);
    const truth = await sim.sim.truth(project.projectId);
    const expected = expectedAttempts(truth, new Set([retried.id, plain.id]));
    expect(expected.map((e) => `${e.op.action}:${e.attempt}:${e.status}`).sort()).toEqual([
      "create_branch:1:finished",
      "start_compute:1:failed",
      "start_compute:2:finished",
    ]);
    // The project's own creation operations end too: the test looks at its own operations.
    const ours = () =>
      receiver
        .spans()
        .filter((s) => [retried.id, plain.id].includes(String(s.attributes["pgcp.operation.id"])));
    await receiver.waitForSpans(() => ours().length >= expected.length);
    const spans = ours();
    // A few more polls: a span sent twice would show.
    const sequence = exporter.state(project.projectId)?.sequence ?? 0;
    await waitFor(
      "two more commits",
      () => (exporter.state(project.projectId)?.sequence ?? 0) >= sequence + 2,
    );
    expect(ours()).toHaveLength(expected.length);

    for (const e of expected) {
      const ids = operationSpanIds(e.op.id, e.attempt);
      const span = spans.find((s) => s.spanId === ids.spanId);
      expect(span, `${e.op.action} attempt ${e.attempt}`).toBeDefined();
      const s = span as ReceivedSpan;
      expect(s.traceId).toBe(operationTraceId(e.op.id));
      expect(s.parentSpanId).toBe("");
      expect(s.name).toBe(e.op.action);
      expect(s.startNs).toBe(BigInt(Date.parse(e.op.created_at)) * 1_000_000n);
      expect(s.endNs).toBe(BigInt(e.endMs) * 1_000_000n);
      expect(s.status.code).toBe(e.status === "failed" ? 2 : 0);
      expect(s.resource["service.name"]).toBe("pgcp-test");
      expect(s.attributes).toMatchObject({
        "pgcp.operation.id": e.op.id,
        "pgcp.operation.action": e.op.action,
        "pgcp.operation.status": e.status,
        "pgcp.operation.attempt": e.attempt,
        "pgcp.project.id": project.projectId,
        "pgcp.branch.id": project.branchId,
        "cicd.pipeline.result": e.status === "failed" ? "failure" : "success",
      });
    }
    const failed = spans.find((s) => s.attributes["pgcp.operation.status"] === "failed");
    expect(failed?.status.message).toBe("compute node unavailable");
    expect(failed?.attributes["error.type"]).toBe("failed");
    expect(failed?.attributes["pgcp.endpoint.id"]).toBe(project.endpointId);
    // The queue is empty once the collector has everything.
    expect(exporter.state(project.projectId)?.spans).toBeUndefined();
    expect(sampleValue(await exporter.metrics(), "pgcp_otlp_spans_sent_total")).toBe(
      receiver.spans().length,
    );
  });
});

it("loses no span through a collector outage, and polls and serves /metrics meanwhile", async () => {
  const { sim, receiver, exporter, project } = await start("http/protobuf");
  // The collector is down (it answers 503, and now and then drops the connection).
  let down = true;
  let n = 0;
  receiver.setFallback(() =>
    down
      ? n++ % 3 === 2
        ? { drop: true }
        : { status: 503, headers: { "retry-after": "1" } }
      : { status: 200, headers: { "content-type": "application/json" }, body: "{}" },
  );
  const ops: string[] = [];
  for (let i = 0; i < 4; i++) {
    ops.push((await scriptOperation(sim, project, "apply_config", runsThen("finished", 1))).id);
  }
  await sim.sim.advance(2);
  const queued = () =>
    (exporter.state(project.projectId)?.spans ?? []).filter(
      (q) => q.span.kind === "operation" && ops.includes(q.span.operationId),
    ).length;
  await waitFor("the spans queued", () => queued() === 4);
  await waitFor("a failed export", () => receiver.receiver.requests.length >= 2, 15_000);
  // Polling goes on, and /metrics says what waits and what failed.
  const sequence = exporter.state(project.projectId)?.sequence ?? 0;
  await waitFor(
    "more commits",
    () => (exporter.state(project.projectId)?.sequence ?? 0) > sequence,
  );
  const during = await exporter.metrics();
  expect(sampleValue(during, "pgcp_otlp_spans_queued")).toBe(
    exporter.state(project.projectId)?.spans?.length,
  );
  expect(
    sampleValue(during, "pgcp_otlp_export_failures_total", {
      signal: "traces",
      reason: "unavailable",
    }) ?? 0,
  ).toBeGreaterThan(0);
  expect(receiver.spans()).toHaveLength(0);

  down = false;
  const expected = ops.map((id) => key(operationSpanIds(id, 1)));
  const spans = await receiver.waitForSpans(
    (s) => expected.every((k) => s.some((x) => key(x) === k)),
    20_000,
  );
  // Each exactly once.
  expect(
    spans
      .map(key)
      .filter((k) => expected.includes(k))
      .sort(),
  ).toEqual([...expected].sort());
  await waitFor("the queue drained", () => exporter.state(project.projectId)?.spans === undefined);
  expect(sampleValue(await exporter.metrics(), "pgcp_otlp_spans_queued")).toBe(0);
  // One line when the outage began, one when it ended; the token never.
  const lines = exporter.logs.lines().map((l) => JSON.stringify(l));
  expect(lines.filter((l) => l.includes("exporting traces over OTLP fails"))).toHaveLength(1);
  expect(lines.filter((l) => l.includes("exporting traces over OTLP works again"))).toHaveLength(1);
  expect(lines.join("\n")).not.toContain(TOKEN);
  expect(
    receiver.receiver.requests.every((r) => r.headers.authorization === `Bearer ${TOKEN}`),
  ).toBe(true);
});
