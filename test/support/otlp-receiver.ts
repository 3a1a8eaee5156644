/**
 * A local OTLP/HTTP receiver, as an OpenTelemetry Collector's `otlp` receiver answers: POST
 * `/v1/traces` and `/v1/metrics`, in `application/x-protobuf` or `application/json`. Bodies are
 * decoded by the OTLP specification: protobuf with the opentelemetry-proto schema as the
 * OpenTelemetry packages ship it (`@opentelemetry/otlp-transformer`'s generated module), JSON by
 * the OTLP/JSON mapping (ids in hex, 64-bit integers as strings or numbers). No collector can run
 * here, so this follows the specification's contract instead.
 *
 * Answers come from the wrapped receiver's script (`respondWith`, `setFallback`); what was
 * answered 2xx is what the collector took (`spans()`, `metrics()`).
 */
import { createRequire } from "node:module";
import { gunzipSync } from "node:zlib";
import {
  startReceiver,
  type ReceivedRequest,
  type Receiver,
  type ResponseScript,
  type ResponseSpec,
} from "./receiver.js";

const require = createRequire(import.meta.url);
interface ProtoType {
  decode(buffer: Uint8Array): unknown;
  toObject(message: unknown, options: Record<string, unknown>): unknown;
}
const proto = (
  require("@opentelemetry/otlp-transformer/build/src/generated/root.js") as {
    opentelemetry: {
      proto: {
        collector: {
          trace: { v1: { ExportTraceServiceRequest: ProtoType } };
          metrics: { v1: { ExportMetricsServiceRequest: ProtoType } };
        };
      };
    };
  }
).opentelemetry.proto.collector;

export type AttributeValue = string | number | boolean | AttributeValue[] | null;
export type Attributes = Record<string, AttributeValue>;

export interface ReceivedSpan {
  readonly traceId: string;
  readonly spanId: string;
  /** Empty for a root span. */
  readonly parentSpanId: string;
  readonly name: string;
  /** SPAN_KIND_* as its number (1 internal). */
  readonly kind: number;
  readonly startNs: bigint;
  readonly endNs: bigint;
  /** STATUS_CODE_* as its number (0 unset, 1 ok, 2 error). */
  readonly status: { readonly code: number; readonly message: string };
  readonly attributes: Attributes;
  readonly links: readonly {
    readonly traceId: string;
    readonly spanId: string;
    readonly attributes: Attributes;
  }[];
  readonly resource: Attributes;
  readonly scope: { readonly name: string; readonly version: string };
  /** The request it came in (the receiver's index). */
  readonly request: number;
}

export interface ReceivedPoint {
  readonly attributes: Attributes;
  readonly startNs: bigint;
  readonly timeNs: bigint;
  /** Sums and gauges. */
  readonly value?: number;
  /** Histograms. */
  readonly count?: number;
  readonly sum?: number;
  readonly bounds?: readonly number[];
  /** Per bucket (not cumulative), one more than `bounds`. */
  readonly bucketCounts?: readonly number[];
}

export interface ReceivedMetric {
  readonly name: string;
  readonly unit: string;
  readonly description: string;
  readonly type: "sum" | "gauge" | "histogram" | "other";
  readonly monotonic?: boolean;
  /** AGGREGATION_TEMPORALITY_* as its number (2 cumulative). */
  readonly temporality?: number;
  readonly points: readonly ReceivedPoint[];
  readonly resource: Attributes;
  readonly request: number;
}

