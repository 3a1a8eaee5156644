/**
 * A fleet of projects shaped like the scrape benchmark's (`test/bench/scenarios/scrape.ts`):
 * each with operations of 10 actions, one of which also failed and was retried, and 10
 * endpoints (one read-write, nine read replicas) that started and suspended, and two branches
 * (the default and a preview), fed to metrics as the daemon reports committed state, listings
 * and what it read of each project. Ids are as long as the service's.
 */
import type { ExporterMetrics } from "../../../src/metrics/index.js";
import { arrival, endpoint, projectState } from "./fixtures.js";

const ACTIONS = [
  "create_timeline",
  "start_compute",
  "suspend_compute",
  "apply_config",
  "apply_storage_config",
  "create_branch",
  "delete_timeline",
  "check_availability",
  "update_compute",
  "prepare_secondary_pageserver",
];

export const FLEET_ENDPOINTS = 10;
export const FLEET_BRANCHES = 2;

export function feedFleet(metrics: ExporterMetrics, projects: number): void {
  const ids = Array.from({ length: projects }, (_, i) => `misty-field-${String(100_000 + i)}`);
  metrics.projectsChanged(ids);
  for (const project of ids) {
    const endpoints = Array.from({ length: FLEET_ENDPOINTS }, (_, i) =>
      endpoint(project, `ep-quiet-sun-${project.slice(-6)}${String(i).padStart(2, "0")}`, {
        type: i === 0 ? "read_write" : "read_only",
        branch_id: `br-cool-rain-${project.slice(-6)}`,
        current_state: i % 3 === 0 ? "active" : "idle",
        last_active: "2026-01-01T11:00:00Z",
      }),
    );
    const perEndpoint = Object.fromEntries(endpoints.map((e) => [e.id, 2]));
    metrics.stateLoaded(
      project,
      projectState(project, {
        arrivals: [
          ...ACTIONS.map((action) => arrival(action, "finished", [1, 2, 5])),
          arrival("apply_config", "failed", [30]),
        ],
        retries: { apply_config: 1 },
        endpointStarts: perEndpoint,
        endpointSuspends: perEndpoint,
      }),
    );
    metrics.endpointsListed(project, endpoints);
    metrics.projectDescribed(project, {
      name: `Tenant ${project.slice(-6)}`,
      account: "default",
      orgId: "org-bold-sky-12345678",
      orgName: "Acme Corp",
      regionId: "aws-us-east-2",
      pgVersion: 17,
    });
    const main = `br-cool-rain-${project.slice(-6)}`;
    metrics.branchesListed(project, [
      { id: main, name: "main", parentId: undefined, isDefault: true },
      {
        id: `br-warm-hill-${project.slice(-6)}`,
        name: "preview/pr-812",
        parentId: main,
        isDefault: false,
      },
    ]);
  }
}
