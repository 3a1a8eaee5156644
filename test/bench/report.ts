/** The benchmark figures as Markdown tables, whence `docs/performance.md` takes its figures. */
import type { Results } from "./run.js";
import type { HandoverRun } from "./scenarios/handover.js";
import type { ScrapePoint } from "./scenarios/scrape.js";
import type { SkewedFleetRun } from "./scenarios/skewed-fleet.js";
import type { SpansResults } from "./scenarios/spans.js";
import type { Stall, StallCauses } from "./workers/exporter-host.js";
import { round, type Summary } from "./lib/stats.js";

const n = (value: number, digits = 3): string => {
  if (!Number.isFinite(value)) return String(value);
  const r = round(value, digits);
  return Math.abs(r) >= 1000 ? Math.round(r).toLocaleString("en-US") : String(r);
};
const mb = (bytes: number): string => `${n(bytes / 1024 / 1024)} MiB`;
/** Median, with the runs' range. */
const med = (s: Summary, digits = 3): string =>
  `${n(s.median, digits)} (${n(s.min, digits)}–${n(s.max, digits)})`;

function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const line = (cells: readonly string[]) => `| ${cells.join(" | ")} |`;
  return [line(header), line(header.map(() => "---")), ...rows.map(line)].join("\n");
}

export function report(r: Results): string {
  const parts: string[] = [];
  const m = r.machine;
  parts.push(
    `Run of ${r.startedAt} at commit ${r.commit}: BENCH_SCALE=${r.scale}, ${r.runs} runs per ` +
      `ingest point, ${n(r.seconds / 60)} minutes. Machine: ${m.cpus} x ${m.cpuModel}, ` +
      `${mb(m.memoryBytes)}, ${m.platform} ${m.kernel}, Node ${m.node}; 1-minute load average ` +
      `${n(m.loadAverageStart)} at the start and ${n(m.loadAverageEnd)} at the end.`,
  );

  if (r.ingest !== undefined) {
    const rows = (points: typeof r.ingest.oneProject) =>
      points.map((p) => [
        `${n(p.projects)} x ${n(p.operationsPerProject)}`,
        med(p.exporterOpsPerSecond),
        med(p.baselineOpsPerSecond),
        med(p.costRatio),
        med(p.cpuRatio),
        n(p.rounds),
        mb(p.exporterPeakRss),
      ]);
    const header = [
      "projects x operations",
      "exporter, ops/s",
      "baseline, ops/s",
      "time ratio (target ≤ 2)",
      "CPU ratio",
      "polls",
      "exporter peak RSS",
    ];
    const quiet = [...r.ingest.oneProject, ...r.ingest.manyProjects].flatMap((p) =>
      p.quietLog === undefined
        ? []
        : [
            `- ${n(p.projects)} x ${n(p.operationsPerProject)} at log level warn (one run): ` +
              `${n(p.quietLog.exporterOpsPerSecond)} ops/s, time ratio ${n(p.quietLog.costRatio)}, ` +
              `CPU ratio ${n(p.quietLog.cpuRatio)}`,
          ],
    );
    parts.push(
      `### 1. Ingest throughput\n\nOne project:\n\n${table(header, rows(r.ingest.oneProject))}\n\n` +
        `Many projects of 1,000 operations:\n\n${table(header, rows(r.ingest.manyProjects))}` +
        (quiet.length === 0
          ? ""
          : `\n\nWithout the info line per operation:\n\n${quiet.join("\n")}`),
    );
  }

  if (r.scrape !== undefined) {
    // Results written before gzip was measured have none.
    const zipped = r.scrape.filter((p) => "gzip" in p);
    parts.push(
      `### 2. Scrape cost\n\n` +
        table(
          [
            "projects",
            "endpoints",
            "series lines",
            "bytes",
            "exporter p50 / p99, ms",
            "baseline p50 / p99, ms",
            "ratio p50 / p99 (target ≤ 1.2)",
            "per third: p50 / p99 ratio",
            "event-loop delay p99 / max, ms",
            "one rendering, ms",
          ],
          r.scrape.map((p) => [
            n(p.projects),
            n(p.endpoints),
            n(p.lines),
            mb(p.bytes),
            `${n(p.exporter.p50)} / ${n(p.exporter.p99)}`,
            `${n(p.baseline.p50)} / ${n(p.baseline.p99)}`,
            `${n(p.ratio.p50)} / ${n(p.ratio.p99)}`,
            `${med(p.runRatios.p50)} / ${med(p.runRatios.p99)}`,
            `${n(p.eventLoopDelay.p99)} / ${n(p.eventLoopDelay.max)}`,
            n(p.renderMs),
          ]),
        ) +
        (zipped.length === 0
          ? ""
          : `\n\nScrapes asking for gzip (the same rounds):\n\n` + gzipTable(zipped)) +
        stallsTable(r.scrape) +
        levelsTable(r.scrape),
    );
  }

  if (r.requests !== undefined) {
    parts.push(
      `### 3. Request cost per cycle\n\n` +
        table(
          [
            "projects",
            "idle (minimum 1.0)",
            "one open operation on the first page",
            "one open operation below 100 newer records",
            "one cycle of idle projects, s",
          ],
          r.requests.map((p) => [
            n(p.projects),
            n(p.idle),
            n(p.openOnFirstPage),
            n(p.openBelow100),
            n(p.idlePollAllSeconds),
          ]),
        ),
    );
  }

  if (r.fleet !== undefined) {
    parts.push(
      `### 3-5. Under the default budget: requests, poll interval, detection latency, memory\n\n` +
        table(
          [
            "projects",
            "time compression",
            "requests/min (polls + listings)",
            "planned / observed poll interval, s",
            "stretch",
            "first round, s",
            "detection p50 / p99, s",
            "÷ poll interval p50 / p99",
            "detected / injected (duplicates)",
            "peak RSS / heap used",
            "memory baseline's peak RSS (exporter's ratio to it)",
          ],
          r.fleet.map((p) => [
            n(p.projects),
            `${n(p.compression)}x`,
            `${n(p.requestsPerMinute)} (${n(p.pollRequestsPerMinute)} + ${n(p.listingRequestsPerMinute)})`,
            `${n(p.plannedIntervalSeconds)} / ${n(p.observedIntervalSeconds)}`,
            n(p.stretch),
            n(p.firstRoundSeconds),
            `${n(p.detection.p50)} / ${n(p.detection.p99)}`,
            `${n(p.detectionRatio.p50)} / ${n(p.detectionRatio.p99)}`,
            `${n(p.detected)} / ${n(p.injected)} (${n(p.duplicates)})`,
            `${mb(p.memory.peakRss)} / ${mb(p.memory.heapUsed)}`,
            p.baselineMemory === undefined
              ? "-"
              : `${mb(p.baselineMemory.peakRss)} (${n(p.memory.peakRss / p.baselineMemory.peakRss)})`,
          ]),
        ),
    );
  }

  if (r.skewed !== undefined) parts.push(skewedTables(r.skewed));

  if (r.handover !== undefined) parts.push(handoverTable(r.handover));

  if (r.state !== undefined) {
    parts.push(
      `### 5. Commits and start-up\n\n` +
        table(
          [
            "projects",
            "poll + commit of one project p50 / p90, ms",
            "commit alone p50 / p90, ms",
            "bytes per commit",
            "state on disk",
            "start-up, s",
            "RSS / heap after start-up",
          ],
          r.state.map((p) => [
            n(p.projects),
            `${n(p.stepMs.p50)} / ${n(p.stepMs.p90)}`,
            `${n(p.commitMs.p50)} / ${n(p.commitMs.p90)}`,
            n(p.bytesPerCommit),
            mb(p.bytesOnDisk),
            n(p.startSeconds),
            `${mb(p.memoryAfterStart.rss)} / ${mb(p.memoryAfterStart.heapUsed)}`,
          ]),
        ),
    );
  }
  if (r.delivery !== undefined) {
    parts.push(
      `### 8. The delivery loop at rest\n\n` +
        table(
          [
            "projects",
            "window, s (least of 3)",
            "outbox looks per s: at rest / rescan every 250 ms",
            "CPU, ms: floor / notifier at rest / rescan",
            "at rest over rescan (CPU)",
            "alert to receiver p50 / p90, ms",
          ],
          r.delivery.map((p) => [
            n(p.projects),
            n(p.windowSeconds),
            `${n(p.looksPerSecond.atRest)} / ${n(p.looksPerSecond.rescan)}`,
            `${n(p.cpuMs.floor)} / ${n(p.cpuMs.notifierAtRest)} / ${n(p.cpuMs.rescanBaseline)}`,
            n(p.atRestOverRescan),
            `${n(p.sendMs.p50)} / ${n(p.sendMs.p90)}`,
          ]),
        ),
    );
  }
  if (r.spans !== undefined) parts.push(spansTables(r.spans));
  return `${parts.join("\n\n")}\n`;
}

