/**
 * Project families: whether each watched project is polled properly, projected from the outcome
 * of its latest poll and from its committed state, and, read from the schedulers, why one is
 * polled with backoff and when next; and the info families to join on for names beside ids
 * (`pgcp_project_info`, `pgcp_branch_info`), from what was read of the project.
 */
import type { Family } from "./family.js";

export const PROJECT_FAMILIES = [
  {
    name: "pgcp_project_up",
    type: "gauge",
    labels: ["project"],
    help: "1 when the project's latest poll succeeded and was committed, 0 otherwise (also before its first poll; while it is polled with backoff, pgcp_project_backoff_next_try_timestamp_seconds says why).",
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
    name: "pgcp_project_backoff_next_try_timestamp_seconds",
    type: "gauge",
    labels: ["project", "reason"],
    help: "While the project is polled with backoff instead of at its interval: when its next poll is due (Unix seconds), by reason: refused (its log answers 404 or 403), server_error (5xx), timeout, invalid_response (an answer that could not be read or broke the contract); absent while it is polled at its interval.",
    unit: "seconds",
    group: "projects",
    source: "runtime",
    *value({ runtime }) {
      for (const account of runtime.accounts?.() ?? []) {
        for (const [project, { reason, nextTryMs }] of account.projectBackoffs()) {
          yield { labels: { project, reason }, value: nextTryMs / 1000 };
        }
      }
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
  {
    name: "pgcp_project_info",
    type: "gauge",
    labels: ["project", "name", "account", "org_id", "org_name", "region_id", "pg_version"],
    help: "1 for each watched project once it was read, with its name, the configured account it is watched under, its organisation (empty for a personal project; its name empty until read), region and Postgres version: join on it to show names beside ids.",
    unit: "",
    group: "projects",
    source: "directory",
    level: "standard",
    value: {
      *series({ projectId, info }) {
        if (info === undefined) return;
        const labels = {
          project: projectId,
          name: info.name,
          account: info.account,
          org_id: info.orgId ?? "",
          org_name: info.orgName ?? "",
          region_id: info.regionId ?? "",
          pg_version: info.pgVersion === undefined ? "" : String(info.pgVersion),
        };
        yield { labels, value: 1 };
      },
    },
  },
  {
    name: "pgcp_branch_info",
    type: "gauge",
    labels: ["project", "branch", "name", "parent", "default"],
    help: "1 for each branch of a watched project as last listed, with its name, its parent branch (empty for the root) and whether it is the project's default (true, false); at most metrics.maxBranchesPerProject per project, and a deleted branch's series stay for discoveryGrace.",
    unit: "",
    group: "projects",
    source: "directory",
    level: "full",
    belowLevelWith: "branches",
    value: {
      *series({ projectId, branches }) {
        for (const b of branches ?? []) {
          const labels = {
            project: projectId,
            branch: b.id,
            name: b.name,
            parent: b.parentId ?? "",
            default: b.isDefault ? "true" : "false",
          };
          yield { labels, value: 1 };
        }
      },
      reads: [(view) => view.branches],
    },
  },
] as const satisfies readonly Family[];
