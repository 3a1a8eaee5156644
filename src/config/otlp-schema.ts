/**
 * `otlp:` in the configuration: the OpenTelemetry export (docs/opentelemetry.md). Operations and
 * platform incidents go out as spans, and the metrics as OTLP metrics, over OTLP/HTTP. Off unless
 * an endpoint is set, here or by the standard `OTEL_EXPORTER_OTLP_*` variables (`load.ts`).
 * Headers (tokens) are secrets: they come only from `OTEL_EXPORTER_OTLP_HEADERS` and its
 * per-signal forms (`otlp.ts`), never from the file.
 */
import { z } from "zod";
import { positiveDuration } from "./duration.js";

/** The OTLP/HTTP encodings, as `OTEL_EXPORTER_OTLP_PROTOCOL` names them. */
export const OTLP_PROTOCOLS = ["http/protobuf", "http/json"] as const;
export type OtlpProtocol = (typeof OTLP_PROTOCOLS)[number];

/** The variables the headers come from (secrets, `otlp.ts`). */
export const OTLP_HEADER_VARIABLES = {
  all: "OTEL_EXPORTER_OTLP_HEADERS",
  traces: "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
  metrics: "OTEL_EXPORTER_OTLP_METRICS_HEADERS",
} as const;

/** The service name spans and metrics carry when none is set. */
export const DEFAULT_SERVICE_NAME = "pgcp-exporter";

const httpUrl = z.string().refine((text) => {
  try {
    const url = new URL(text);
    return url.protocol === "http:" || url.protocol === "https:";
  } catch {
    return false;
  }
}, "must be an http:// or https:// URL");

const protocolSchema = z.enum(OTLP_PROTOCOLS, {
  error: () =>
    `must be one of ${OTLP_PROTOCOLS.join(", ")} (grpc is not supported: use http/protobuf on port 4318)`,
});

export const otlpSchema = z
  .object({
    /** The collector's base URL; `/v1/traces` and `/v1/metrics` are appended. */
    endpoint: httpUrl.optional(),
    protocol: protocolSchema.default("http/protobuf"),
    /** How long one export may take, its retries included. */
    timeout: positiveDuration.default(10),
    /** `service.name` of the resource. */
    serviceName: z.string().min(1).default(DEFAULT_SERVICE_NAME),
    /** More resource attributes (`deployment.environment.name: production`). */
    resourceAttributes: z.record(z.string().min(1), z.string()).default({}),
    traces: z
      .object({
        /** Export operations and incidents as spans whenever an endpoint is set. */
        enabled: z.boolean().default(true),
        /** The traces URL, used as it is (instead of the base endpoint's `/v1/traces`). */
        endpoint: httpUrl.optional(),
        protocol: protocolSchema.optional(),
        /** Most spans one export request carries. */
        batchSize: z.number().int().min(1).max(10_000).default(512),
        /** A span the collector has not taken by this age goes to the span dead letters. */
        maxAge: positiveDuration.default(86_400),
      })
      .strict()
      .default({ enabled: true, batchSize: 512, maxAge: 86_400 }),
    metrics: z
      .object({
        /** Push the metrics whenever an endpoint is set (`/metrics` is served either way). */
        enabled: z.boolean().default(true),
        /** The metrics URL, used as it is (instead of the base endpoint's `/v1/metrics`). */
        endpoint: httpUrl.optional(),
        protocol: protocolSchema.optional(),
        /** How often the metrics are pushed. */
        interval: positiveDuration.default(60),
      })
      .strict()
      .default({ enabled: true, interval: 60 }),
  })
  .strict();
export type OtlpConfig = z.infer<typeof otlpSchema>;

/** The `otlp:` section when the configuration has none: everything off. */
export const DEFAULT_OTLP: OtlpConfig = otlpSchema.parse({});
