/**
 * The Grafana dashboards of pgcp-exporter, generated into `dashboards/` as JSON. Not part of the
 * exporter (outside `src/`, not built; it reads the metric catalogue from `src/metrics` and needs
 * the Grafana foundation SDK, a dev dependency): `test/dashboards/generate.test.ts` renders them
 * and compares them with the committed files, and `UPDATE_DASHBOARDS=1` rewrites those.
 */
import type { Dashboard } from "./dashboard.js";
import { exporterHealthDashboard } from "./exporter-health.js";
import { overviewDashboard } from "./overview.js";

export type { Dashboard } from "./dashboard.js";
export {
  ACCOUNT_MATCHER,
  PROJECT_MATCHER,
  HISTOGRAM_SUFFIXES,
  withProjectName,
  type SeriesName,
} from "./promql.js";
export { FLEET_VARIABLES, type FleetVariable } from "./dashboard.js";
export { COMPUTE_PANELS } from "./overview.js";
export { REPLICA_PANELS } from "./exporter-health.js";

export interface DashboardFile {
  /** File name in `dashboards/`. */
  readonly file: string;
  readonly build: () => Dashboard;
}

export const DASHBOARDS: readonly DashboardFile[] = [
  { file: "pgcp-overview.json", build: overviewDashboard },
  { file: "pgcp-exporter-health.json", build: exporterHealthDashboard },
];

/** The JSON text of a dashboard (before prettier, which the caller applies). */
export function renderDashboard(dashboard: Dashboard): string {
  return `${JSON.stringify(dashboard, null, 2)}\n`;
}