/** Scenario 9: the span export's throughput against the exporter alone, time to span, memory. */
function spansTables(s: SpansResults): string {
  const t = s.timeToSpan;
  const { before, loaded, exported } = s.wireMemory;
  return (
    `### 9. The span export\n\n` +
    table(
      [
        "projects x spans",
        "export, spans/s",
        "exporter alone, spans/s",
        "time ratio",
        "requests / commits per 1,000 spans",
        "repeats",
      ],
      s.throughput.map((p) => [
        `${n(p.projects)} x ${n(p.spansPerProject)}`,
        med(p.exportSpansPerSecond),
        med(p.baselineSpansPerSecond),
        med(p.timeRatio),
        `${n(p.requestsPer1000Spans)} / ${n(p.commitsPer1000Spans)}`,
        n(p.repeats),
      ]),
    ) +
    `\n\nTime to span, ${n(t.samples)} commits of ${n(t.spansPerCommit)} spans among ` +
    `${n(t.projects)} projects, p50 / p90: the commit ${n(t.commitMs.p50)} / ` +
    `${n(t.commitMs.p90)} ms; from \`wake\` to the receiver ${n(t.exportMs.p50)} / ` +
    `${n(t.exportMs.p90)} ms; the exporter alone ${n(t.baselineMs.p50)} / ` +
    `${n(t.baselineMs.p90)} ms (ratio ${n(t.exportMs.p50 / t.baselineMs.p50)} / ` +
    `${n(t.exportMs.p90 / t.baselineMs.p90)}).\n\n` +
    `An exporter process before loading OpenTelemetry's packages, after, and after a first ` +
    `export of 512 spans: RSS ${mb(before.rss)} → ${mb(loaded.rss)} → ${mb(exported.rss)}, ` +
    `heap used ${mb(before.heapUsed)} → ${mb(loaded.heapUsed)} → ${mb(exported.heapUsed)}.`
  );
}

