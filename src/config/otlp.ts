/**
 * The OpenTelemetry export as it runs: each signal's URL, encoding and headers, or none when it
 * is off. The headers are secrets (a collector's token): read from the standard variables
 * `OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_EXPORTER_OTLP_TRACES_HEADERS` and
 * `OTEL_EXPORTER_OTLP_METRICS_HEADERS` (or their `_FILE` forms), never from the file, and never
 * shown: errors name the variable and the entry's place, not its value.
 */
import { ConfigError, parseKeyValues } from "./load.js";
import { OTLP_HEADER_VARIABLES, type OtlpProtocol } from "./otlp-schema.js";
import type { Config } from "./schema.js";

/** Where one signal goes. */
export interface OtlpTarget {
  readonly url: string;
  readonly protocol: OtlpProtocol;
  /** Secret: never logged or shown. */
  readonly headers: Readonly<Record<string, string>>;
  readonly timeoutMs: number;
}

export interface ResolvedOtlp {
  /** Spans of operations and incidents; absent when off. */
  readonly traces?: OtlpTarget & { readonly batchSize: number; readonly maxAgeMs: number };
  /** The metrics pushed; absent when off. */
  readonly metrics?: OtlpTarget & { readonly intervalMs: number };
  /** The resource's attributes, `service.name` among them. */
  readonly resource: Readonly<Record<string, string>>;
}

/** The export as `config` and the headers of `env` give it; throws a ConfigError. */
export function resolveOtlp(config: Config, env: NodeJS.ProcessEnv): ResolvedOtlp {
  const otlp = config.otlp;
  const problems: string[] = [];
  const headersOf = (name: string) => {
    const read = parseHeaders(name, env[name]);
    problems.push(...read.problems);
    return read.headers;
  };
  const common = headersOf(OTLP_HEADER_VARIABLES.all);
  const target = (signal: "traces" | "metrics"): OtlpTarget | undefined => {
    const section = otlp[signal];
    const chosen = exporterChoice(EXPORTER_VARIABLES[signal], env);
    if (typeof chosen === "string") {
      problems.push(chosen);
      return undefined;
    }
    if (!(chosen ?? section.enabled)) return undefined;
    const url = section.endpoint ?? signalUrl(otlp.endpoint, signal);
    if (url === undefined) return undefined;
    return {
      url,
      protocol: section.protocol ?? otlp.protocol,
      headers: { ...common, ...headersOf(OTLP_HEADER_VARIABLES[signal]) },
      timeoutMs: otlp.timeout * 1000,
    };
  };
  const traces = target("traces");
  const metrics = target("metrics");
  if (problems.length > 0) throw new ConfigError("environment", problems);
  return {
    ...(traces === undefined
      ? {}
      : {
          traces: {
            ...traces,
            batchSize: otlp.traces.batchSize,
            maxAgeMs: otlp.traces.maxAge * 1000,
          },
        }),
    ...(metrics === undefined
      ? {}
      : { metrics: { ...metrics, intervalMs: otlp.metrics.interval * 1000 } }),
    resource: { ...otlp.resourceAttributes, "service.name": otlp.serviceName },
  };
}

/** The standard variables that choose each signal's exporter (`otlp` or `none`). */
const EXPORTER_VARIABLES = {
  traces: "OTEL_TRACES_EXPORTER",
  metrics: "OTEL_METRICS_EXPORTER",
} as const;

/**
 * What `OTEL_TRACES_EXPORTER` or `OTEL_METRICS_EXPORTER` chooses: on when its list names `otlp`,
 * off when it says `none`, undefined when unset (the configuration decides); a problem otherwise.
 */
function exporterChoice(name: string, env: NodeJS.ProcessEnv): boolean | undefined | string {
  const text = env[name]?.trim() ?? "";
  if (text === "") return undefined;
  const names = text.split(",").map((n) => n.trim().toLowerCase());
  if (names.includes("otlp")) return true;
  if (names.every((n) => n === "none")) return false;
  return `${name}: only otlp and none are exported here (it says ${JSON.stringify(text.slice(0, 40))})`;
}

/** The export when nothing is configured: off. */
export const NO_OTLP: ResolvedOtlp = { resource: {} };

/** The base endpoint's URL for `signal`: `/v1/traces` or `/v1/metrics` appended. */
function signalUrl(base: string | undefined, signal: "traces" | "metrics"): string | undefined {
  if (base === undefined) return undefined;
  return `${base.replace(/\/+$/, "")}/v1/${signal}`;
}

/** `key=value,…` headers (values percent-encoded); problems say which entry, never a value. */
function parseHeaders(
  name: string,
  text: string | undefined,
): { headers: Record<string, string>; problems: string[] } {
  if (text === undefined || text.trim() === "") return { headers: {}, problems: [] };
  const parsed = parseKeyValues(text);
  if (typeof parsed !== "object" || parsed === null) {
    return {
      headers: {},
      problems: [`${name}: must be a comma-separated list of key=value (values percent-encoded)`],
    };
  }
  const headers = parsed as Record<string, string>;
  const bad = Object.keys(headers).filter((key) => !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(key));
  if (bad.length > 0) {
    return { headers: {}, problems: [`${name}: a header name may not hold spaces or separators`] };
  }
  return { headers, problems: [] };
}
