/**
 * The metrics reference (`docs/metrics.md`), rendered from the catalogue so that it cannot
 * drift from what `/metrics` serves. A test compares the file with this rendering.
 */
import {
  CATALOGUE,
  OMITTED_PROCESS_METRICS,
  type MetricGroup,
  type MetricSource,
  type MetricSpec,
} from "./catalogue.js";
import { DEFAULT_TIMING } from "./exposition.js";

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
  projects: {
    title: "Project health",
    intro: "Whether each watched project is polled properly.",
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
};

export function renderReference(): string {
  const lines = [
    "# Metrics reference",
    "",
    "<!-- Generated from src/metrics/catalogue.ts by renderReference() in src/metrics/reference.ts.",
    "     Do not edit by hand: `UPDATE_DOCS=1 npx vitest run test/metrics` rewrites this file. -->",
    "",
    "Every metric pgcp-exporter serves on `/metrics`. Names follow the Prometheus conventions: the",
    "prefix `pgcp_`, base units (seconds, not milliseconds), `_total` only on counters, times as",
    "`*_timestamp_seconds` (Unix epoch seconds), `_info` for fixed properties (value 1) and state",
    "sets for states (one series per state, 1 for the current one, 0 for the others). No label",
    "carries an operation id, and the label names `type`, `region`, `instance` and `job` are not",
    "used (`endpoint_type`, `region_id` instead).",
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
    "- `include`: only the listed metric families are registered; `exclude`: the listed ones are",
    "  not. Both take family names (of this page, including the process metrics); a name that",
    "  names no family is a configuration error.",
    "- `perProjectHistograms`: also registers `pgcp_project_operation_duration_seconds`, which",
    "  has one histogram per project, action and status.",
    "- Series per project: `pgcp_operations_total` and the operation duration histograms grow with",
    "  the distinct (action, status) pairs seen; endpoint families with the project's endpoints.",
    "",
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
  ];
  if (spec.unit !== "") facts.push(`- Unit: ${spec.unit}`);
  if (spec.buckets !== undefined) facts.push(`- Buckets: ${spec.buckets.join(", ")}`);
  return [`### \`${spec.name}\``, "", text(spec.help), "", ...facts, ""];
}

/** Markdown text: `<word>` would read as an HTML tag. */
function text(help: string): string {
  return help.replaceAll("<", "&lt;").replaceAll(">", "&gt;");
}