/** Series and bytes at each detail level, against the full level (results that have them). */
function levelsTable(points: readonly ScrapePoint[]): string {
  const rows = points.flatMap((p) => {
    const levels = p.levels ?? [];
    const full = levels.find((l) => l.detail === "full");
    if (full === undefined) return [];
    return levels.map((l) => [
      n(p.projects),
      l.detail,
      `${n(l.series)} (${n(l.series / full.series)})`,
      `${mb(l.bytes)} (${n(l.bytes / full.bytes)})`,
      `${mb(l.gzipBytes)} (${n(l.gzipBytes / full.gzipBytes)})`,
    ]);
  });
  if (rows.length === 0) return "";
  const timed = points.find((p) => p.levels !== undefined);
  return (
    `\n\nWhat a scrape holds at each \`metrics.detail\` (latencies above at ` +
    `\`${timed?.detail ?? ""}\`), and as a share of \`full\`:\n\n` +
    table(["projects", "detail", "series", "bytes", "gzip bytes"], rows) +
    `\n\nExporter memory after the scrapes, RSS / peak RSS / heap used:\n\n` +
    points
      .flatMap(({ projects, memory: m }) =>
        m === undefined
          ? []
          : [`- ${n(projects)} projects: ${mb(m.rss)} / ${mb(m.peakRss)} / ${mb(m.heapUsed)}`],
      )
      .join("\n")
  );
}

