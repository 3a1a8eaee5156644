/**
 * A test simulator with generated traffic for the end-to-end tests that backfill: its clock
 * starts two hours behind `wallStartMs` (so every open operation is older than its stuck
 * threshold, and the history lies within a backfill window), and is moved on an hour in
 * ten-minute steps before it is handed over.
 */
import { startTestSimulator, type TestSimulator } from "../../support/simulator.js";

export interface Traffic {
  readonly projects: number;
  readonly operationsPerMinute: number;
  readonly failureShare: number;
}

/** Starts it; 5% of the operations are cancelled and 5% slow. */
export async function startTrafficSimulator(
  traffic: Traffic,
  wallStartMs = Date.now(),
): Promise<TestSimulator> {
  const t = await startTestSimulator({
    startTime: new Date(wallStartMs - 2 * 3600_000),
    traffic: { ...traffic, cancellationShare: 0.05, slowShare: 0.05 },
  });
  for (let i = 0; i < 6; i++) await t.sim.advance(600);
  return t;
}

/**
 * Faults that give the API families series: `unavailable` 503s on the operations listing
 * (retries), and one 429 on the endpoints listing that pauses the shared limiter for 1 s.
 */
export async function addApiFaults(t: TestSimulator, unavailable: number): Promise<void> {
  await t.sim.addFault({
    route: "listOperations",
    kind: "status",
    status: 503,
    count: unavailable,
  });
  await t.sim.addFault({
    route: "listEndpoints",
    kind: "status",
    status: 429,
    retry_after_seconds: 1,
    count: 1,
  });
}
