/**
 * Project health families: whether each watched project is polled properly, projected from the
 * outcome of its latest poll and from its committed state.
 */
import type { Family } from "./family.js";

export const PROJECT_FAMILIES = [
  {
    name: "pgcp_project_up",
    type: "gauge",
    labels: ["project"],
    help: "1 when the project's latest poll succeeded and was committed, 0 otherwise (also before its first poll).",
    unit: "",
    group: "projects",
    source: "outcome",
    value: {
      *series({ projectId, up }) {
        yield { labels: { project: projectId }, value: up ? 1 : 0 };
      },
    },
  },
  {
    name: "pgcp_project_last_success_timestamp_seconds",
    type: "gauge",
    labels: ["project"],
    help: "Time of the project's latest committed poll, also by an earlier run (absent before the first).",
    unit: "seconds",
    group: "projects",
    source: "state",
    value: {
      *series({ projectId, state }) {
        if (state !== undefined) {
          yield { labels: { project: projectId }, value: state.committedAtMs / 1000 };
        }
      },
    },
  },
  {
    name: "pgcp_project_blocked",
    type: "gauge",
    labels: ["project", "problem"],
    help: "1 while the project is not polled because its state file cannot be used, by problem (corrupt, foreign, version, unreadable, unwritable).",
    unit: "",
    group: "projects",
    source: "outcome",
    value: {
      *series({ projectId, blocked }) {
        if (blocked !== undefined) {
          yield { labels: { project: projectId, problem: blocked.problem }, value: 1 };
        }
      },
    },
  },
  {
    name: "pgcp_project_catching_up",
    type: "gauge",
    labels: ["project"],
    help: "1 while a catch-up walk over a long gap in the operations log is in progress, else 0.",
    unit: "",
    group: "projects",
    source: "state",
    level: "standard",
    value: {
      *series({ projectId, state }) {
        const catchingUp = state !== undefined && state.segment !== null;
        yield { labels: { project: projectId }, value: catchingUp ? 1 : 0 };
      },
    },
  },
] as const satisfies readonly Family[];
