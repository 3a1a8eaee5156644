import { afterEach, describe, expect, it } from "vitest";
import { StateFileError } from "../../src/store/index.js";
import type { AccountProbe } from "../../src/metrics/index.js";
import type { Tier } from "../../src/scheduler/index.js";
import { T0_MS, alert, pollResult, projectState } from "./support/fixtures.js";
import { closeAll, family, lines, metricsFor, render, samples } from "./support/rendering.js";

afterEach(closeAll);

describe("project health metrics", () => {
  it("renders up from the latest poll outcome, 0 before the first poll", async () => {
    const metrics = metricsFor();
    metrics.projectsChanged(["p-new", "p-ok", "p-failing", "p-commit", "p-blocked"]);
    metrics.committed("p-ok", pollResult(projectState("p-ok")), 0.1);
    metrics.committed("p-failing", pollResult(projectState("p-failing")), 0.1);
    metrics.pollFailed("p-failing", new Error("503"), 2);
    metrics.commitFailed("p-commit", new Error("EIO"));
    metrics.blocked("p-blocked", new StateFileError("/s/p-blocked.json", "corrupt", "bad JSON"));
    expect(family(await render(metrics), "pgcp_project_up")).toEqual(
      lines(`
        # HELP pgcp_project_up 1 when the project's latest poll succeeded and was committed, 0 otherwise (also before its first poll; while it is polled with backoff, pgcp_project_backoff_next_try_timestamp_seconds says why).
        # TYPE pgcp_project_up gauge
        pgcp_project_up{project="p-new"} 0
        pgcp_project_up{project="p-ok"} 1
        pgcp_project_up{project="p-failing"} 0
        pgcp_project_up{project="p-commit"} 0
        pgcp_project_up{project="p-blocked"} 0
      `),
    );
  });

  it("renders the time of the latest committed poll, also one committed by an earlier run", async () => {
    const metrics = metricsFor();
    metrics.stateLoaded("p-1", projectState("p-1", { committedAtMs: T0_MS - 3_600_000 }));
    metrics.projectsChanged(["p-1", "p-2"]);
    let text = await render(metrics);
    expect(family(text, "pgcp_project_last_success_timestamp_seconds")).toEqual(
      lines(`
        # HELP pgcp_project_last_success_timestamp_seconds Time of the project's latest committed poll, also by an earlier run (absent before the first).
        # TYPE pgcp_project_last_success_timestamp_seconds gauge
        pgcp_project_last_success_timestamp_seconds{project="p-1"} ${(T0_MS - 3_600_000) / 1000}
      `),
    );
    metrics.committed("p-1", pollResult(projectState("p-1", { committedAtMs: T0_MS })), 0.1);
    metrics.pollFailed("p-1", new Error("503"), 1);
    text = await render(metrics);
    expect(samples(text, "pgcp_project_last_success_timestamp_seconds")).toEqual([
      `pgcp_project_last_success_timestamp_seconds{project="p-1"} ${T0_MS / 1000}`,
    ]);
  });

  it("renders a blocked project with its problem, until its state loads", async () => {
    const metrics = metricsFor();
    metrics.blocked(
      "p-1",
      new StateFileError("/s/p-1.json", "version", "written by a newer build"),
    );
    metrics.projectsChanged(["p-1", "p-2"]);
    expect(family(await render(metrics), "pgcp_project_blocked")).toEqual(
      lines(`
        # HELP pgcp_project_blocked 1 while the project is not polled because its state file cannot be used, by problem (corrupt, foreign, version, unreadable, unwritable).
        # TYPE pgcp_project_blocked gauge
        pgcp_project_blocked{project="p-1",problem="version"} 1
      `),
    );
    metrics.stateLoaded("p-1", projectState("p-1"));
    expect(samples(await render(metrics), "pgcp_project_blocked")).toEqual([]);
  });

  it("renders whether a catch-up is in progress", async () => {
    const metrics = metricsFor();
    metrics.projectsChanged(["p-1", "p-2", "p-3"]);
    metrics.committed("p-1", pollResult(projectState("p-1", { catchingUp: true })), 0.1);
    metrics.committed("p-2", pollResult(projectState("p-2")), 0.1);
    expect(family(await render(metrics), "pgcp_project_catching_up")).toEqual(
      lines(`
        # HELP pgcp_project_catching_up 1 while a catch-up walk over a long gap in the operations log is in progress, else 0.
        # TYPE pgcp_project_catching_up gauge
        pgcp_project_catching_up{project="p-1"} 1
        pgcp_project_catching_up{project="p-2"} 0
        pgcp_project_catching_up{project="p-3"} 0
      `),
    );
  });
});

