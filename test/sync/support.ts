/**
 * Helpers for sync tests: a real API client against a test simulator, a fresh state directory,
 * poll options sized to exercise page boundaries, and the ground truth's end-state arrivals
 * against those a state committed.
 */
import { createApiClient, type ApiClient } from "../../src/api/index.js";
import { isEndStatus } from "../../src/contract/index.js";
import { FileStateStore, type ProjectState } from "../../src/store/index.js";
import type { PollOptions } from "../../src/sync/index.js";
import type { TestSimulator } from "../support/simulator.js";
import { tempDir } from "../support/temp-dir.js";

export function clientFor(sim: TestSimulator, maxAttempts = 1): ApiClient {
  return createApiClient({
    apiKey: sim.apiKey,
    baseUrl: sim.apiUrl,
    retry: { maxAttempts, baseDelayMs: 1, maxDelayMs: 5 },
    rateLimit: { requestsPerMinute: 6_000_000, burst: 100_000, maxConcurrency: 8 },
  });
}

export async function stateDir(): Promise<string> {
  return tempDir("pgcp-state-");
}

/** A file state store in a fresh `stateDir()`, opened. */
export async function openStateStore(): Promise<FileStateStore> {
  const store = new FileStateStore(await stateDir());
  await store.open();
  return store;
}

export function pollOptions(overrides: Partial<PollOptions> = {}): PollOptions {
  return {
    firstPageLimit: 3,
    pageLimit: 4,
    maxPagesPerPoll: 3,
    firstStartLookbackSeconds: 3600,
    backfillSeconds: 0,
    watchFailedSeconds: 600,
    stuckAfterSeconds: (action) => (action === "start_compute" ? 120 : 900),
    ...overrides,
  };
}

/** `action status` → count, the key shape both sides are reduced to. */
export type Arrivals = Record<string, number>;

/** Every arrival at an end status after `sinceIso` (exclusive), from the simulator's truth. */
export async function truthArrivals(
  sim: TestSimulator,
  projectId: string,
  sinceIso: string,
): Promise<Arrivals> {
  return (await truthEnds(sim, projectId, micros(sinceIso))).arrivals;
}

/** An arrival at `failed` or `error` in the truth: what a failure alert reports. */
export interface TruthFailure {
  readonly operationId: string;
  readonly status: string;
  readonly failuresCount: number;
}

/**
 * Every arrival at an end status after `sinceMicros` (µs since the epoch, exclusive), from the
 * simulator's truth, and the failures among them.
 */
export async function truthEnds(
  sim: TestSimulator,
  projectId: string,
  sinceMicros: number,
): Promise<{ arrivals: Arrivals; failures: TruthFailure[] }> {
  const arrivals: Arrivals = {};
  const failures: TruthFailure[] = [];
  for (const op of await sim.sim.truth(projectId)) {
    for (const h of op.history) {
      if (!isEndStatus(h.status) || micros(h.at) <= sinceMicros) continue;
      const key = `${op.action} ${h.status}`;
      arrivals[key] = (arrivals[key] ?? 0) + 1;
      if (h.status === "failed" || h.status === "error") {
        failures.push({ operationId: op.id, status: h.status, failuresCount: h.failures_count });
      }
    }
  }
  return { arrivals, failures };
}

/** Retries after `sinceIso` by action: each move on from `failed`, from the simulator's truth. */
export async function truthRetries(
  sim: TestSimulator,
  projectId: string,
  sinceIso: string,
): Promise<Record<string, number>> {
  const since = micros(sinceIso);
  const out: Record<string, number> = {};
  for (const op of await sim.sim.truth(projectId)) {
    op.history.forEach((h, i) => {
      const before = op.history[i - 1];
      if (before?.status !== "failed" || h.status === "failed" || micros(h.at) <= since) return;
      out[op.action] = (out[op.action] ?? 0) + 1;
    });
  }
  return out;
}

/** Microseconds since the epoch of an ISO timestamp with up to six fractional digits. */
export function micros(iso: string): number {
  const match = /^(.*?)(?:\.(\d{1,6}))?Z$/.exec(iso);
  if (match === null) throw new Error(`not a UTC timestamp: ${iso}`);
  const whole = Date.parse(`${match[1] ?? ""}Z`);
  return whole * 1000 + Number((match[2] ?? "").padEnd(6, "0"));
}

/** The committed retry counts of a state (non-zero ones). */
export function committedRetries(state: ProjectState | undefined): Record<string, number> {
  return Object.fromEntries(Object.entries(state?.totals.retries ?? {}).filter(([, n]) => n > 0));
}

/** The committed arrival counts of a state. */
export function committedArrivals(state: ProjectState | undefined): Arrivals {
  const out: Arrivals = {};
  for (const a of state?.totals.arrivals ?? []) {
    if (a.count > 0) out[`${a.action} ${a.status}`] = a.count;
  }
  return out;
}

/** `project key: committed N, truth M` for every count that differs. */
export function diffArrivals(project: string, committed: Arrivals, truth: Arrivals): string[] {
  const keys = [...new Set([...Object.keys(committed), ...Object.keys(truth)])].sort();
  return keys
    .filter((k) => (committed[k] ?? 0) !== (truth[k] ?? 0))
    .map((k) => `${project} ${k}: committed ${committed[k] ?? 0}, truth ${truth[k] ?? 0}`);
}
