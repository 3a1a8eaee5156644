/**
 * The metrics reference (`docs/metrics.md`), rendered from the catalogue so that it cannot
 * drift from what `/metrics` serves. A test compares the file with this rendering.
 */
import { CATALOGUE } from "./definitions/catalogue.js";
import type { MetricGroup, MetricSource, MetricSpec } from "./definitions/family.js";
import { DETAIL_LEVELS, atLevel, levelOf, type DetailLevel } from "./definitions/levels.js";
import { OMITTED_PROCESS_METRICS } from "./definitions/process.js";
import { DEFAULT_TIMING } from "./rendering/exposition.js";

/** Series of each family with a per-project label, counted in a rendering of a fleet. */
export interface SeriesCounts {
  /** The fleet, as a phrase: "1,000 projects with 10 endpoints each, …". */
  readonly fleet: string;
  /** Sample lines per family (a histogram's `_bucket`, `_sum` and `_count` lines included). */
  readonly byFamily: ReadonlyMap<string, number>;
}

const LEVEL_MEANING: Readonly<Record<(typeof DETAIL_LEVELS)[number], string>> = {
  minimal:
    "what the shipped alert rules read, and whether each project is polled: operations, stuck operations, project health, and every family without a `project` label",
  standard:
    "also what the shipped dashboards read; an endpoint is three series, `pgcp_endpoint_info` (its sizes and auto-suspend delay as labels), `pgcp_endpoint_current_state` and `pgcp_endpoint_max_connections`, and its starts, suspends and sizes are summed per project; with the compute probe on, an active compute's file cache hit ratio, connections, advice and probe health",
  full: "every family: an endpoint's state as a state set, its sizes, limits and last activity as gauges, its starts and suspends as counters, and its compute's file cache counters",
};

const GROUPS: Readonly<Record<MetricGroup, { title: string; intro: string }>> = {
  operations: {
    title: "Operations",
    intro:
      "Counters and histograms come from the totals committed with each poll, so they are exact across restarts; open and stuck operations are those the committed state follows.",
  },
  endpoints: {
    title: "Endpoints",
    intro:
      "From each project's latest endpoint listing; starts and suspends come from the committed totals. The series of an endpoint missing from the latest listing (deleted) disappear.",
  },
  computes: {
    title: "Computes",
    intro:
      "Read by the compute probe, which is off unless `computes.enabled` is set ([configuration.md](configuration.md#computes)): it connects only to computes the latest listing says are active, and reads one again only while others use it, so that it never wakes a compute nor keeps one awake. A reading belongs to the compute's current start: its series go when the endpoint is no longer active. The probe's own health and failures are at the end of this section.",
  },
  projects: {
    title: "Projects",
    intro:
      "Whether each watched project is polled properly, and what to join on to show names beside ids: `pgcp_project_info` and `pgcp_branch_info` (value 1), as kube-state-metrics does.",
  },
  exporter: {
    title: "Exporter",
    intro: "Polls, commits, discovery and the scheduler's request budget.",
  },
  alerts: {
    title: "Alerts",
    intro:
      "The outbox gauges come from the committed project state; delivery counters count from the start of the process.",
  },
  otlp: {
    title: "OpenTelemetry export",
    intro:
      "The span queues are committed with the project state; the export's counters count from the start of the process ([opentelemetry.md](opentelemetry.md)).",
  },
  api: {
    title: "Control-plane API requests",
    intro:
      "Every attempt counts, retries included. Routes are stable call names (`listOperations`, `getOperation`, …), never URLs with ids.",
  },
};

const SOURCES: Readonly<Record<MetricSource, { meaning: string; restart: string }>> = {
  state: {
    meaning: "projected from the project state committed with each poll",
    restart: "resumes from the committed state (nothing lost, nothing counted twice)",
  },
  listing: {
    meaning: "projected from the project's latest endpoint listing",
    restart: "absent until the project's endpoints are listed again",
  },
  outcome: {
    meaning: "projected from the outcome of the project's latest poll",
    restart: "`pgcp_project_up` is 0 until the project's first poll",
  },
  events: {
    meaning: "counted from events as they happen",
    restart: "starts from 0 (a counter reset, which `rate()` handles)",
  },
  runtime: {
    meaning: "read from the running process when the rendering is built",
    restart: "current value",
  },
  probe: {
    meaning: "projected from what the compute probe last read of each active compute",
    restart: "absent until the compute is read again",
  },
  directory: {
    meaning:
      "projected from what was read of the project beside its operations: its name, organisation and region (from discovery's listing, else read once), and its branches (listed after its first poll and when a poll sees an operation that creates, deletes or moves a branch, never on a timer)",
    restart: "absent until the project is read again, after its first poll",
  },
};

