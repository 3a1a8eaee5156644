/**
 * Readiness as kube-state-metrics means it: ready once the state is loaded and at least one
 * poll has been committed.
 */
import type { DaemonObserver } from "../daemon/index.js";

export interface Readiness {
  /** Subscribe it to the daemon. */
  readonly observer: DaemonObserver;
  /** Why the exporter is not ready, or undefined when it is. */
  reason(): string | undefined;
}

export function readiness(): Readiness {
  let projects = 0;
  let committed = false;
  return {
    observer: {
      projectsChanged: (ids) => {
        projects = ids.length;
      },
      committed: () => {
        committed = true;
      },
    },
    reason: () => {
      if (projects === 0) return "no project is watched yet";
      if (!committed) return "no poll has completed yet";
      return undefined;
    },
  };
}
