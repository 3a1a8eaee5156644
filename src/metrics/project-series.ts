/**
 * Project health families: whether each watched project is polled properly, projected from the
 * outcome of its latest poll and from its committed state.
 */
import type { Projections } from "./projected-family.js";
import { committed } from "../sync/index.js";

export const projectProjections = {
  *pgcp_project_up({ projects }) {
    for (const { projectId, up } of projects) {
      yield { labels: { project: projectId }, value: up ? 1 : 0 };
    }
  },

  *pgcp_project_last_success_timestamp_seconds({ projects }) {
    for (const { projectId, state } of committed(projects)) {
      yield { labels: { project: projectId }, value: state.committedAtMs / 1000 };
    }
  },

  *pgcp_project_blocked({ projects }) {
    for (const { projectId, blocked } of projects) {
      if (blocked !== undefined)
        yield { labels: { project: projectId, problem: blocked.problem }, value: 1 };
    }
  },

  *pgcp_project_catching_up({ projects }) {
    for (const { projectId, state } of projects) {
      const catchingUp = state !== undefined && state.segment !== null;
      yield { labels: { project: projectId }, value: catchingUp ? 1 : 0 };
    }
  },
} satisfies Partial<Projections>;
