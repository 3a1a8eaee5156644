/**
 * The push of the metrics over OTLP/HTTP, every `intervalMs`, besides `/metrics`
 * (docs/opentelemetry.md#metrics-over-otlp). OpenTelemetry's SDK does the work: a
 * `PeriodicExportingMetricReader` of a `MeterProvider` (with our resource) collects at each
 * interval from a `MetricProducer` that reads our families (`metric-families.ts` maps them) and
 * exports with the OTLP exporter of `transport.ts`. What is ours: one push in flight at a time,
 * each push's outcome reported to the observer and logged once per outage, and a final push at
 * the stop, bounded by the export's timeout.
 *
 * A collector that is down, slow or refusing changes nothing else: the push runs on its own
 * timer, reads the families without changing them, and a failed push is not repeated (the next
 * one carries every cumulative value anew).
 */
import { millisToHrTime, ExportResultCode, type ExportResult } from "@opentelemetry/core";
import { resourceFromAttributes, type Resource } from "@opentelemetry/resources";
import {
  MeterProvider,
  PeriodicExportingMetricReader,
  type CollectionResult,
  type MetricProducer,
  type PushMetricExporter,
  type ResourceMetrics,
} from "@opentelemetry/sdk-metrics";
import { systemClock, type Clock } from "../../clock.js";
import { displayUrl, type OtlpTarget } from "../../config/index.js";
import { errorFields, type Logger } from "../../logger.js";
import { PACKAGE } from "../../version.js";
import { metricData, type ReadMetricFamilies } from "./metric-families.js";
import { SILENT_OTLP_OBSERVER, type OtlpObserver } from "../observer.js";
import { OutageLog } from "../outage-log.js";
import { exportOutcome, metricExporter, type ExportOutcome } from "./transport.js";

export interface MetricsPushOptions {
  /** Where to, how, and how often. */
  readonly target: OtlpTarget & { readonly intervalMs: number };
  /** The resource's attributes (`service.name` among them). */
  readonly resource: Readonly<Record<string, string>>;
  /** Reads the families `/metrics` serves, at each push. */
  readonly families: ReadMetricFamilies;
  readonly logger: Logger;
  /** Hears each push's outcome (the `pgcp_otlp_*` metrics). */
  readonly observer?: OtlpObserver;
  /** The wall clock the points are dated by (default the system's). */
  readonly clock?: Clock;
  /**
   * When the cumulative values started, epoch ms: by default when this process started, the
   * moment its counters started counting from events (and resumed those of the committed state).
   */
  readonly startTimeMs?: number;
}

export interface MetricsPush {
  /** Stops the timer and pushes once more, for at most the export's timeout. */
  stop(): Promise<void>;
}

/** The instrumentation scope the metrics carry. */
const SCOPE = { name: PACKAGE.name, version: PACKAGE.version };

/** Starts pushing; the first push is one interval from now. */
export function startMetricsPush(options: MetricsPushOptions): MetricsPush {
  const { target, logger } = options;
  const clock = options.clock ?? systemClock;
  const startTimeMs = options.startTimeMs ?? clock.wall() - process.uptime() * 1000;
  const resource = resourceFromAttributes({
    "service.version": PACKAGE.version,
    ...options.resource,
  });
  const shownUrl = displayUrl(target.url);
  const outages = new OutageLog(logger, "metrics", target);
  const exporter = new ObservedExporter(metricExporter(target), (outcome) => {
    const observer = options.observer ?? SILENT_OTLP_OBSERVER;
    if (outcome.ok) {
      observer.metricsPushed();
      outages.succeeded();
    } else {
      observer.exportFailed("metrics", outcome.reason);
      outages.failed(outcome);
    }
  });
  const producer = new FamiliesProducer(options.families, resource, logger, {
    startTimeMs,
    now: () => clock.wall(),
  });
  const reader = new PeriodicExportingMetricReader({
    exporter,
    metricProducers: [producer],
    exportIntervalMillis: target.intervalMs,
    // The exporter's own timeout (`target.timeoutMs`) bounds the request and its retries; the
    // reader only stops waiting for it, which changes nothing, so it waits for the longest it
    // may.
    exportTimeoutMillis: target.intervalMs,
  });
  const provider = new MeterProvider({ resource, readers: [reader] });
  logger.info(
    {
      signal: "metrics",
      collector: shownUrl,
      protocol: target.protocol,
      intervalMs: target.intervalMs,
    },
    "pushing the metrics over OTLP",
  );
  let stopping: Promise<void> | undefined;
  return {
    stop: () =>
      (stopping ??= (async () => {
        // The push in flight first: the final one would otherwise be skipped as overlapping.
        const final = exporter.idle().then(() => provider.shutdown());
        const done = await within(final, target.timeoutMs);
        if (!done) {
          logger.warn(
            { signal: "metrics", collector: shownUrl, timeoutMs: target.timeoutMs },
            "the final push of the metrics over OTLP did not end within the timeout",
          );
        }
      })()),
  };
}