/** The exporter's stalls of more than 8 ms, and the collector's part in the longest. */
function stallsTable(points: readonly ScrapePoint[]): string {
  // Results written before stalls were watched have none.
  const watched = points.filter((p) => p.eventLoopDelay.longestStalls !== undefined);
  if (watched.length === 0) return "";
  const longest = (stalls: readonly Stall[] | undefined) =>
    (stalls ?? [])
      .slice(0, 3)
      .map((s) => `${n(s.ms)} (${n(s.gcMs)}, ${s.waitedMs === undefined ? "?" : n(s.waitedMs)})`)
      .join(", ") || "none";
  const causes = (c: StallCauses | undefined) =>
    c === undefined
      ? "?"
      : `${n(c.totalMs)} / ${n(c.collectingMs)} / ${n(c.waitingMs)} / ${n(c.totalMs - c.collectingMs - c.waitingMs)}`;
  return (
    `\n\nStalls of the exporter's event loop (gaps of more than 8 ms between the calls of a 1 ms ` +
    `timer), with the collector's pauses inside them and the time the main thread waited for a ` +
    `core in them (Linux's scheduler statistics):\n\n` +
    table(
      [
        "projects",
        "during the scrapes: stalls",
        "the longest three, ms (collecting, waiting for a core)",
        "their time in all, ms: total / collecting / waiting for a core / the rest (own work, or asleep past the timer)",
        "during the 5 rebuilds: stalls",
        "the longest three, ms (collecting, waiting for a core)",
      ],
      watched.map((p) => [
        n(p.projects),
        n(p.eventLoopDelay.stalls ?? 0),
        longest(p.eventLoopDelay.longestStalls),
        causes(p.eventLoopDelay.stallCauses),
        n(p.renderEventLoopDelay.stalls ?? 0),
        longest(p.renderEventLoopDelay.longestStalls),
      ]),
    )
  );
}

function gzipTable(points: readonly ScrapePoint[]): string {
  return table(
    [
      "projects",
      "bytes plain / gzip",
      "exporter p50 / p99, ms",
      "baseline p50 / p99, ms",
      "ratio p50 / p99 (target p99 ≤ 1.1)",
      "event-loop delay while rendering p99 / max, ms (target ≤ 10)",
    ],
    points.map((p) => [
      n(p.projects),
      `${mb(p.bytes)} / ${mb(p.gzip.bytes)}`,
      `${n(p.gzip.exporter.p50)} / ${n(p.gzip.exporter.p99)}`,
      `${n(p.gzip.baseline.p50)} / ${n(p.gzip.baseline.p99)}`,
      `${n(p.gzip.ratio.p50)} / ${n(p.gzip.ratio.p99)}`,
      `${n(p.renderEventLoopDelay.p99)} / ${n(p.renderEventLoopDelay.max)}`,
    ]),
  );
}

