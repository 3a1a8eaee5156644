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

// --- the replica soak (`test/soak/replicas.ts`) ---------------------------------------------

export type ReplicaFault =
  "kill" | "db_crash" | "cut" | "pause" | "terminate_backend" | "rolling_restart";

/** A gap between two commits of a project (seconds), and the faults under way meanwhile. */
export interface UnpolledGap {
  readonly project: string;
  readonly seconds: number;
  /** When it began, in seconds from the start of the traffic. */
  readonly fromSeconds: number;
  readonly during: readonly string[];
}

export interface ReplicaRouteResults {
  /** How the replicas reach the database: `direct`, or `pgbouncer` (transaction pooling). */
  readonly route: string;
  readonly seconds: number;
  /** From the start of the traffic to the end of the faults. */
  readonly faultSeconds: number;
  readonly projects: number;
  /** Daemon processes started (three, and one per restart). */
  readonly runs: number;
  readonly faults: Record<ReplicaFault, number>;
  readonly faultLog: readonly {
    readonly kind: ReplicaFault;
    readonly target?: string;
    readonly atSeconds: number;
    readonly seconds: number;
    readonly detail: string;
  }[];
  readonly backendsTerminated: number;
  readonly rollingRestarts: number;
  /** Replicas of a rolling restart not ready (`/readyz`) within five leases of their start. */
  readonly rollingNotReadyWithin: number;
  /** End-state arrivals of the truth; those missing from the committed states, and extra. */
  readonly arrivals: number;
  readonly arrivalsMissing: number;
  readonly arrivalsExtra: number;
  /** The commit log: state commits and lease claims, and the commits not under their claim. */
  readonly commits: number;
  readonly claims: number;
  readonly commitLogProblems: number;
  readonly archivedOperations: number;
  readonly archiveProblems: number;
  /** Projects exported (`pgcp_project_up`) by several live replicas at the end, or by none. */
  readonly exportedTwice: readonly string[];
  readonly exportedByNone: readonly string[];
  /** Failures of the truth; their alerts delivered (2xx), lost, and others delivered. */
  readonly failures: number;
  readonly failureAlertsDelivered: number;
  readonly alertsLost: number;
  /** Failure alerts for no failure of the truth, and failures delivered under several ids. */
  readonly failureAlertsForNoFailure: number;
  readonly failuresUnderSeveralIds: number;
  readonly otherAlertsDelivered: number;
  /** Alerts delivered by kind (each alert once). */
  readonly alertsByKind: Record<string, number>;
  readonly webhookRequests: number;
  /** Deliveries of an alert after its first, the alerts concerned, and those repeats that came
   * under the first delivery's Idempotency-Key, or from the same replica. */
  readonly repeatedDeliveries: number;
  readonly repeatedAlerts: number;
  readonly repeatsWithTheirKey: number;
  readonly repeatsBySameReplica: number;
  /** Each alert delivered more than once: by whom (in order), when, and the faults meanwhile. */
  readonly repeatLog: readonly {
    readonly alert: string;
    readonly kind: string;
    readonly deliveries: number;
    readonly by: string;
    /** The first delivery, in seconds from the start of the traffic, and the span to the last. */
    readonly atSeconds: number;
    readonly overSeconds: number;
    readonly during: readonly string[];
  }[];
  readonly unpolled: {
    readonly longest: UnpolledGap | undefined;
    readonly byFault: Partial<Record<ReplicaFault, UnpolledGap>>;
  };
  readonly catchUpSeconds: number;
  /** Replicas that exited with status 0 on the final SIGTERM (of three). */
  readonly stoppedCleanly: number;
  readonly diedByThemselves: number;
  /** Lines at level error or fatal, by message (expected while the database is away). */
  readonly errorsLogged: Record<string, number>;
  readonly problems: readonly string[];
}

export interface ReplicaSoakResults {
  readonly startedAt: string;
  readonly seconds: number;
  readonly seed: number;
  readonly replicas: number;
  readonly leaseSeconds: number;
  readonly routes: readonly ReplicaRouteResults[];
  /** Routes not run, and why. */
  readonly skipped: readonly string[];
  readonly problems: readonly string[];
}

