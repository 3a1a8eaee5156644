/**
 * What one poll leads to, decided without running anything: the reports the metrics and the
 * status page hear, the lines an operator reads, whether alerts go out now, and what the
 * scheduler learns (requests spent, fast lane, a slow project, a refusal, a failure that backs
 * the project off).
 */
import { describe, expect, it } from "vitest";
import { ApiError, type ApiErrorKind } from "../../src/api/index.js";
import {
  PROJECT_FAILING,
  PROJECT_RECOVERED,
  failureOf,
  stepEffects,
  type StepContext,
} from "../../src/daemon/step-effects.js";
import { LeaseLostError } from "../../src/store/fencing.js";
import { StateFileError } from "../../src/store/index.js";
import type { OutboxEntry } from "../../src/store/index.js";
import { WalkError, type PollResult } from "../../src/sync/index.js";
import { alert, pollResult, projectState } from "../metrics/support/fixtures.js";

const CONTEXT: StepContext = {
  projectId: "p-1",
  account: "default",
  projectRefused: false,
  keyRefused: false,
  projectFailing: false,
  durationSeconds: 0.25,
  aborted: false,
  open: true,
  outboxLimit: 100,
};

function committed(fields: Partial<PollResult> = {}, dropped: readonly OutboxEntry[] = []) {
  const result = { ...pollResult(projectState("p-1")), requests: 3, ...fields };
  return { kind: "committed" as const, result, dropped };
}

const entry: OutboxEntry = { alert: alert("p-1", "a-1"), createdAtMs: 0, pending: ["slack"] };

function apiError(kind: ApiErrorKind, status = 503): ApiError {
  return new ApiError(`the request ${kind === "timeout" ? "timed out" : `failed with ${status}`}`, {
    kind,
    status: kind === "http" ? status : undefined,
    code: kind,
    requestId: "r-1",
    route: "listOperations",
    method: "GET",
    retryable: true,
    attempts: 3,
  });
}

describe("a committed poll", () => {
  it("reports the commit, tells the scheduler its requests and open operations", () => {
    const step = committed();
    const effects = stepEffects(step, CONTEXT);
    expect(effects.reports.map((r) => r.event)).toEqual(["committed"]);
    expect(effects.job).toEqual({
      requests: 3,
      open: true,
      answered: true,
      activityAgesMs: [],
      apiNowMs: step.result.serverNowMs,
      endpointsChanged: false,
      branchesChanged: false,
    });
    expect(effects.deliver).toBe(false);
    expect(effects.logs.filter((l) => l.level !== "debug")).toEqual([]);
  });

  it("tells how long ago each operation it read was created, by the API's clock", () => {
    const result = pollResult(projectState("p-1"));
    const activityMs = [result.serverNowMs - 30_000, result.serverNowMs - 600_000];
    const job = stepEffects(committed({ activityMs }), CONTEXT).job;
    expect(job.activityAgesMs).toEqual([30_000, 600_000]);
    expect(job.apiNowMs).toBe(result.serverNowMs);
  });

  it("wakes the notifier when it raised alerts", () => {
    expect(stepEffects(committed({ alerts: [entry] }), CONTEXT).deliver).toBe(true);
  });

  it("reports and logs alerts the full outbox dropped, with the limit", () => {
    const effects = stepEffects(committed({}, [entry, entry]), CONTEXT);
    expect(effects.reports).toContainEqual({ event: "alertsDropped", count: 2 });
    expect(effects.logs).toContainEqual({
      level: "error",
      fields: { project: "p-1", dropped: 2, limit: 100 },
      message: "the alert outbox is full; new alerts were dropped",
    });
  });

  it("warns of each odd answer the walk worked around", () => {
    const anomalies = [{ kind: "duplicate_record" as const, count: 4, example: "op-9" }];
    const effects = stepEffects(committed({ anomalies }), CONTEXT);
    const warnings = effects.logs.filter((l) => l.level === "warn");
    expect(warnings).toHaveLength(1);
    expect(warnings[0]?.fields).toMatchObject({
      project: "p-1",
      anomaly: "duplicate_record",
      count: 4,
    });
  });
});