/** The reference; `counts` gives the table of series per family (left out without it). */
export function renderReference(counts?: SeriesCounts): string {
  const lines = [
    "# Metrics reference",
    "",
    "<!-- Generated from src/metrics/definitions/ by renderReference() in src/metrics/reference.ts.",
    "     Do not edit by hand: `UPDATE_DOCS=1 npx vitest run test/metrics` rewrites this file. -->",
    "",
    "Every metric pgcp-exporter can serve on `/metrics`; `metrics.detail` chooses which",
    "([cardinality](#cardinality)). Names follow the Prometheus conventions: the prefix `pgcp_`,",
    "base units (seconds, not milliseconds), `_total` only on counters, times as",
    "`*_timestamp_seconds` (Unix epoch seconds), `_info` for properties (value 1), and a state",
    "either as one series labelled with the current state (value 1) or, at `full`, as a state set",
    "(one series per state, 1 for the current one, 0 for the others). No label carries an",
    "operation id, and the label names `type`, `region`, `instance` and `job` are not used",
    "(`endpoint_type`, `region_id` instead).",
    "",
    "## Where the values come from",
    "",
    ...Object.entries(SOURCES).map(
      ([source, { meaning, restart }]) =>
        `- \`${source}\`: ${meaning}. After a restart: ${restart}.`,
    ),
    "",
    "Counters of the `state` source are a projection of the committed state, never incremented on",
    "their own: they are exactly what was committed. A project that is no longer watched loses all",
    "of its series.",
    "",
  ];
  for (const [group, { title, intro }] of Object.entries(GROUPS)) {
    lines.push(`## ${title}`, "", intro, "");
    for (const spec of CATALOGUE.filter((s) => s.group === group)) lines.push(...section(spec));
  }
  lines.push(
    "## Cardinality",
    "",
    "- `detail` (`minimal`, `standard`, the default, or `full`): which families are served, each",
    "  level with those of the levels before it. Each family's level is given above.",
    ...DETAIL_LEVELS.map((level) => `  - \`${level}\`: ${LEVEL_MEANING[level]}.`),
    "- `include`: only the listed metric families of those the level serves are registered (a",
    "  family the level leaves out is a configuration error); `exclude`: the listed ones are not.",
    "  Both take family names (of this page, including the process metrics); a name that names no",
    "  family is a configuration error.",
    "- `perProjectHistograms`: also registers `pgcp_project_operation_duration_seconds`, which",
    "  has one histogram per project, action and status.",
    "- `branches`: also registers `pgcp_branch_info` below `full`. At most",
    "  `maxBranchesPerProject` (default 100) branches of a project have a series: its default",
    "  branch, then the oldest; the others have none (a warning says so once per project). A",
    "  branch deleted keeps its series for `discoveryGrace`, as a project does.",
    "- Series per project: `pgcp_operations_total` and the operation duration histograms grow with",
    "  the distinct (action, status) pairs seen; endpoint families with the project's endpoints.",
    "",
    ...(counts === undefined ? [] : seriesTable(counts)),
    "## Process metrics",
    "",
    "prom-client's default `process_*` and `nodejs_*` families follow the exporter's own, except",
    "these, left out so that the whole output passes `promtool check metrics` and the label rules:",
    "",
    ...OMITTED_PROCESS_METRICS.map(({ name, why }) => `- \`${name}\`: ${why}`),
    "",
    "## Rendering",
    "",
    "`/metrics` serves a rendering cached in memory, so a scrape only writes a buffer. The",
    `rendering is rebuilt ${DEFAULT_TIMING.gatherMs} ms after a change (changes arriving meanwhile join the same`,
    "rebuild; with many series the wait grows so that rendering takes at most a tenth of the",
    `time), and at the latest ${DEFAULT_TIMING.refreshMs / 1000} s after the previous rebuild, so that values read at`,
    "render time (rate-limiter tokens, the scheduler) are at most that old.",
    "",
  );
  return lines.join("\n");
}

