/**
 * The OTLP exporters as we build them, to the local OTLP receiver (see
 * `test/support/otlp-receiver.ts`: it decodes by the OTLP specification): a span arrives with the
 * documented ids, times, status and attributes in both encodings, and what a collector answers
 * when it fails is classified without the URL or headers.
 */
import { resourceFromAttributes } from "@opentelemetry/resources";
import { afterEach, describe, expect, it } from "vitest";
import { operationSpanIds } from "../../src/otlp/ids.js";
import { readableSpan } from "../../src/otlp/wire/span-data.js";
import { exportOnce, traceExporter } from "../../src/otlp/wire/transport.js";
import type { OperationSpan } from "../../src/store/index.js";
import { startOtlpReceiver, type OtlpReceiver } from "../support/otlp-receiver.js";

let receiver: OtlpReceiver | undefined;
afterEach(async () => {
  await receiver?.close();
  receiver = undefined;
});

const failedAttempt: OperationSpan = {
  kind: "operation",
  operationId: "0c6e0d4e-6d7e-4b1f-9b53-2f0f3b7f6a01",
  attempt: 2,
  projectId: "bold-river-123456",
  projectName: "billing",
  branchId: "br-main-1",
  endpointId: "ep-cool-2",
  regionId: "aws-eu-central-1",
  action: "start_compute",
  status: "failed",
  failuresCount: 2,
  error: "compute node unavailable",
  startMs: Date.UTC(2026, 10, 29, 9, 0, 0),
  endMs: Date.UTC(2026, 10, 29, 9, 0, 7),
};

describe.each(["http/protobuf", "http/json"] as const)("over %s", (protocol) => {
  it("delivers an attempt's span with the documented ids, times, status and attributes", async () => {
    receiver = await startOtlpReceiver();
    const exporter = traceExporter({
      url: `${receiver.url}/v1/traces`,
      protocol,
      headers: { authorization: "Bearer collector-token" },
      timeoutMs: 5_000,
    });
    const resource = resourceFromAttributes({ "service.name": "pgcp-exporter" });
    const outcome = await exportOnce(exporter, [readableSpan(failedAttempt, resource)]);
    await exporter.shutdown();
    expect(outcome).toEqual({ ok: true });
    const [span] = receiver.spans();
    const ids = operationSpanIds(failedAttempt.operationId, 2);
    expect(span).toMatchObject({
      traceId: ids.traceId,
      spanId: ids.spanId,
      parentSpanId: "",
      name: "start_compute",
      startNs: BigInt(failedAttempt.startMs) * 1_000_000n,
      endNs: BigInt(failedAttempt.endMs) * 1_000_000n,
      status: { code: 2, message: "compute node unavailable" },
      resource: { "service.name": "pgcp-exporter" },
    });
    expect(span?.attributes).toMatchObject({
      "cicd.pipeline.result": "failure",
      "error.type": "failed",
      "pgcp.operation.id": failedAttempt.operationId,
      "pgcp.operation.attempt": 2,
      "pgcp.project.name": "billing",
      "pgcp.region.id": "aws-eu-central-1",
    });
    // A retry links to the attempt before it.
    expect(span?.links).toEqual([
      {
        ...operationSpanIds(failedAttempt.operationId, 1),
        attributes: { "pgcp.link.kind": "previous_attempt" },
      },
    ]);
    expect(receiver.receiver.requests[0]?.headers.authorization).toBe("Bearer collector-token");
  });
});

it("classifies a collector's refusals without its URL or headers", async () => {
  receiver = await startOtlpReceiver();
  const exporter = traceExporter({
    url: `${receiver.url}/v1/traces?token=secret-in-url`,
    protocol: "http/protobuf",
    headers: { authorization: "Bearer collector-token" },
    timeoutMs: 2_000,
  });
  const resource = resourceFromAttributes({});
  const spans = [readableSpan(failedAttempt, resource)];
  receiver.respondWith({ status: 400, body: "bad span" });
  const rejected = await exportOnce(exporter, spans);
  receiver.respondWith({ status: 401 });
  const refused = await exportOnce(exporter, spans);
  await receiver.close();
  const unreachable = await exportOnce(exporter, spans);
  receiver = undefined;
  await exporter.shutdown();
  expect(rejected).toMatchObject({ ok: false, reason: "rejected" });
  expect(refused).toMatchObject({ ok: false, reason: "refused" });
  expect(unreachable).toMatchObject({ ok: false });
  for (const outcome of [rejected, refused, unreachable]) {
    expect(JSON.stringify(outcome)).not.toMatch(/secret-in-url|collector-token/);
  }
});

it("compresses with gzip when OTEL_EXPORTER_OTLP_COMPRESSION asks, as OpenTelemetry's exporter documents", async () => {
  receiver = await startOtlpReceiver();
  const before = process.env.OTEL_EXPORTER_OTLP_COMPRESSION;
  process.env.OTEL_EXPORTER_OTLP_COMPRESSION = "gzip";
  try {
    const exporter = traceExporter({
      url: `${receiver.url}/v1/traces`,
      protocol: "http/protobuf",
      headers: {},
      timeoutMs: 5_000,
    });
    const outcome = await exportOnce(exporter, [
      readableSpan(failedAttempt, resourceFromAttributes({})),
    ]);
    await exporter.shutdown();
    expect(outcome).toEqual({ ok: true });
  } finally {
    if (before === undefined) delete process.env.OTEL_EXPORTER_OTLP_COMPRESSION;
    else process.env.OTEL_EXPORTER_OTLP_COMPRESSION = before;
  }
  expect(receiver.receiver.requests[0]?.headers["content-encoding"]).toBe("gzip");
  expect(receiver.spans().map((s) => s.name)).toEqual(["start_compute"]);
});