/** Scenario 6: each run's figures, then the goals, activity against uniform at each size. */
function skewedTables(runs: readonly SkewedFleetRun[]): string {
  const pct = (p: { p50: number; p90: number; p99: number }) =>
    `${n(p.p50, 1)} / ${n(p.p90, 1)} / ${n(p.p99, 1)}`;
  const figures = table(
    [
      "projects",
      "strategy",
      "compression",
      "detection p50 / p90 / p99, s",
      "raised p50, s",
      "cold projects p50 / p90 / p99, s",
      "detected / injected (cold)",
      "requests/min: polls + listings",
      "intervals fast / active / idle / max, s",
      "longest unpolled, s",
      "first round, s",
      "429s",
      "top 5%: share of operations",
    ],
    runs.map((p) => [
      n(p.projects),
      p.strategy,
      `${n(p.compression)}x`,
      pct(p.detection),
      n(p.raising.p50, 1),
      pct(p.coldDetection),
      `${n(p.detected)} / ${n(p.injected)} (${n(p.coldDetected)} / ${n(p.coldInjected)})`,
      `${n(p.pollRequestsPerMinute)} + ${n(p.listingRequestsPerMinute)}`,
      [p.intervals.fast, p.intervals.active, p.intervals.idle, p.intervals.max]
        .map((s) => n(s, 1))
        .join(" / "),
      n(p.longestUnpolledSeconds, 1),
      n(p.firstRoundSeconds, 1),
      n(p.rateLimited),
      n(p.hotOperationShare, 2),
    ]),
  );
  const goals = [...new Set(runs.map((p) => p.projects))].flatMap((projects) => {
    const uniform = runs.find((p) => p.projects === projects && p.strategy === "uniform");
    const activity = runs.find((p) => p.projects === projects && p.strategy === "activity");
    if (uniform === undefined || activity === undefined) return [];
    return [
      [
        n(projects),
        `${n(activity.detection.p50 / uniform.detection.p50, 2)} (≤ 0.1 at 10,000)`,
        `${n(activity.detection.p90 / uniform.detection.p90, 2)} (≤ 0.5 at 10,000)`,
        `${n(activity.detection.p50, 1)} s (≤ 15 s at 1,000)`,
        `${n(activity.longestUnpolledSeconds, 1)} ≤ ${n(activity.intervals.max, 1)}: ${
          activity.longestUnpolledSeconds <= activity.intervals.max ? "yes" : "no"
        }`,
        `${n(activity.intervals.max / uniform.intervals.idle, 2)} (≤ 2)`,
        `${n(activity.rateLimited + uniform.rateLimited)} (0)`,
      ],
    ];
  });
  return (
    `### 6. Time to alert in a skewed fleet: uniform and activity side by side\n\n` +
    figures +
    (goals.length === 0
      ? ""
      : `\n\nActivity against uniform, with the targets:\n\n` +
        table(
          [
            "projects",
            "p50 ÷ uniform's",
            "p90 ÷ uniform's",
            "activity p50",
            "longest unpolled ≤ maxInterval",
            "maxInterval ÷ uniform cycle",
            "429s",
          ],
          goals,
        ))
  );
}

/** Scenario 7: from a SIGKILL to the claims and the first polls elsewhere, against the lease. */
function handoverTable(h: HandoverRun): string {
  const pct = (p: { p50: number; p90: number; max: number }) =>
    `${n(p.p50, 2)} / ${n(p.p90, 2)} / ${n(p.max, 2)}`;
  return (
    `### 7. Handover after a SIGKILL\n\n` +
    `${n(h.replicas)} replicas, ${n(h.projects)} projects, a ${n(h.leaseSeconds)} s lease ` +
    `(heartbeat ${n(h.heartbeatSeconds, 2)} s), polls every ${n(h.pollIntervalSeconds)} s; ` +
    `${n(h.kills)} replicas killed, one at a time, ${n(h.polled.count)} projects handed over.\n\n` +
    table(
      [
        "from the SIGKILL to",
        "p50 / p90 / max, s",
        "÷ lease p50 / p90 / max (target max ≤ 4/3 + a poll)",
      ],
      [
        ["the claim by another replica", pct(h.claimed), pct(h.claimedRatio)],
        ["its first poll there", pct(h.polled), pct(h.polledRatio)],
      ],
    ) +
    `\n\nLargest \`pgcp_projects_unowned\` a surviving replica showed: ${n(h.unownedSeen)}.`
  );
}
