/**
 * Project health families: whether each watched project is polled properly, projected from the
 * outcome of its latest poll and from its committed state.
 */
import type { Projections } from "./projected-family.js";

export const projectProjections = {
  pgcp_project_up: {
    *series({ projectId, up }) {
      yield { labels: { project: projectId }, value: up ? 1 : 0 };
    },
  },

  pgcp_project_last_success_timestamp_seconds: {
    *series({ projectId, state }) {
      if (state !== undefined) {
        yield { labels: { project: projectId }, value: state.committedAtMs / 1000 };
      }
    },
  },

  pgcp_project_blocked: {
    *series({ projectId, blocked }) {
      if (blocked !== undefined) {
        yield { labels: { project: projectId, problem: blocked.problem }, value: 1 };
      }
    },
  },

  pgcp_project_catching_up: {
    *series({ projectId, state }) {
      const catchingUp = state !== undefined && state.segment !== null;
      yield { labels: { project: projectId }, value: catchingUp ? 1 : 0 };
    },
  },
} satisfies Partial<Projections>;