describe("a poll that failed", () => {
  it("counts one request, keeps the lane and warns each time when the API's side is not at fault", () => {
    for (const error of [apiError("network"), apiError("http", 429), new Error("odd")]) {
      const failed = stepEffects({ kind: "poll_failed", error }, CONTEXT);
      expect(failed.job).toEqual({ requests: 1, open: true, slow: false });
      expect(failed.reports.map((r) => r.event)).toEqual(["pollFailed"]);
      expect(failed.logs.map((l) => l.message)).toEqual(["poll failed; nothing committed"]);
    }
  });

  it("backs the project off on a server error, a timeout or a malformed answer, marking a timeout slow", () => {
    const slow = stepEffects({ kind: "poll_failed", error: apiError("timeout") }, CONTEXT);
    expect(slow.job).toEqual({ requests: 3, open: true, slow: true, failed: "timeout" });
    expect(slow.reports.map((r) => r.event)).toEqual(["pollFailed"]);
    const failed = stepEffects({ kind: "poll_failed", error: apiError("http", 500) }, CONTEXT);
    expect(failed.job).toEqual({ requests: 3, open: true, slow: false, failed: "server_error" });
  });

  it("says once that the project's polls fail, and once that they succeed again", () => {
    const error = apiError("http", 502);
    const first = stepEffects({ kind: "poll_failed", error }, CONTEXT);
    expect(first.logs).toEqual([
      {
        level: "warn",
        fields: expect.objectContaining({
          account: "default",
          project: "p-1",
          reason: "server_error",
          status: 502,
        }) as unknown,
        message: PROJECT_FAILING,
      },
    ]);
    const failing = { ...CONTEXT, projectFailing: true };
    const again = stepEffects({ kind: "poll_failed", error }, failing);
    expect(again.logs.map((l) => l.level)).toEqual(["debug"]);
    const recovered = stepEffects(committed(), failing);
    expect(recovered.logs.filter((l) => l.level !== "debug")).toEqual([
      { level: "info", fields: { account: "default", project: "p-1" }, message: PROJECT_RECOVERED },
    ]);
  });

  it("reports nothing when the poll was abandoned (shutdown)", () => {
    const effects = stepEffects(
      { kind: "poll_failed", error: new Error("aborted") },
      { ...CONTEXT, aborted: true },
    );
    expect(effects.reports).toEqual([]);
    expect(effects.logs).toEqual([]);
    expect(effects.job).toEqual({ requests: 0, open: false });
  });
});

describe("a commit that failed", () => {
  const result = committed().result;

  it("repeats the poll later and says so", () => {
    const effects = stepEffects(
      { kind: "commit_failed", error: new Error("disk full"), result },
      CONTEXT,
    );
    expect(effects.reports.map((r) => r.event)).toEqual(["commitFailed"]);
    expect(effects.logs[0]?.message).toBe("state commit failed; the poll will be repeated");
    expect(effects.job).toEqual({ requests: 3, open: true });
    expect(effects.leaseLost).toBeUndefined();
  });

  it("gives the project up when the store fenced the commit", () => {
    const error = new LeaseLostError("p-1", "taken", { holder: "r-1", token: 4 }, "newer claim");
    const effects = stepEffects({ kind: "commit_failed", error, result }, CONTEXT);
    expect(effects.leaseLost).toBe(error);
    expect(effects.job).toEqual({ requests: 3, open: false });
  });
});

it("stops polling a project whose state file is unusable, and says what to do", () => {
  const error = new StateFileError("/state/p-1.json", "corrupt", "not JSON");
  const effects = stepEffects({ kind: "blocked", error }, CONTEXT);
  expect(effects.reports).toEqual([{ event: "blocked", error }]);
  expect(effects.logs[0]?.message).toMatch(/not polled until it is moved aside/);
  expect(effects.job).toEqual({ requests: 0, open: false });
});

