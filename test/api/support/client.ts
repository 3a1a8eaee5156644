import { inspect } from "node:util";
import { expect } from "vitest";
import {
  ApiError,
  createApiClient,
  type ApiClient,
  type ApiClientEvents,
  type ApiClientOptions,
  type RateLimitPauseEvent,
  type RateLimitWaitEvent,
  type ResponseEvent,
  type RetryEvent,
  type TransportErrorEvent,
} from "../../../src/api/index.js";
import type { SimDriver, TestSimulator } from "../../support/simulator.js";
import { simulatorSuite, type WithSimulator } from "../../support/simulator-suite.js";

export interface EventLog {
  readonly responses: ResponseEvent[];
  readonly transportErrors: TransportErrorEvent[];
  readonly retries: RetryEvent[];
  readonly waits: RateLimitWaitEvent[];
  readonly pauses: RateLimitPauseEvent[];
}

/** Event hooks that record everything the client reports. */
export function recordingEvents(): { events: ApiClientEvents; log: EventLog } {
  const log: EventLog = { responses: [], transportErrors: [], retries: [], waits: [], pauses: [] };
  const events: ApiClientEvents = {
    onResponse: (e) => log.responses.push(e),
    onTransportError: (e) => log.transportErrors.push(e),
    onRetry: (e) => log.retries.push(e),
    onRateLimitWait: (e) => log.waits.push(e),
    onRateLimitPause: (e) => log.pauses.push(e),
  };
  return { events, log };
}

export interface TestClient {
  readonly api: ApiClient;
  readonly log: EventLog;
}

/**
 * A client of the test simulator with quick retries (1-5 ms backoff) and a limiter loose
 * enough not to interfere; `options` overrides any of it.
 */
export function clientFor(t: TestSimulator, options: Partial<ApiClientOptions> = {}): TestClient {
  const { events, log } = recordingEvents();
  const api = createApiClient({
    apiKey: t.apiKey,
    baseUrl: t.apiUrl,
    retry: { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 5 },
    rateLimit: { requestsPerMinute: 600_000, burst: 1000, maxConcurrency: 8 },
    events,
    ...options,
  });
  return { api, log };
}

/** Runs `work` and returns the ApiError it rejects with (failing the test otherwise). */
export async function apiErrorOf(work: Promise<unknown>): Promise<ApiError> {
  try {
    await work;
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    return error as ApiError;
  }
  throw new Error("expected the call to fail with an ApiError");
}

/** Asserts that no way of writing the error out shows `secret`. */
export function expectNoSecret(error: unknown, secret: string): void {
  const forms = [
    JSON.stringify(error),
    inspect(error, { depth: 10, showHidden: true }),
    String(error),
    error instanceof Error ? (error.stack ?? "") : "",
  ];
  for (const form of forms) expect(form).not.toContain(secret);
}

/**
 * Settles `work` while moving the simulator's manual clock forward `stepSeconds` at a time,
 * pausing a few real milliseconds between steps so the client's polls interleave.
 */
export async function whileAdvancing<T>(
  sim: SimDriver,
  work: Promise<T>,
  stepSeconds = 1,
): Promise<T> {
  const state = { done: false };
  const settled = work.then(
    () => (state.done = true),
    () => (state.done = true),
  );
  while (!state.done) {
    await sim.advance(stepSeconds);
    await Promise.race([settled, new Promise((resolve) => setTimeout(resolve, 15))]);
  }
  return work;
}

/** A project whose primary endpoint has started; returns its ids. */
export async function readyProject(
  t: TestSimulator,
  plan: "free" | "paid" = "paid",
  branches = 1,
): Promise<{ projectId: string; branchIds: string[] }> {
  const created = await t.sim.createProject({ plan, branches });
  await t.sim.advance(5);
  return { projectId: created.project.id, branchIds: created.branches.map((b) => b.id) };
}

/** A simulator and a `clientFor` it for the tests of the file, closed after them. */
export function simulatorAndClient(use: (fixture: WithSimulator<{ c: TestClient }>) => void): void {
  simulatorSuite((t) => ({ c: clientFor(t) }), use, { close: (f) => f.c.api.close() });
}
