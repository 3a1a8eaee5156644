/**
 * A scenario that gives every family of the catalogue at least one series: two projects with
 * committed state, endpoints and a compute the probe read, a blocked project, and one of each
 * API client event.
 */
import { WalkError } from "../../../src/sync/index.js";
import type { ExporterMetrics, ExporterMetricsOptions } from "../../../src/metrics/index.js";
import { StateFileError } from "../../../src/store/index.js";
import {
  alert,
  arrival,
  endpoint,
  pollResult,
  projectState,
  trackedOperation,
  T0_MS,
} from "./fixtures.js";

export const PROBES: Partial<ExporterMetricsOptions> = {
  accounts: () => [
    {
      name: "default",
      scheduler: {
        budget: { stretch: 1.25 },
        tierIntervalSeconds: (tier: "fast" | "active" | "idle") =>
          tier === "fast" ? 6.25 : tier === "active" ? 37.5 : 75,
      },
      keyRefusal: () => undefined,
      projectBackoffs: () =>
        new Map([["p-beta", { reason: "server_error", nextTryMs: T0_MS + 60_000 }]]),
      client: { limiterStats: () => ({ tokensRemaining: 37 }) },
      projects: () => ["p-alpha", "p-beta"],
    },
  ],
  leases: () => ({
    replicaId: "pgcp-0-4242-a1b2c3",
    heldProjects: () => ["p-alpha", "p-beta"],
    liveReplicas: 3,
    targetProjects: 2,
    fleetProjects: 6,
    unownedProjects: 1,
    lastHeartbeatMs: T0_MS,
  }),
  configLoads: () => ({ lastReloadSuccessful: false, lastSuccessMs: T0_MS }),
};

