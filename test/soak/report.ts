/** The soak's figures, as written to its results file and summarised in docs/reliability.md. */
import type { ApiFaultClass, SinkOutageMode } from "./faults.js";

export interface SoakResults {
  readonly startedAt: string;
  readonly seconds: number;
  readonly seed: number;
  readonly projects: number;
  /** Daemon processes started, including the first and the last. */
  readonly runs: number;
  readonly kills: number;
  /** Kills made right after the sink answered 2xx (the at-least-once window). */
  readonly killsAtA2xx: number;
  /** "exporter started" lines: runs that got through their start-up. */
  readonly runsStarted: number;
  readonly runSeconds: { readonly min: number; readonly max: number };
  /**
   * Requests each API fault class hit (the simulator's count); `latency` counts the spikes
   * beyond the daemon's API timeout, `mildLatencyHits` those within it (only slower answers).
   */
  readonly faults: Record<ApiFaultClass, number>;
  readonly mildLatencyHits: number;
  /** Logged failures (warn or error) showing each class handled. */
  readonly faultEvidence: Record<ApiFaultClass, number>;
  /** Retries of each class's failures, from the runs' `/metrics` (absorbed: no log line). */
  readonly faultRetries: Record<ApiFaultClass, number>;
  /** Retries by reason, from the runs' `/metrics` (the last scrape before each run ended). */
  readonly retriesByReason: Record<string, number>;
  readonly sinkOutages: Record<SinkOutageMode, number>;
  /** Webhook requests answered by an outage, by mode. */
  readonly sinkOutageRequests: Record<string, number>;
  readonly sinkFailuresLogged: number;
  readonly webhookRequests: number;
  /** Requests to the Alertmanager sink's receiver, and the failures they posted. */
  readonly alertmanagerRequests: number;
  readonly failuresPostedToAlertmanager: number;
  /** End-state arrivals of the truth, and the (action, status) counts that differ on disk. */
  readonly arrivals: number;
  readonly arrivalDifferences: number;
  /** Arrivals at failed or error in the truth, and their alerts delivered with a 2xx. */
  readonly failures: number;
  readonly failureAlertsDelivered: number;
  /** Recovered (and stuck) alerts delivered. */
  readonly otherAlertsDelivered: number;
  /** Deliveries beyond the first, and the alerts concerned. */
  readonly duplicateDeliveries: number;
  readonly duplicateAlerts: number;
  readonly missingAlerts: number;
  readonly catchUpSeconds: number;
  readonly memory: {
    readonly peakRss: number;
    /** The highest peak RSS among the first third of the runs, and among the last third. */
    readonly peakRssFirstThird: number;
    readonly peakRssLastThird: number;
    readonly longRun: {
      readonly run: number;
      readonly seconds: number;
      readonly rssQuarter: number;
      readonly rssEnd: number;
      readonly heapQuarter: number;
      readonly heapEnd: number;
    };
  };
  readonly problems: readonly string[];
}

const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

export function soakReport(r: SoakResults): string {
  const classes = Object.keys(r.faults) as ApiFaultClass[];
  const lines = [
    `Soak of ${r.startedAt}: ${r.seconds.toFixed(0)} s, seed ${r.seed}, ${r.projects} projects.`,
    "",
    `| figure | value |`,
    `| --- | --- |`,
    `| daemon runs (SIGKILLed, of which right after a 2xx) | ${r.runs} (${r.kills}, ${r.killsAtA2xx}); runs lasted ${r.runSeconds.min.toFixed(1)}–${r.runSeconds.max.toFixed(0)} s |`,
    `| end-state arrivals (truth) / differences on disk | ${r.arrivals} / ${r.arrivalDifferences} |`,
    `| failures (truth) / failure alerts delivered / missing | ${r.failures} / ${r.failureAlertsDelivered} / ${r.missingAlerts} |`,
    `| other alerts delivered (recovered) | ${r.otherAlertsDelivered} |`,
    `| duplicate deliveries (alerts concerned) | ${r.duplicateDeliveries} (${r.duplicateAlerts}) |`,
    `| webhook requests / answered by an outage | ${r.webhookRequests} / ${Object.values(r.sinkOutageRequests).reduce((a, b) => a + b, 0)} |`,
    `| Alertmanager requests / failures posted | ${r.alertmanagerRequests} / ${r.failuresPostedToAlertmanager} |`,
    `| last run: caught up and delivered in | ${r.catchUpSeconds.toFixed(1)} s |`,
    `| peak RSS of any run (first third of the runs → last third) | ${mib(r.memory.peakRss)} (${mib(r.memory.peakRssFirstThird)} → ${mib(r.memory.peakRssLastThird)}) |`,
    `| long run (${r.memory.longRun.seconds.toFixed(0)} s): heap a quarter in → at the end | ${mib(r.memory.longRun.heapQuarter)} → ${mib(r.memory.longRun.heapEnd)} (RSS ${mib(r.memory.longRun.rssQuarter)} → ${mib(r.memory.longRun.rssEnd)}) |`,
    "",
    `| API fault class | requests hit | logged failures naming it | retries (/metrics) |`,
    `| --- | --- | --- | --- |`,
    ...classes.map(
      (c) => `| ${c} | ${r.faults[c]} | ${r.faultEvidence[c]} | ${r.faultRetries[c]} |`,
    ),
    "",
    `| sink outage mode | outages | requests answered |`,
    `| --- | --- | --- |`,
    ...(Object.keys(r.sinkOutages) as SinkOutageMode[]).map(
      (m) => `| ${m} | ${r.sinkOutages[m]} | ${r.sinkOutageRequests[m] ?? 0} |`,
    ),
    "",
    `Latency spikes within the API timeout (answers only slower; not in the table): ${r.mildLatencyHits} requests. ` +
      `Alert delivery failures logged: ${r.sinkFailuresLogged}. API retries by reason (from /metrics): ` +
      (Object.entries(r.retriesByReason)
        .map(([k, v]) => `${k} ${v}`)
        .join(", ") || "none") +
      ".",
    "",
    r.problems.length === 0
      ? "Every check passed."
      : `Problems (${r.problems.length}):\n${r.problems.map((p) => `- ${p}`).join("\n")}`,
  ];
  return `${lines.join("\n")}\n`;
}