describe("exporter metrics", () => {
  it("counts polls, commits, listings and discovery failures", async () => {
    const metrics = metricsFor();
    metrics.projectsChanged(["p-1"]);
    metrics.committed("p-1", pollResult(projectState("p-1")), 0.2);
    metrics.pollFailed("p-1", new Error("503"), 3);
    metrics.commitFailed("p-1", new Error("ENOSPC"));
    metrics.endpointsListed("p-1", []);
    metrics.endpointsFailed("p-1", new Error("timeout"));
    metrics.endpointsFailed("p-1", new Error("timeout"));
    metrics.discoveryFailed(new Error("401"), "default");
    const text = await render(metrics);
    expect(family(text, "pgcp_state_commits_total")).toEqual(
      lines(`
        # HELP pgcp_state_commits_total Commits of project state, by result (success, failure).
        # TYPE pgcp_state_commits_total counter
        pgcp_state_commits_total{result="success"} 1
        pgcp_state_commits_total{result="failure"} 1
      `),
    );
    expect(samples(text, "pgcp_endpoint_listings_total")).toEqual(
      lines(`
        pgcp_endpoint_listings_total{result="success"} 1
        pgcp_endpoint_listings_total{result="failure"} 2
      `),
    );
    expect(family(text, "pgcp_discovery_failures_total")).toEqual(
      lines(`
        # HELP pgcp_discovery_failures_total Failed discoveries of an account's projects (its previous project list stays).
        # TYPE pgcp_discovery_failures_total counter
        pgcp_discovery_failures_total{account="default"} 1
      `),
    );
    const polls = samples(text, "pgcp_poll_duration_seconds");
    expect(polls).toContain('pgcp_poll_duration_seconds_count{result="success"} 1');
    expect(polls).toContain('pgcp_poll_duration_seconds_sum{result="failure"} 3');
    expect(polls).toContain('pgcp_poll_duration_seconds_bucket{le="2.5",result="failure"} 0');
    expect(polls).toContain('pgcp_poll_duration_seconds_bucket{le="5",result="failure"} 1');
  });

  it("reads each account's scheduler and limiter at render time", async () => {
    let stretch = 1;
    let accounts: AccountProbe[] | undefined = undefined;
    const account = (name: string, tokens: number, projects: string[]): AccountProbe => ({
      name,
      scheduler: {
        budget: {
          get stretch() {
            return name === "a" ? stretch : 1;
          },
        },
        tierIntervalSeconds: (tier: Tier) =>
          (tier === "fast" ? 5 : tier === "active" ? 30 : 60) * (name === "a" ? stretch : 1),
      },
      client: { limiterStats: () => ({ tokensRemaining: tokens }) },
      projects: () => projects,
      keyRefusal: () => (name === "b" ? { sinceMs: 0, message: "401" } : undefined),
      projectBackoffs: () =>
        new Map(
          name === "a" ? [["p2", { reason: "server_error", nextTryMs: 1_700_000_042_500 }]] : [],
        ),
    });
    const metrics = metricsFor({ accounts: () => accounts });
    let text = await render(metrics);
    // No accounts yet: no series rather than made-up values.
    expect(family(text, "pgcp_api_rate_limit_tokens")).toEqual(
      lines(`
        # HELP pgcp_api_rate_limit_tokens Requests an account's rate limiter's token bucket would let through at once now.
        # TYPE pgcp_api_rate_limit_tokens gauge
      `),
    );
    expect(samples(text, "pgcp_scheduler_poll_interval_seconds")).toEqual([]);

    accounts = [account("a", 17, ["p1", "p2"]), account("b", 40, ["p3"])];
    text = await render(metrics);
    expect(family(text, "pgcp_scheduler_poll_interval_seconds")).toEqual(
      lines(`
        # HELP pgcp_scheduler_poll_interval_seconds Interval at which an account's projects of a lane are polled now (fast: with open operations; base: one whose poll has just found an operation, busier ones down to poll.fastInterval; idle: none within poll.activeWindow, stretched first when the budget is short).
        # TYPE pgcp_scheduler_poll_interval_seconds gauge
        pgcp_scheduler_poll_interval_seconds{account="a",lane="fast"} 5
        pgcp_scheduler_poll_interval_seconds{account="a",lane="base"} 30
        pgcp_scheduler_poll_interval_seconds{account="a",lane="idle"} 60
        pgcp_scheduler_poll_interval_seconds{account="b",lane="fast"} 5
        pgcp_scheduler_poll_interval_seconds{account="b",lane="base"} 30
        pgcp_scheduler_poll_interval_seconds{account="b",lane="idle"} 60
      `),
    );
    expect(samples(text, "pgcp_scheduler_projects")).toEqual(
      lines(`
        pgcp_scheduler_projects{account="a"} 2
        pgcp_scheduler_projects{account="b"} 1
      `),
    );
    // b's key is refused.
    expect(samples(text, "pgcp_account_up")).toEqual(
      lines(`
        pgcp_account_up{account="a"} 1
        pgcp_account_up{account="b"} 0
      `),
    );
    // a's p2 fails on the API's side: when it is tried next, and why.
    expect(samples(text, "pgcp_project_backoff_next_try_timestamp_seconds")).toEqual(
      lines(`
        pgcp_project_backoff_next_try_timestamp_seconds{project="p2",reason="server_error"} 1700000042.5
      `),
    );

    stretch = 2;
    text = await render(metrics);
    const runtime = [
      "pgcp_scheduler_poll_interval_seconds",
      "pgcp_scheduler_interval_stretch_ratio",
      "pgcp_api_rate_limit_tokens",
    ]
      .flatMap((name) => samples(text, name))
      .sort();
    expect(runtime).toEqual(
      lines(`
        pgcp_scheduler_poll_interval_seconds{account="a",lane="base"} 60
        pgcp_scheduler_poll_interval_seconds{account="a",lane="fast"} 10
        pgcp_scheduler_poll_interval_seconds{account="a",lane="idle"} 120
        pgcp_scheduler_poll_interval_seconds{account="b",lane="base"} 30
        pgcp_scheduler_poll_interval_seconds{account="b",lane="fast"} 5
        pgcp_scheduler_poll_interval_seconds{account="b",lane="idle"} 60
        pgcp_scheduler_interval_stretch_ratio{account="a"} 2
        pgcp_scheduler_interval_stretch_ratio{account="b"} 1
        pgcp_api_rate_limit_tokens{account="a"} 17
        pgcp_api_rate_limit_tokens{account="b"} 40
      `),
    );
  });

  it("renders the build info, with the revision when it is known", async () => {
    const help =
      "# HELP pgcp_build_info Version of the exporter, the git commit it was built from (empty when unknown) and the version of Node.js; always 1.";
    expect(family(await render(metricsFor({ version: "9.8.7" })), "pgcp_build_info")).toEqual(
      lines(`
        ${help}
        # TYPE pgcp_build_info gauge
        pgcp_build_info{version="9.8.7",revision="",node_version="${process.versions.node}"} 1
      `),
    );
    const revision = "0123456789abcdef0123456789abcdef01234567";
    expect(
      family(await render(metricsFor({ version: "9.8.7", revision })), "pgcp_build_info"),
    ).toEqual(
      lines(`
        ${help}
        # TYPE pgcp_build_info gauge
        pgcp_build_info{version="9.8.7",revision="${revision}",node_version="${process.versions.node}"} 1
      `),
    );
  });
});

