/** Alerts for the sink tests. */
import type { Alert, AlertKind, IncidentState } from "../../../src/store/index.js";

export const PROJECT = "proj-silent-sun-12345";

let counter = 0;

/** A failed-operation alert in `PROJECT`, with a fresh id; override any field. */
export function makeAlert(overrides: Partial<Alert> = {}): Alert {
  counter += 1;
  const n = String(counter).padStart(4, "0");
  return {
    id: `alert-${n}`,
    kind: "operation_failed",
    projectId: PROJECT,
    operationId: `op-${n}`,
    branchId: "br-main-001",
    endpointId: "ep-primary-001",
    action: "start_compute",
    status: "failed",
    failuresCount: 3,
    error: "compute start failed: could not allocate",
    createdAt: "2025-06-01T12:00:00.000Z",
    updatedAt: "2025-06-01T12:05:30.000Z",
    durationSeconds: 330,
    detectedAt: "2025-06-01T12:05:31.000Z",
    link: `https://console.example.test/projects/${PROJECT}/operations/op-${n}`,
    ...overrides,
  };
}

/** One alert of each kind; the recovery resolves the failure. */
export function mixedBatch(): Alert[] {
  const failed = makeAlert({ kind: "operation_failed", action: "apply_config" });
  const stuck = makeAlert({
    kind: "operation_stuck",
    action: "start_compute",
    status: "running",
    failuresCount: 0,
    durationSeconds: 3_725,
  });
  delete stuck.error;
  const retrying = makeAlert({
    kind: "operation_retrying",
    action: "suspend_compute",
    status: "running",
    failuresCount: 2,
  });
  const recovered = makeAlert({
    kind: "operation_recovered",
    action: "apply_config",
    status: "finished",
    failuresCount: 3,
    resolves: failed.id,
  });
  delete recovered.error;
  return [failed, stuck, retrying, recovered];
}

export function alertsOfKind(kind: AlertKind, count: number): Alert[] {
  return Array.from({ length: count }, () => makeAlert({ kind }));
}

/** The projects of a platform incident: `count` listed, the first named. */
export function incidentProjects(count: number): { id: string; name?: string }[] {
  return Array.from({ length: count }, (_, i) => ({
    id: `proj-${String(i).padStart(3, "0")}`,
    ...(i === 0 ? { name: "Tenant Acme" } : {}),
  }));
}

/**
 * An alert of the platform incident `incidentId` in `state`, with a fresh alert id, carried by
 * `PROJECT`; `projectCount` projects (at most 100 listed); override any field.
 */
export function makeIncidentAlert(
  state: IncidentState,
  options: { incidentId?: string; projectCount?: number; failures?: number } = {},
  overrides: Partial<Alert> = {},
): Alert {
  const incidentId = options.incidentId ?? "inc-7f3a2b";
  const projectCount = options.projectCount ?? 12;
  const errorClass = "safekeeper quorum not reached";
  const alert = makeAlert({
    kind: "platform_incident",
    operationId: incidentId,
    status: state,
    action: "start_compute",
    failuresCount: options.failures ?? projectCount * 2,
    error: errorClass,
    createdAt: "2025-06-01T12:00:00.000Z",
    updatedAt: "2025-06-01T12:14:05.000Z",
    durationSeconds: 845,
    detectedAt: "2025-06-01T12:14:06.000Z",
    incident: {
      id: incidentId,
      state,
      regionId: "aws-us-east-2",
      errorClass,
      projects: incidentProjects(Math.min(projectCount, 100)),
      projectCount,
    },
  });
  delete alert.link;
  delete alert.branchId;
  delete alert.endpointId;
  return { ...alert, ...overrides };
}