export interface OtlpReceiver {
  /** `http://127.0.0.1:<port>`: the base endpoint (`/v1/traces`, `/v1/metrics` below it). */
  readonly url: string;
  readonly receiver: Receiver;
  /** Every span in a request answered 2xx, in arrival order (repeats included). */
  spans(): ReceivedSpan[];
  /** Every metric in a request answered 2xx, in arrival order. */
  metrics(): ReceivedMetric[];
  /** Queues answers for the next requests (each used once), then the fallback. */
  respondWith(...responses: ResponseScript[]): void;
  /** The answer when nothing is queued (default: 200 with an empty export response). */
  setFallback(response: ResponseScript): void;
  /** Resolves once `predicate` holds for the spans taken (default 10 s). */
  waitForSpans(
    predicate: (spans: readonly ReceivedSpan[]) => boolean,
    timeoutMs?: number,
  ): Promise<ReceivedSpan[]>;
  waitForMetrics(
    predicate: (metrics: readonly ReceivedMetric[]) => boolean,
    timeoutMs?: number,
  ): Promise<ReceivedMetric[]>;
  close(): Promise<void>;
}

const ACCEPT: ResponseSpec = {
  status: 200,
  headers: { "content-type": "application/json" },
  body: "{}",
};

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const taken = new Set<number>();
  const queue: ResponseScript[] = [];
  let fallback: ResponseScript = ACCEPT;
  const decide = (request: ReceivedRequest): ResponseSpec => {
    const script = queue.shift() ?? fallback;
    const answer = typeof script === "function" ? script(request) : script;
    const status = "drop" in answer ? 0 : (answer.status ?? 200);
    if (status >= 200 && status < 300) taken.add(request.index);
    return answer;
  };
  const receiver = await startReceiver({ fallback: decide });
  const accepted = (path: string) =>
    receiver.requests.filter((r) => taken.has(r.index) && r.path.startsWith(path));
  const spans = () => accepted("/v1/traces").flatMap(decodeSpans);
  const metrics = () => accepted("/v1/metrics").flatMap(decodeMetrics);
  const poll = async <T>(
    read: () => T[],
    predicate: (items: T[]) => boolean,
    timeoutMs: number,
  ) => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const items = read();
      if (predicate(items)) return items;
      if (Date.now() > deadline) {
        throw new Error(`the OTLP receiver did not get what was awaited (it has ${items.length})`);
      }
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  };
  return {
    url: receiver.url,
    receiver,
    spans,
    metrics,
    respondWith: (...responses) => queue.push(...responses),
    setFallback: (response) => {
      fallback = response;
    },
    waitForSpans: (predicate, timeoutMs = 10_000) => poll(spans, predicate, timeoutMs),
    waitForMetrics: (predicate, timeoutMs = 10_000) => poll(metrics, predicate, timeoutMs),
    close: () => receiver.close(),
  };
}

/** The request's body as an object: protobuf decoded by the schema, or OTLP/JSON. */
function requestObject(request: ReceivedRequest, type: ProtoType): Record<string, unknown> {
  const encoding = request.headers["content-encoding"] ?? "";
  const body = encoding === "gzip" ? gunzipSync(request.rawBody) : request.rawBody;
  const contentType = request.headers["content-type"] ?? "";
  if (contentType.startsWith("application/x-protobuf")) {
    return type.toObject(type.decode(body), {
      longs: String,
      bytes: String,
      enums: Number,
      defaults: false,
      arrays: true,
    }) as Record<string, unknown>;
  }
  if (contentType.startsWith("application/json")) {
    return JSON.parse(body.toString("utf8")) as Record<string, unknown>;
  }
  throw new Error(`the OTLP receiver got an unknown Content-Type: ${contentType}`);
}

type Json = Record<string, unknown>;
const list = (value: unknown): Json[] => (Array.isArray(value) ? (value as Json[]) : []);
const text = (value: unknown): string => (typeof value === "string" ? value : "");

/** A protobuf id (base64 by `toObject`) or an OTLP/JSON id (hex), as lowercase hex. */
function hexId(value: unknown, contentType: string): string {
  const s = text(value);
  if (s === "") return "";
  return contentType.startsWith("application/x-protobuf")
    ? Buffer.from(s, "base64").toString("hex")
    : s.toLowerCase();
}

function nanos(value: unknown): bigint {
  if (typeof value === "number" || typeof value === "string") return BigInt(value);
  return 0n;
}