describe("API request metrics", () => {
  const common = { route: "listOperations", method: "GET", attempt: 1, requestId: "r" } as const;

  it("counts requests by route and status code, transport errors by kind", async () => {
    const metrics = metricsFor();
    const { apiEvents } = metrics;
    apiEvents.onResponse?.({ ...common, status: 200, durationMs: 50 });
    apiEvents.onResponse?.({ ...common, status: 200, durationMs: 70 });
    apiEvents.onResponse?.({ ...common, route: "getOperation", status: 404, durationMs: 30 });
    apiEvents.onTransportError?.({ ...common, kind: "network", code: "ECONNRESET", durationMs: 5 });
    const text = await render(metrics);
    expect(family(text, "pgcp_api_requests_total")).toEqual(
      lines(`
        # HELP pgcp_api_requests_total API requests (each attempt) by route and outcome: the HTTP status code, or network or timeout when no response arrived.
        # TYPE pgcp_api_requests_total counter
        pgcp_api_requests_total{route="listOperations",code="200"} 2
        pgcp_api_requests_total{route="getOperation",code="404"} 1
        pgcp_api_requests_total{route="listOperations",code="network"} 1
      `),
    );
    const durations = samples(text, "pgcp_api_request_duration_seconds");
    expect(durations).toContain(
      'pgcp_api_request_duration_seconds_count{route="listOperations"} 3',
    );
    expect(durations).toContain(
      'pgcp_api_request_duration_seconds_sum{route="listOperations"} 0.125',
    );
    expect(durations).toContain(
      'pgcp_api_request_duration_seconds_bucket{le="0.05",route="listOperations"} 2',
    );
  });

  it("counts retries by reason, and rate-limit waits and pauses with their seconds", async () => {
    const metrics = metricsFor();
    const { apiEvents } = metrics;
    apiEvents.onRetry?.({ ...common, reason: "http_503", delayMs: 500, delaySource: "backoff" });
    apiEvents.onRetry?.({ ...common, reason: "http_503", delayMs: 900, delaySource: "backoff" });
    apiEvents.onRetry?.({ ...common, reason: "timeout", delayMs: 500, delaySource: "backoff" });
    apiEvents.onRateLimitWait?.({ route: "getOperation", waitedMs: 250 });
    apiEvents.onRateLimitWait?.({ route: "getOperation", waitedMs: 1250 });
    apiEvents.onRateLimitPause?.({ route: "listOperations", pauseMs: 30_000 });
    const text = await render(metrics);
    expect(samples(text, "pgcp_api_retries_total")).toEqual(
      lines(`
        pgcp_api_retries_total{route="listOperations",reason="http_503"} 2
        pgcp_api_retries_total{route="listOperations",reason="timeout"} 1
      `),
    );
    expect(samples(text, "pgcp_api_rate_limit_waits_total")).toEqual([
      'pgcp_api_rate_limit_waits_total{route="getOperation"} 2',
    ]);
    expect(samples(text, "pgcp_api_rate_limit_wait_seconds_total")).toEqual([
      'pgcp_api_rate_limit_wait_seconds_total{route="getOperation"} 1.5',
    ]);
    expect(samples(text, "pgcp_api_rate_limit_pauses_total")).toEqual([
      'pgcp_api_rate_limit_pauses_total{route="listOperations"} 1',
    ]);
    expect(samples(text, "pgcp_api_rate_limit_pause_seconds_total")).toEqual([
      'pgcp_api_rate_limit_pause_seconds_total{route="listOperations"} 30',
    ]);
  });
});

describe("alert firing metrics", () => {
  it("counts the alerts each sink keeps firing, not those that ended", async () => {
    const metrics = metricsFor();
    const firing = (id: string, sink: string, endedAtMs?: number) => ({
      sink,
      alert: alert("p-1", id),
      sinceMs: T0_MS,
      ...(endedAtMs === undefined ? {} : { endedAtMs }),
    });
    metrics.stateLoaded(
      "p-1",
      projectState("p-1", {
        firing: [
          firing("a", "am"),
          firing("b", "am"),
          firing("c", "am", T0_MS),
          firing("d", "am-2"),
        ],
      }),
    );
    metrics.projectsChanged(["p-1"]);
    expect(samples(await render(metrics), "pgcp_alerts_firing")).toEqual([
      `pgcp_alerts_firing{sink="am"} 2`,
      `pgcp_alerts_firing{sink="am-2"} 1`,
    ]);
  });
});