describe("a poll the API refuses", () => {
  const failed = (status: number) => ({
    kind: "poll_failed" as const,
    error: apiError("http", status),
  });

  it("backs a gone or forbidden project off, with one error line when it starts", () => {
    for (const status of [404, 403]) {
      const first = stepEffects(failed(status), CONTEXT);
      expect(first.job).toEqual({ requests: 1, open: true, refused: "project" });
      expect(first.reports.map((r) => r.event)).toEqual(["pollFailed"]);
      expect(first.logs.map((l) => l.level)).toEqual(["error"]);
      expect(first.logs[0]?.message).toContain("the API refuses the project");
      // The polls refused after it are reported (status page, metrics) but not logged.
      const again = stepEffects(failed(status), { ...CONTEXT, projectRefused: true });
      expect(again.job.refused).toBe("project");
      expect(again.logs).toEqual([]);
    }
  });

  it("holds the account back on a refused key, with one error line when it starts", () => {
    const first = stepEffects(failed(401), CONTEXT);
    expect(first.job).toEqual({ requests: 1, open: true, refused: "key" });
    expect(first.logs.map((l) => [l.level, l.fields.account])).toEqual([["error", "default"]]);
    expect(first.logs[0]?.message).toContain("the API refuses the account's key");
    expect(stepEffects(failed(401), { ...CONTEXT, keyRefused: true }).logs).toEqual([]);
  });

  it("says once that a refusal ended when a poll is answered again", () => {
    const effects = stepEffects(committed(), {
      ...CONTEXT,
      projectRefused: true,
      keyRefused: true,
    });
    expect(effects.logs.filter((l) => l.level === "info").map((l) => l.message)).toEqual([
      "the API accepts the account's key again",
      "the API answers for the project again",
    ]);
  });

  it("says a wrong base URL once for the account, backing its projects off without a line each", () => {
    const baseUrl = (state: "found_wrong" | "still_wrong" | "right_again") => ({
      ...CONTEXT,
      baseUrl: { url: "http://127.0.0.1:8080/", state },
    });
    const found = stepEffects(failed(404), baseUrl("found_wrong"));
    expect(found.job).toEqual({ requests: 1, open: true, refused: "project" });
    expect(found.logs).toHaveLength(1);
    expect(found.logs[0]).toMatchObject({
      level: "error",
      fields: { account: "default", url: "http://127.0.0.1:8080/", status: 404 },
    });
    expect(found.logs[0]?.fields).not.toHaveProperty("project");
    expect(found.logs[0]?.message).toMatch(
      /^the API answers 404 at its root: the base URL is probably wrong \(it should end in \/api\/v2/,
    );
    const known = stepEffects(failed(404), baseUrl("still_wrong"));
    expect(known.job.refused).toBe("project");
    expect(known.logs).toEqual([]);
    const again = stepEffects(committed(), baseUrl("right_again"));
    expect(again.logs.filter((l) => l.level === "info")).toEqual([
      {
        level: "info",
        fields: { account: "default", url: "http://127.0.0.1:8080/" },
        message: "the API answers at the account's base URL again",
      },
    ]);
  });

  it("treats other failures as before: a 503 is no refusal", () => {
    expect(stepEffects(failed(503), CONTEXT).job.refused).toBeUndefined();
  });
});

describe("which failures back a project off", () => {
  it("counts 5xx, timeouts and malformed answers; not refusals, 429, other 4xx or the network", () => {
    const kinds = (errors: unknown[]) => errors.map(failureOf);
    expect(
      kinds([
        apiError("http", 500),
        apiError("http", 503),
        apiError("timeout"),
        apiError("invalid_response"),
        new WalkError("cursor_revisited", "a cursor came back"),
      ]),
    ).toEqual(["server_error", "server_error", "timeout", "invalid_response", "invalid_response"]);
    const statuses = [401, 403, 404, 409, 429].map((s) => apiError("http", s));
    expect(kinds([...statuses, apiError("network"), new Error("odd")])).toEqual(
      Array.from({ length: 7 }, () => undefined),
    );
  });
});
