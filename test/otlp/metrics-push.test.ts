/**
 * The metrics pushed over OTLP, on the whole exporter in-process against the simulator and the
 * local OTLP receiver (`test/support/otlp-receiver.ts`, which decodes by the OTLP specification),
 * over real HTTP, in both encodings: a push carries what a `/metrics` scrape of the same moment
 * serves (the same families, and the same values of a counter, a gauge and a histogram, whose
 * buckets are per bucket), with the resource and the start time. A collector that refuses and
 * then answers 503 is logged once (its echo of the token cleared) and counted in
 * `pgcp_otlp_export_failures_total`, changes nothing for `/metrics` or the polls, and the push
 * after it recovers arrives; the collector's headers and the URL's query never reach the log.
 * The stop pushes once more, and a collector that no longer answers holds it for the timeout only.
 */
import { afterEach, describe, expect, it } from "vitest";
import { startExporter, type RunningExporter } from "../../src/exporter/index.js";
import { startMetricsPush } from "../../src/otlp/wire/index.js";
import { captureLogger, type CapturedLogger } from "../support/capture-logger.js";
import { NEVER_STUCK } from "../support/daemon-config.js";
import { parseExposition, type Sample } from "../support/exposition.js";
import {
  startOtlpReceiver,
  type OtlpReceiver,
  type ReceivedMetric,
  type ReceivedPoint,
} from "../support/otlp-receiver.js";
import { startTestSimulator } from "../support/simulator.js";
import { tempDir, testConfig, waitFor } from "../daemon/support.js";

let cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  cleanups = [];
});

/** Secrets that must reach the collector and never the log. */
const TOKEN = "Bearer collector-token-5f1c";
const URL_SECRET = "url-secret-82ad";

/** How the receiver answers when it takes the data (its default). */
const ACCEPT = { status: 200, headers: { "content-type": "application/json" }, body: "{}" };

interface Pushing {
  readonly exporter: RunningExporter;
  readonly receiver: OtlpReceiver;
  readonly logs: CapturedLogger;
  /** The value of the one series of `name` whose labels include `labels`, on `/metrics` now. */
  value(name: string, labels?: Record<string, string>): Promise<number | undefined>;
  /** `/metrics` now, freshly rendered. */
  scrape(): Promise<string>;
  /** The metrics of the first push the receiver takes after the moment this is called. */
  nextPush(): Promise<ReceivedMetric[]>;
  /** Stops the exporter (once; the test's cleanup stops it otherwise). */
  stop(): Promise<void>;
}

/**
 * The exporter, pushing to the receiver every 200 ms, watching a project whose operations,
 * created after its first poll, ended after 3 s and 45 s (finished) and 700 s (failed), and one
 * still running; resolves once the four are seen.
 */