function section(spec: MetricSpec): string[] {
  const facts = [
    `- Type: ${spec.type}`,
    `- Labels: ${spec.labels.length === 0 ? "none" : spec.labels.map((l) => `\`${l}\``).join(", ")}`,
    `- Source: \`${spec.source}\``,
    spec.optIn !== undefined
      ? `- Level: any, once \`${spec.optIn}\` is on`
      : spec.belowLevelWith !== undefined
        ? `- Level: \`${levelOf(spec)}\`, or any once \`${spec.belowLevelWith}\` is on`
        : `- Level: \`${levelOf(spec)}\``,
  ];
  if (spec.unit !== "") facts.push(`- Unit: ${spec.unit}`);
  if (spec.buckets !== undefined) facts.push(`- Buckets: ${spec.buckets.join(", ")}`);
  return [`### \`${spec.name}\``, "", text(spec.help), "", ...facts, ""];
}

/** The series of each family with a `project` label, and their sum at each level. */
function seriesTable(counts: SeriesCounts): string[] {
  const perProject = (CATALOGUE as readonly MetricSpec[]).filter((spec) =>
    spec.labels.includes("project"),
  );
  const count = (name: string) => counts.byFamily.get(name) ?? 0;
  const rows = perProject.map((spec) => {
    const served = (level: DetailLevel) => spec.optIn !== undefined || atLevel(spec, level);
    const cells = DETAIL_LEVELS.map((level) => (served(level) ? thousands(count(spec.name)) : ""));
    const level = spec.optIn === undefined ? levelOf(spec) : spec.optIn;
    return [`\`${spec.name}\``, `\`${level}\``, ...cells];
  });
  const summed = perProject.filter((spec) => spec.optIn === undefined);
  const totals = DETAIL_LEVELS.map((level) =>
    thousands(summed.filter((spec) => atLevel(spec, level)).reduce((n, s) => n + count(s.name), 0)),
  );
  return [
    "### Series per family",
    "",
    `Series of the families with a \`project\` label, counted in a rendering of ${counts.fleet}, at each level (the families without one add a few hundred series at most, whatever the number of projects; \`docs/performance.md\` gives whole scrapes, bytes included). A histogram counts its \`_bucket\`, \`_sum\` and \`_count\` series. An empty cell: not served at that level; 0: the family has series only while something is the case (an open or stuck operation, a blocked project, a lease, an anomaly, a dropped alert, the compute probe on), which this fleet has not. The per-project histogram is served at any level once \`perProjectHistograms\` is on, and is left out of the sums.`,
    "",
    ...table(
      ["family", "level", ...DETAIL_LEVELS],
      [...rows, ["all of them", "", ...totals]],
      (column) => column >= 2,
    ),
    "",
  ];
}

/** A Markdown table with its columns padded as prettier pads them. */
function table(
  header: readonly string[],
  rows: readonly (readonly string[])[],
  rightAligned: (column: number) => boolean,
): string[] {
  const widths = header.map((h, c) =>
    Math.max(3, h.length, ...rows.map((r) => (r[c] ?? "").length)),
  );
  const pad = (cell: string, c: number) =>
    rightAligned(c) ? cell.padStart(widths[c] ?? 0) : cell.padEnd(widths[c] ?? 0);
  const line = (cells: readonly string[]) => `| ${cells.map(pad).join(" | ")} |`;
  const rule = widths.map((w, c) => (rightAligned(c) ? `${"-".repeat(w - 1)}:` : "-".repeat(w)));
  return [line(header), `| ${rule.join(" | ")} |`, ...rows.map(line)];
}

function thousands(n: number): string {
  return n.toLocaleString("en-US");
}

/** Markdown text: `<word>` would read as an HTML tag. */
function text(help: string): string {
  return help.replaceAll("<", "&lt;").replaceAll(">", "&gt;");
}