/**
 * Reads our families for the reader, as one scope's metrics. A reading that fails (a bug) is
 * logged once until one succeeds, and that push is skipped: the reader exports nothing when no
 * scope has metrics.
 */
class FamiliesProducer implements MetricProducer {
  readonly #read: ReadMetricFamilies;
  readonly #resource: Resource;
  readonly #logger: Logger;
  readonly #times: { readonly startTimeMs: number; readonly now: () => number };
  #failing = false;

  constructor(
    read: ReadMetricFamilies,
    resource: Resource,
    logger: Logger,
    times: { readonly startTimeMs: number; readonly now: () => number },
  ) {
    this.#read = read;
    this.#resource = resource;
    this.#logger = logger;
    this.#times = times;
  }

  async collect(): Promise<CollectionResult> {
    try {
      const families = await this.#read();
      const metrics = metricData(families, {
        startTime: millisToHrTime(this.#times.startTimeMs),
        endTime: millisToHrTime(this.#times.now()),
      });
      this.#failing = false;
      return this.#result([{ scope: SCOPE, metrics }], []);
    } catch (error) {
      if (!this.#failing) {
        this.#logger.error(errorFields(error), "reading the metrics to push over OTLP failed");
      }
      this.#failing = true;
      return this.#result([], [error]);
    }
  }

  #result(scopeMetrics: ResourceMetrics["scopeMetrics"], errors: unknown[]): CollectionResult {
    return { resourceMetrics: { resource: this.#resource, scopeMetrics }, errors };
  }
}

/**
 * The OTLP exporter, one push at a time, each outcome told to `report`. A push that comes while
 * the last one is still in flight (a collector slower than the interval) is skipped: the one in
 * flight carries the values, and the next carries newer ones.
 */
class ObservedExporter implements PushMetricExporter {
  readonly #inner: PushMetricExporter;
  readonly #report: (outcome: ExportOutcome) => void;
  #inFlight: Promise<void> | undefined;

  constructor(inner: PushMetricExporter, report: (outcome: ExportOutcome) => void) {
    this.#inner = inner;
    this.#report = report;
  }

  export(metrics: ResourceMetrics, done: (result: ExportResult) => void): void {
    if (this.#inFlight !== undefined) {
      done({ code: ExportResultCode.FAILED, error: new Error("the last push is still in flight") });
      return;
    }
    let settle = (): void => undefined;
    const inFlight = new Promise<void>((resolve) => {
      settle = resolve;
    });
    this.#inFlight = inFlight;
    let finished = false;
    // Called once, also when the exporter answers at once (before `export` returns).
    const finish = (result: ExportResult): void => {
      if (finished) return;
      finished = true;
      if (this.#inFlight === inFlight) this.#inFlight = undefined;
      settle();
      this.#report(exportOutcome(result));
      done(result);
    };
    try {
      this.#inner.export(metrics, finish);
    } catch (error) {
      finish({ code: ExportResultCode.FAILED, error: error as Error });
    }
  }

  /** Resolves once no push is in flight. */
  async idle(): Promise<void> {
    await this.#inFlight;
  }

  forceFlush(): Promise<void> {
    return this.#inner.forceFlush();
  }

  shutdown(): Promise<void> {
    return this.#inner.shutdown();
  }
}

/** Whether `work` settled within `ms` (its failure counts as settled: nothing is left to do). */
async function within(work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<false>((resolve) => {
    timer = setTimeout(() => {
      resolve(false);
    }, ms);
  });
  try {
    return await Promise.race([
      work.then(
        () => true,
        () => true,
      ),
      timedOut,
    ]);
  } finally {
    clearTimeout(timer);
  }
}