export function feedEverything(metrics: ExporterMetrics): void {
  metrics.otlpObserver.spansSent(3);
  metrics.otlpObserver.spansDeadLettered(1, "expired");
  metrics.otlpObserver.exportFailed("traces", "unavailable");
  metrics.otlpObserver.metricsPushed();
  metrics.spansDropped("p-alpha", 2);
  metrics.projectsChanged(["p-alpha", "p-beta", "p-gamma"]);
  metrics.stateLoaded(
    "p-alpha",
    projectState("p-alpha", {
      arrivals: [
        arrival("start_compute", "finished", [0.4, 3, 3]),
        arrival("apply_config", "failed", [75]),
      ],
      retries: { apply_config: 2 },
      endpointStarts: { "ep-a1": 4 },
      endpointSuspends: { "ep-a1": 3 },
      tracked: [
        trackedOperation("p-alpha", { action: "apply_config", status: "running", stuck: true }),
      ],
      outbox: [
        { alert: alert("p-alpha", "a-1"), createdAtMs: T0_MS - 60_000, pending: ["slack", "hook"] },
        { alert: alert("p-alpha", "a-2"), createdAtMs: T0_MS - 30_000, pending: ["hook"] },
      ],
      deadLetters: [
        { alert: alert("p-alpha", "a-0"), sink: "hook", reason: "max_age", atMs: T0_MS - 5000 },
      ],
      firing: [
        { sink: "am", alert: alert("p-alpha", "a-3"), sinceMs: T0_MS - 90_000 },
        // Ended: sent once more, resolved, and then dropped; no longer counted as firing.
        {
          sink: "am",
          alert: alert("p-alpha", "a-4"),
          sinceMs: T0_MS - 80_000,
          endedAtMs: T0_MS - 10_000,
        },
      ],
      incidents: {
        marks: [],
        carried: [
          {
            id: "inc-0001",
            action: "start_compute",
            regionId: "aws-us-east-2",
            errorClass: "safekeeper quorum not reached for endpoint <id>",
            firstAtMs: T0_MS - 120_000,
            lastAtMs: T0_MS - 60_000,
            failures: 7,
            projects: ["p-alpha", "p-beta"],
            projectCount: 2,
          },
        ],
        resolved: [],
      },
    }),
  );
  metrics.committed(
    "p-beta",
    {
      ...pollResult(projectState("p-beta", { catchingUp: true, committedAtMs: T0_MS + 5000 })),
      silenced: [{ alert: alert("p-beta", "a-5"), sink: "slack", silence: "nightly" }],
    },
    0.3,
  );
  metrics.pollFailed("p-alpha", new Error("503"), 1.5);
  metrics.pollFailed(
    "p-alpha",
    new WalkError("cursor_revisited", "pagination.cursor c1 was already followed"),
    0.2,
  );
  metrics.commitFailed("p-beta", new Error("ENOSPC"));
  metrics.blocked("p-gamma", new StateFileError("/state/p-gamma.json", "version", "too new"));
  metrics.projectDescribed("p-alpha", {
    name: "Tenant Alpha",
    account: "default",
    orgId: "org-acme-12345678",
    orgName: "Acme Corp",
    regionId: "aws-us-east-2",
    pgVersion: 17,
  });
  metrics.branchesListed("p-alpha", [
    { id: "br-main", name: "main", parentId: undefined, isDefault: true },
  ]);
  metrics.endpointsListed("p-alpha", [
    endpoint("p-alpha", "ep-a1", {
      current_state: "active",
      last_active: "2026-01-01T11:59:00Z",
      suspend_timeout_seconds: 600,
    }),
  ]);
  const compute = {
    endpointId: "ep-a1",
    state: "following",
    reading: {
      atMs: T0_MS - 1000,
      startedAtMs: T0_MS - 3_600_000,
      hitRatio: 97.5,
      hits: 975,
      misses: 25,
      used: 40,
      writes: 3,
      connections: 12,
    },
    up: true,
    lastSuccessMs: T0_MS - 1000,
    failure: undefined,
    advised: ["file_cache"],
  } as const;
  metrics.computeChanged("p-alpha", compute, { ok: true });
  metrics.computeChanged(
    "p-alpha",
    {
      ...compute,
      state: "backoff",
      up: false,
      failure: { reason: "timeout", message: "canceling statement", sinceMs: T0_MS, count: 1 },
    },
    { ok: false, reason: "timeout" },
  );
  metrics.endpointsFailed("p-beta", new Error("timeout"));
  metrics.discoveryFailed(new Error("401"), "default");
  metrics.alertsDropped("p-alpha", 3);
  const { notifierObserver } = metrics;
  notifierObserver.delivered("slack", [alert("p-alpha", "a-9")], [4.5]);
  notifierObserver.deliveryFailed("hook", "server_error", 2);
  notifierObserver.deadLettered("hook", [alert("p-alpha", "a-0")], "max_age");

  const { leaseObserver } = metrics;
  leaseObserver.acquired("p-alpha", 7);
  leaseObserver.released("p-delta", "rebalance");
  leaseObserver.lost("p-epsilon", "taken");
  leaseObserver.commitFenced("p-epsilon", "taken");
  leaseObserver.heartbeatFailed(new Error("connection refused"));

  const { apiEvents } = metrics;
  const common = { route: "listOperations", method: "GET", attempt: 1, requestId: "r-1" } as const;
  apiEvents.onResponse?.({ ...common, status: 200, durationMs: 80 });
  apiEvents.onResponse?.({ ...common, status: 429, durationMs: 20 });
  apiEvents.onTransportError?.({
    ...common,
    kind: "timeout",
    code: "UND_ERR_HEADERS_TIMEOUT",
    durationMs: 30_000,
  });
  apiEvents.onRetry?.({ ...common, reason: "http_429", delayMs: 2000, delaySource: "retry-after" });
  apiEvents.onRateLimitPause?.({ route: "listOperations", pauseMs: 2000 });
  apiEvents.onRateLimitWait?.({ route: "getOperation", waitedMs: 1500 });
}