function anyValue(value: unknown): AttributeValue {
  const v = (value ?? {}) as Json;
  if ("stringValue" in v) return text(v.stringValue);
  if ("boolValue" in v) return Boolean(v.boolValue);
  if ("intValue" in v) return Number(v.intValue);
  if ("doubleValue" in v) return Number(v.doubleValue);
  if ("arrayValue" in v) return list((v.arrayValue as Json).values).map(anyValue);
  return null;
}

function attributes(value: unknown): Attributes {
  const out: Attributes = {};
  for (const kv of list(value)) out[text(kv.key)] = anyValue(kv.value);
  return out;
}

function decodeSpans(request: ReceivedRequest): ReceivedSpan[] {
  const type = proto.trace.v1.ExportTraceServiceRequest;
  const body = requestObject(request, type);
  const contentType = request.headers["content-type"] ?? "";
  const id = (v: unknown) => hexId(v, contentType);
  return list(body.resourceSpans).flatMap((rs) => {
    const resource = attributes((rs.resource as Json | undefined)?.attributes);
    return list(rs.scopeSpans).flatMap((ss) => {
      const scope = (ss.scope ?? {}) as Json;
      return list(ss.spans).map((s): ReceivedSpan => ({
        traceId: id(s.traceId),
        spanId: id(s.spanId),
        parentSpanId: id(s.parentSpanId),
        name: text(s.name),
        kind: Number(s.kind ?? 0),
        startNs: nanos(s.startTimeUnixNano),
        endNs: nanos(s.endTimeUnixNano),
        status: {
          code: Number((s.status as Json | undefined)?.code ?? 0),
          message: text((s.status as Json | undefined)?.message),
        },
        attributes: attributes(s.attributes),
        links: list(s.links).map((l) => ({
          traceId: id(l.traceId),
          spanId: id(l.spanId),
          attributes: attributes(l.attributes),
        })),
        resource,
        scope: { name: text(scope.name), version: text(scope.version) },
        request: request.index,
      }));
    });
  });
}

function decodeMetrics(request: ReceivedRequest): ReceivedMetric[] {
  const body = requestObject(request, proto.metrics.v1.ExportMetricsServiceRequest);
  return list(body.resourceMetrics).flatMap((rm) => {
    const resource = attributes((rm.resource as Json | undefined)?.attributes);
    return list(rm.scopeMetrics).flatMap((sm) =>
      list(sm.metrics).map((m): ReceivedMetric => {
        const base = {
          name: text(m.name),
          unit: text(m.unit),
          description: text(m.description),
          resource,
          request: request.index,
        };
        const point = (p: Json): ReceivedPoint => ({
          attributes: attributes(p.attributes),
          startNs: nanos(p.startTimeUnixNano),
          timeNs: nanos(p.timeUnixNano),
          ...("asDouble" in p ? { value: Number(p.asDouble) } : {}),
          ...("asInt" in p ? { value: Number(p.asInt) } : {}),
          ...("bucketCounts" in p
            ? {
                count: Number(p.count ?? 0),
                sum: Number(p.sum ?? 0),
                bounds: list(p.explicitBounds).map(Number),
                bucketCounts: list(p.bucketCounts).map(Number),
              }
            : {}),
        });
        if (m.sum !== undefined) {
          const sum = m.sum as Json;
          return {
            ...base,
            type: "sum",
            monotonic: Boolean(sum.isMonotonic),
            temporality: Number(sum.aggregationTemporality ?? 0),
            points: list(sum.dataPoints).map(point),
          };
        }
        if (m.gauge !== undefined) {
          return { ...base, type: "gauge", points: list((m.gauge as Json).dataPoints).map(point) };
        }
        if (m.histogram !== undefined) {
          const histogram = m.histogram as Json;
          return {
            ...base,
            type: "histogram",
            temporality: Number(histogram.aggregationTemporality ?? 0),
            points: list(histogram.dataPoints).map(point),
          };
        }
        return { ...base, type: "other", points: [] };
      }),
    );
  });
}