async function startPushing(protocol: "http/protobuf" | "http/json"): Promise<Pushing> {
  const receiver = await startOtlpReceiver();
  cleanups.push(() => receiver.close());
  const sim = await startTestSimulator();
  cleanups.push(() => sim.close());
  const created = await sim.sim.createProject({ availability_checks: false });
  const project = created.project.id;
  const branch = created.branches[0]!.id;
  const config = testConfig({
    api: { url: sim.apiUrl, key: sim.apiKey },
    projects: [project],
    state: { dir: await tempDir() },
    stuck: NEVER_STUCK,
    metrics: { exclude: ["pgcp_build_info", "process_max_fds"] },
    otlp: {
      protocol,
      timeout: 0.5,
      serviceName: "pgcp-push-test",
      resourceAttributes: { "deployment.environment.name": "test" },
      metrics: { endpoint: `${receiver.url}/v1/metrics?token=${URL_SECRET}`, interval: 0.2 },
    },
  });
  const logs = captureLogger(config.log.level);
  const exporter = await startExporter(config, {
    logger: logs.logger,
    env: { OTEL_EXPORTER_OTLP_HEADERS: `authorization=${encodeURIComponent(TOKEN)}` },
  });
  let stopping: Promise<void> | undefined;
  const stop = () => (stopping ??= exporter.stop());
  cleanups.push(stop);
  const scrape = async () => {
    await exporter.metrics.refresh();
    const response = await fetch(`${exporter.server.url}/metrics`);
    expect(response.status).toBe(200);
    return response.text();
  };
  const value = async (name: string, labels: Record<string, string> = {}) =>
    parseExposition(await scrape()).find(
      (s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v),
    )?.value;
  await waitFor(
    "the first poll",
    async () => (await value("pgcp_project_up", {})) === 1 || undefined,
  );
  const script = (action: string, steps: { status: string; after_seconds: number }[]) =>
    sim.sim.scriptOperation({ project_id: project, branch_id: branch, action, steps });
  const running = { status: "running", after_seconds: 0 };
  await script("apply_config", [running, { status: "finished", after_seconds: 3 }]);
  await script("apply_config", [running, { status: "finished", after_seconds: 45 }]);
  await script("apply_config", [running, { status: "failed", after_seconds: 700 }]);
  await script("apply_storage_config", [running]);
  await sim.sim.advance(800);

  await waitFor("the four operations seen", async () => {
    const finished = { action: "apply_config", status: "finished" };
    return (
      ((await value("pgcp_operations_total", finished)) === 2 &&
        (await value("pgcp_operations_total", { ...finished, status: "failed" })) === 1 &&
        (await value("pgcp_operations_open", { action: "apply_storage_config" })) === 1) ||
      undefined
    );
  });
  const nextPush = async () => {
    const after = receiver.receiver.requests.length;
    const metricsRequest = (r: { index: number; path: string }) =>
      r.index >= after && r.path.startsWith("/v1/metrics");
    // Each request is answered (and, when 2xx, taken) as it arrives: taken ones decode.
    for (;;) {
      const requests = await receiver.receiver.waitFor((rs) => rs.some(metricsRequest));
      const indexes = new Set(requests.filter(metricsRequest).map((r) => r.index));
      const taken = receiver.metrics().filter((m) => indexes.has(m.request));
      if (taken.length > 0) {
        const first = Math.min(...taken.map((m) => m.request));
        return taken.filter((m) => m.request === first);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  return { exporter, receiver, logs, value, scrape, nextPush, stop };
}

/** Labels as one sortable key. */
const key = (labels: Readonly<Record<string, unknown>>) =>
  JSON.stringify(Object.entries(labels).sort(([a], [b]) => a.localeCompare(b)));

/** A counter's or a gauge's series, as a scrape serves them. */
function scraped(samples: readonly Sample[], name: string): [string, number][] {
  return samples
    .filter((s) => s.name === name)
    .map((s): [string, number] => [key(s.labels), s.value])
    .sort();
}

/** The same, as the push carries them. */
function pushed(metric: ReceivedMetric | undefined): [string, number][] {
  return (metric?.points ?? []).map((p): [string, number] => [key(p.attributes), p.value!]).sort();
}

/** A histogram's series as the scrape serves them: cumulative buckets by bound, sum, count. */
function scrapedHistogram(samples: readonly Sample[], name: string) {
  const series = new Map<
    string,
    { bounds: number[]; cumulative: number[]; sum: number; count: number }
  >();
  const of = (labels: Readonly<Record<string, string>>) => {
    const { le: _le, ...rest } = labels;
    const k = key(rest);
    let one = series.get(k);
    if (one === undefined) series.set(k, (one = { bounds: [], cumulative: [], sum: 0, count: 0 }));
    return one;
  };
  for (const s of samples) {
    if (s.name === `${name}_bucket` && s.labels.le !== "+Inf") {
      of(s.labels).bounds.push(Number(s.labels.le));
      of(s.labels).cumulative.push(s.value);
    } else if (s.name === `${name}_bucket`) of(s.labels).cumulative.push(s.value);
    else if (s.name === `${name}_sum`) of(s.labels).sum = s.value;
    else if (s.name === `${name}_count`) of(s.labels).count = s.value;
  }
  return [...series.entries()].sort(([a], [b]) => a.localeCompare(b));
}

/** The same from the push: the per-bucket counts summed up, `+Inf` last. */
function pushedHistogram(metric: ReceivedMetric | undefined) {
  return (metric?.points ?? [])
    .map((p: ReceivedPoint): [string, unknown] => {
      let total = 0;
      const cumulative = (p.bucketCounts ?? []).map((count) => (total += count));
      return [key(p.attributes), { bounds: p.bounds, cumulative, sum: p.sum, count: p.count }];
    })
    .sort(([a], [b]) => a.localeCompare(b));
}

/** The families of a scrape that have a series with a value (the others are not pushed). */
function scrapedFamilies(text: string): Map<string, { type: string; help: string }> {
  const samples = parseExposition(text).filter((s) => Number.isFinite(s.value));
  const families = new Map<string, { type: string; help: string }>();
  const helps = new Map([...text.matchAll(/^# HELP (\S+) (.*)$/gm)].map((m) => [m[1]!, m[2]!]));
  for (const [, name, type] of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    const names =
      type === "histogram" ? [`${name}_bucket`, `${name}_sum`, `${name}_count`] : [name];
    if (samples.some((s) => names.includes(s.name))) {
      families.set(name!, { type: type!, help: helps.get(name!) ?? "" });
    }
  }
  return families;
}

const OTLP_TYPE = { counter: "sum", gauge: "gauge", histogram: "histogram" } as const;

describe.each(["http/protobuf", "http/json"] as const)("over %s", (protocol) => {
  it("pushes once more at the stop, with the values of that moment", async () => {
    const receiver = await startOtlpReceiver();
    cleanups.push(() => receiver.close());
    let arrivals = 1;
    const push = startMetricsPush({
      // An interval no test waits for: the one push is the stop's.
      target: {
        url: `${receiver.url}/v1/metrics`,
        protocol,
        headers: {},
        timeoutMs: 500,
        intervalMs: 3_600_000,
      },
      resource: { "service.name": "pgcp-exporter" },
      families: () =>
        Promise.resolve([
          {
            name: "pgcp_operations_total",
            help: "Arrivals.",
            type: "counter",
            samples: [{ labels: { project: "p-1" }, value: arrivals }],
          },
        ]),
      logger: captureLogger().logger,
    });
    arrivals = 7;
    await push.stop();
    expect(receiver.metrics().map((m) => [m.name, pushed(m)])).toEqual([
      ["pgcp_operations_total", [[key({ project: "p-1" }), 7]]],
    ]);
  });

  it("pushes what a scrape of the same moment serves, with its resource and start time", async () => {
    const p = await startPushing(protocol);
    // The state has settled: two scrapes around one push agree, so the push saw what they saw.
    const before = await p.scrape();
    const push = await p.nextPush();
    const text = await p.scrape();
    const samples = parseExposition(text);
    const metric = (name: string) => push.find((m) => m.name === name);
    for (const name of ["pgcp_operations_total", "pgcp_operations_open"]) {
      expect(scraped(parseExposition(before), name)).toEqual(scraped(samples, name));
      expect(pushed(metric(name))).toEqual(scraped(samples, name));
    }
    const histogram = "pgcp_operation_duration_seconds";
    expect(scrapedHistogram(parseExposition(before), histogram)).toEqual(
      scrapedHistogram(samples, histogram),
    );
    expect(pushedHistogram(metric(histogram))).toEqual(scrapedHistogram(samples, histogram));
    // Per bucket: 3 s and 45 s in the buckets up to 5 s and up to 60 s, 700 s up to 1800 s.
    const point = (status: string) =>
      metric(histogram)?.points.find(
        (p) => p.attributes.action === "apply_config" && p.attributes.status === status,
      );
    expect(point("finished")?.bounds).toEqual([
      0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600,
    ]);
    expect(point("finished")?.bucketCounts).toEqual([0, 0, 0, 0, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0]);
    expect(point("finished")).toMatchObject({ count: 2, sum: 48 });
    expect(point("failed")?.bucketCounts).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0]);

    // The same families as the scrape (ours: the process's come and go with the runtime's
    // readings), each with its type, description, unit and cumulative temporality.
    const served = scrapedFamilies(text);
    const ours = (name: string) => name.startsWith("pgcp_");
    expect(
      push
        .map((m) => m.name)
        .filter(ours)
        .sort(),
    ).toEqual([...served.keys()].filter(ours).sort());
    for (const m of push.filter((one) => ours(one.name))) {
      const family = served.get(m.name)!;
      expect(m.type).toBe(OTLP_TYPE[family.type as keyof typeof OTLP_TYPE]);
      expect(m.description).toBe(family.help);
      if (m.type !== "gauge") expect(m.temporality).toBe(2);
      if (m.type === "sum") expect(m.monotonic).toBe(true);
    }
    expect(push.map((m) => m.name)).not.toContain("pgcp_build_info");
    expect(push.map((m) => m.name)).not.toContain("process_max_fds");
    expect(metric(histogram)?.unit).toBe("s");
    expect(metric("pgcp_operations_total")?.unit).toBe("");
    expect(metric("process_resident_memory_bytes")).toMatchObject({ type: "gauge", unit: "By" });
    expect(metric("process_cpu_seconds_total")).toMatchObject({ type: "sum", unit: "s" });

    expect(push[0]?.resource).toMatchObject({
      "service.name": "pgcp-push-test",
      "deployment.environment.name": "test",
    });
    // Every cumulative point started when the process did (as process_start_time_seconds says).
    const points = push.flatMap((m) => m.points);
    const starts = new Set(points.map((pt) => pt.startNs));
    expect(starts.size).toBe(1);
    const [startNs] = [...starts] as [bigint];
    const processStart = samples.find((s) => s.name === "process_start_time_seconds")!.value;
    expect(Math.abs(Number(startNs) / 1e9 - processStart)).toBeLessThanOrEqual(1);
    expect(points.every((pt) => pt.timeNs > startNs)).toBe(true);

    const request = p.receiver.receiver.requests.find((r) => r.index === push[0]?.request);
    expect(request?.headers.authorization).toBe(TOKEN);
    expect(samples.find((s) => s.name === "pgcp_otlp_metric_pushes_total")?.value).toBeGreaterThan(
      0,
    );

    expect(p.logs.text()).not.toContain("collector-token");
    expect(p.logs.text()).not.toContain(URL_SECRET);
  });

  it("logs and counts a collector's outage once, serves /metrics and polls through it, pushes after it, and stops in time", async () => {
    const p = await startPushing(protocol);
    await p.nextPush();
    const polls = async () =>
      parseExposition(await p.scrape())
        .filter((s) => s.name === "pgcp_poll_duration_seconds_count")
        .reduce((total, s) => total + s.value, 0);
    const pollsBefore = await polls();
    // The collector first refuses, echoing the token back (the log must not), then is down.
    p.receiver.respondWith({ status: 401, body: `bad token: ${TOKEN}` });
    p.receiver.setFallback({ status: 503, body: "overloaded" });
    const failures = (reason: string) =>
      p.value("pgcp_otlp_export_failures_total", { signal: "metrics", reason });
    await waitFor(
      "a refused push, then three that failed",
      async () =>
        ((await failures("refused")) === 1 && ((await failures("unavailable")) ?? 0) >= 3) ||
        undefined,
    );
    // /metrics (p.scrape expects 200) and the polls go on while the pushes fail.
    await waitFor(
      "polls during the outage",
      async () => (await polls()) > pollsBefore || undefined,
    );

    p.receiver.setFallback(ACCEPT);
    const pushesBefore = (await p.value("pgcp_otlp_metric_pushes_total")) ?? 0;
    const recovered = await p.nextPush();
    expect(recovered.map((m) => m.name)).toContain("pgcp_operations_total");
    await waitFor(
      "the push counted after the outage",
      async () =>
        ((await p.value("pgcp_otlp_metric_pushes_total")) ?? 0) > pushesBefore || undefined,
    );

    const otlpLines = p.logs
      .lines()
      .filter((line) => line.signal === "metrics" && line.msg !== "pushing the metrics over OTLP");
    expect(otlpLines.map((line) => [line.level, line.reason ?? null])).toEqual([
      ["warn", "refused"],
      ["info", null],
    ]);
    expect(otlpLines[0]).toMatchObject({
      collector: `${p.receiver.url}/v1/metrics`,
      detail: "HTTP 401: bad token: [redacted]",
    });

    // A collector that stops answering holds the stop's final push for the timeout (0.5 s).
    p.receiver.setFallback({ ...ACCEPT, delayMs: 10_000 });
    const stopping = performance.now();
    await p.stop();
    expect(performance.now() - stopping).toBeLessThan(2_000);
    expect(p.logs.text()).not.toContain("collector-token");
    expect(p.logs.text()).not.toContain(URL_SECRET);
  });
});