const gapText = (gap: UnpolledGap | undefined) =>
  gap === undefined
    ? "none"
    : `${gap.seconds.toFixed(1)} s (${gap.project}, from ${gap.fromSeconds.toFixed(0)} s${gap.during.length === 0 ? "" : `, during ${gap.during.join(", ")}`})`;

export function replicaSoakReport(r: ReplicaSoakResults): string {
  const routes = r.routes;
  const row = (figure: string, value: (x: ReplicaRouteResults) => string) =>
    `| ${figure} | ${routes.map(value).join(" | ")} |`;
  const faultKinds = [...new Set(routes.flatMap((x) => Object.keys(x.faults)))] as ReplicaFault[];
  const lines = [
    `Replica soak of ${r.startedAt}: ${r.seconds.toFixed(0)} s, seed ${r.seed}, ${r.replicas} replicas, leases of ${r.leaseSeconds} s.`,
    "",
    `| figure | ${routes.map((x) => x.route).join(" | ")} |`,
    `| --- | ${routes.map(() => "---").join(" | ")} |`,
    row("faults for (projects)", (x) => `${x.faultSeconds.toFixed(0)} s (${x.projects})`),
    row(
      "faults",
      (x) =>
        faultKinds
          .map((k) => `${k} ${String((x.faults[k] as number | undefined) ?? 0)}`)
          .join(", ") + `; ${x.backendsTerminated} backends terminated`,
    ),
    row("daemon runs", (x) => String(x.runs)),
    row(
      "end-state arrivals (truth) / missing / extra",
      (x) => `${x.arrivals} / ${x.arrivalsMissing} / ${x.arrivalsExtra}`,
    ),
    row(
      "commits / claims / commits not under their claim",
      (x) => `${x.commits} / ${x.claims} / ${x.commitLogProblems}`,
    ),
    row("operations archived / wrong", (x) => `${x.archivedOperations} / ${x.archiveProblems}`),
    row(
      "projects exported twice / by none at the end",
      (x) => `${x.exportedTwice.length} / ${x.exportedByNone.length}`,
    ),
    row(
      "failures (truth) / delivered / lost / under several ids / alerts for none",
      (x) =>
        `${x.failures} / ${x.failureAlertsDelivered} / ${x.alertsLost} / ${x.failuresUnderSeveralIds} / ${x.failureAlertsForNoFailure}`,
    ),
    row("alerts delivered by kind", (x) =>
      Object.entries(x.alertsByKind)
        .map(([kind, n]) => `${kind} ${n}`)
        .join(", "),
    ),
    row(
      "repeated deliveries (alerts) / under their first key",
      (x) => `${x.repeatedDeliveries} (${x.repeatedAlerts}) / ${x.repeatsWithTheirKey}`,
    ),
    row("webhook requests", (x) => String(x.webhookRequests)),
    row("longest unpolled", (x) => gapText(x.unpolled.longest)),
    ...faultKinds.map((k) =>
      row(`longest unpolled during ${k}`, (x) =>
        x.unpolled.byFault[k] === undefined ? "–" : `${x.unpolled.byFault[k].seconds.toFixed(1)} s`,
      ),
    ),
    row("caught up at the end in", (x) => `${x.catchUpSeconds.toFixed(1)} s`),
    row("stopped cleanly at the end", (x) => `${x.stoppedCleanly} of 3`),
    "",
    ...routes.map(
      (x) =>
        `Errors logged (${x.route}): ` +
        (Object.entries(x.errorsLogged)
          .map(([msg, n]) => `${msg} (${n})`)
          .join("; ") || "none") +
        ".",
    ),
    ...routes.map(
      (x) =>
        `Alerts delivered more than once (${x.route}): ` +
        (x.repeatLog
          .map(
            (a) =>
              `${a.kind} ${a.deliveries} times by ${a.by} over ${a.overSeconds.toFixed(1)} s` +
              (a.during.length === 0 ? "" : ` (${a.during.join(", ")})`),
          )
          .join("; ") || "none") +
        ".",
    ),
    ...(r.skipped.length === 0 ? [] : ["", ...r.skipped.map((s) => `Skipped: ${s}`)]),
    "",
    r.problems.length === 0
      ? "Every check passed."
      : `Problems (${r.problems.length}):\n${r.problems.map((p) => `- ${p}`).join("\n")}`,
  ];
  return `${lines.join("\n")}\n`;
}
