/**
 * The status page without a browser: the project views and the tracker that hear the daemon,
 * the view model built from them, the pure renderer (escaping, caps, empty states) and the
 * route's HTTP answer.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { RunningServer } from "../../src/server/index.js";
import { defaultSink } from "../../src/config/index.js";
import {
  StatusTracker,
  createStatusPage,
  statusFilterOf,
  escapeHtml,
  formatDuration,
  renderStatusPage,
  statusPageSecrets,
} from "../../src/status/index.js";
import { ProjectViews, broadcast } from "../../src/sync/index.js";
import {
  NOW,
  projectInfo,
  serveStatusPage,
  StatusFixture,
  T0,
  viewOf,
  deadLetter,
  ended,
  outboxEntry,
  pollResult,
  snapshot,
  state,
  trackedOp,
} from "./support.js";

/** The rows of the projects table, in order, by project id. */
function projectRows(html: string): string[] {
  return [...html.matchAll(/<tr data-project="([^"]*)"/g)].map((m) => m[1]!);
}

describe("the status tracker", () => {
  it("remembers failures newest first, bounded, without repeating one", () => {
    const tracker = new StatusTracker({ now: () => NOW, failuresKept: 3 });
    const s = state("p-1");
    for (let i = 1; i <= 5; i++) {
      const failure = ended(
        snapshot({ id: `op-${i}`, updatedAtMs: T0 + i * 1000, error: `e${i}` }),
      );
      tracker.committed("p-1", pollResult(s, [failure]));
      // The same failure reported again (a poll repeated) is not a new one.
      tracker.committed("p-1", pollResult(s, [failure]));
    }
    // Other transitions are not failures.
    tracker.committed(
      "p-1",
      pollResult(s, [
        { kind: "new", op: snapshot({ id: "op-new", status: "running" }) },
        {
          kind: "ended",
          op: snapshot({ id: "op-ok", status: "finished" }),
          status: "finished",
          count: 1,
          durationSeconds: 2,
        },
      ]),
    );
    expect(tracker.get("p-1")?.failures.map((f) => f.operationId)).toEqual([
      "op-5",
      "op-4",
      "op-3",
    ]);
    expect(tracker.get("p-1")?.failures[0]).toMatchObject({
      action: "apply_config",
      status: "failed",
      error: "e5",
      atMs: T0 + 5000,
      detectedAtMs: NOW,
    });
  });

  it("tracks the run of poll failures until a poll succeeds", () => {
    let now = NOW;
    const source = new StatusFixture({ now: () => now }).set("p-1", state("p-1"));
    const tracker = source.reports;
    tracker.committed("p-1", pollResult(state("p-1")), 0.1);
    expect(viewOf(source).projects[0]?.health).toBe("ok");
    now += 1000;
    tracker.pollFailed("p-1", new Error("listOperations answered 500"), 0.1);
    now += 1000;
    tracker.pollFailed("p-1", new Error("listOperations answered 503"), 0.1);
    const failing = viewOf(source).projects[0];
    expect(failing?.health).toBe("poll_failing");
    expect(failing?.failing).toEqual({
      sinceMs: NOW + 1000,
      count: 2,
      message: "listOperations answered 503",
      commit: false,
    });
    expect(failing?.lastSuccessMs).toBe(NOW);
    now += 1000;
    tracker.committed("p-1", pollResult(state("p-1")), 0.1);
    expect(viewOf(source).projects[0]?.health).toBe("ok");
    expect(viewOf(source).projects[0]?.lastSuccessMs).toBe(NOW + 3000);
  });

  it("starts from a loaded state: its last commit and its failed operations", () => {
    const loaded = state("p-1", {
      committedAtMs: T0 + 500,
      tracked: [
        trackedOp({ id: "op-a", status: "failed", failed: true, updatedAtMs: T0 + 1, error: "a" }),
        trackedOp({ id: "op-b", status: "failed", failed: true, updatedAtMs: T0 + 2, error: "b" }),
        trackedOp({ id: "op-c", status: "running", failed: true, failuresCount: 1 }),
      ],
    });
    // Loaded at start, as the daemon reports it.
    const row = viewOf(new StatusFixture({ now: () => NOW }).set("p-1", loaded)).projects[0]!;
    expect(row.health).toBe("waiting");
    expect(row.lastSuccessMs).toBe(T0 + 500);
    expect(row.lastSuccessBeforeStart).toBe(true);
    expect(row.failures.map((f) => f.operationId)).toEqual(["op-b", "op-a"]);
    expect(row.openCount).toBe(1);
  });

  it("forgets projects no longer watched", () => {
    const status = new StatusFixture().set("p-1", undefined).set("p-2", undefined);
    status.reports.committed("p-1", pollResult(state("p-1")), 0.1);
    status.reports.committed("p-2", pollResult(state("p-2")), 0.1);
    status.reports.projectsChanged(["p-2"]);
    const tracker = status.tracker;
    expect(tracker.get("p-1")).toBeUndefined();
    expect(tracker.get("p-2")).toBeDefined();
    // The shared views forget it too: its row and its series go.
    expect(status.projects.get("p-1")).toBeUndefined();
    expect(status.projects.get("p-2")).toBeDefined();
  });
});

describe("the status view", () => {
  it("shows each project's state: blocked, catching up, open and stuck operations, alerts", () => {
    const ok = state("p-ok", {
      tracked: [
        trackedOp({ id: "op-young", createdAtMs: NOW - 10_000 }),
        trackedOp({ id: "op-old", createdAtMs: NOW - 60_000 }),
        trackedOp({ id: "op-stuck", createdAtMs: NOW - 5_000, stuck: true }),
        trackedOp({ id: "op-failed", status: "failed", failed: true }),
      ],
      outbox: [
        outboxEntry("a1", ["webhook", "slack"], NOW - 30_000),
        outboxEntry("a2", ["webhook"], NOW - 60_000),
      ],
      deadLetters: [
        deadLetter("d1", "webhook", "max_age", NOW - 3000),
        deadLetter("d2", "gone", "client_error", NOW - 2000),
      ],
    });
    const catching = state("p-catching", {
      segment: { top: { second: 1, ids: [] }, resumeCursor: "c" },
    });
    const source = new StatusFixture({ now: () => NOW })
      .set("p-ok", ok)
      .set("p-catching", catching)
      .block("p-blocked", "/var/lib/pgcp/p-blocked.json")
      .set("p-new", undefined);
    source.reports.committed("p-ok", pollResult(ok), 0.1);
    source.reports.committed("p-catching", pollResult(catching), 0.1);
    const view = viewOf(source, {
      sinks: [
        { name: "webhook", kind: "webhook" },
        { name: "slack", kind: "slack" },
      ],
    });
    // Problems first (blocked, then the project with a stuck operation), then the daemon's order.
    expect(view.projects.map((p) => [p.projectId, p.health])).toEqual([
      ["p-blocked", "blocked"],
      ["p-ok", "ok"],
      ["p-catching", "catching_up"],
      ["p-new", "waiting"],
    ]);
    expect(view.projects[0]?.blocked).toEqual({
      file: "/var/lib/pgcp/p-blocked.json",
      problem: "corrupt",
    });
    const okRow = view.projects[1]!;
    expect(okRow.openCount).toBe(3);
    expect(okRow.stuckCount).toBe(1);
    expect(okRow.open.map((o) => o.id)).toEqual(["op-stuck", "op-old", "op-young"]);
    expect([okRow.pending, okRow.deadLetters]).toEqual([2, 2]);
    expect(view.counts).toMatchObject({
      projects: 4,
      open: 3,
      stuck: 1,
      pending: 2,
      deadLetters: 2,
    });
    expect(view.counts.health).toEqual({
      blocked: 1,
      poll_failing: 0,
      catching_up: 1,
      waiting: 1,
      ok: 1,
    });
    expect(view.sinks).toEqual([
      {
        name: "webhook",
        kind: "webhook",
        pending: 2,
        oldestPendingMs: NOW - 60_000,
        deadLetters: 1,
      },
      { name: "slack", kind: "slack", pending: 1, oldestPendingMs: NOW - 30_000, deadLetters: 0 },
      // A sink no longer configured still shows what it left behind.
      { name: "gone", kind: undefined, pending: 0, oldestPendingMs: undefined, deadLetters: 1 },
    ]);
    expect(view.deadLetters.map((d) => [d.sink, d.reason])).toEqual([
      ["gone", "client_error"],
      ["webhook", "max_age"],
    ]);
  });

  it("keeps only the newest dead letters of all projects", () => {
    const source = new StatusFixture();
    for (let p = 0; p < 50; p++) {
      source.set(
        `p-${p}`,
        state(`p-${p}`, {
          deadLetters: Array.from({ length: 20 }, (_, i) =>
            deadLetter(`d-${p}-${i}`, "webhook", `r-${p}-${i}`, T0 + i * 100 + p),
          ),
        }),
      );
    }
    const view = viewOf(source, { limits: { deadLettersShown: 4 } });
    expect(view.deadLetters.map((d) => d.reason)).toEqual([
      "r-49-19",
      "r-48-19",
      "r-47-19",
      "r-46-19",
    ]);
    expect(view.counts.deadLetters).toBe(1000);
  });

  it("never holds a secret: no credentials in the API URL, outside texts redacted", () => {
    const projects = new ProjectViews({ now: () => NOW });
    const page = createStatusPage({
      projects,
      version: "1",
      apiUrl: "https://user:pa55word@api.example.test/api/v2?key=sk-live-SECRET-123#frag",
      sinks: [{ name: "webhook", kind: "webhook" }],
      notReadyReason: () => undefined,
      secrets: statusPageSecrets(
        ["sk-live-SECRET-123"],
        [
          {
            kind: "webhook",
            url: "https://hooks.example/T0/SECRETPATH",
            secret: "signing-SECRET",
            config: defaultSink("webhook"),
          },
        ],
      ),
      now: () => NOW,
    });
    // Both hear the daemon, as the exporter wires them.
    const reports = broadcast([projects, page.observer], (error) => {
      throw error;
    });
    reports.stateLoaded("p-1", state("p-1"));
    reports.projectsChanged(["p-1"]);
    reports.committed(
      "p-1",
      pollResult(state("p-1"), [
        ended(
          snapshot({
            id: "op-1",
            error: "rejected key sk-live-SECRET-123 for https://hooks.example/T0/SECRETPATH",
          }),
        ),
      ]),
      0.1,
    );
    reports.pollFailed("p-1", new Error("auth failed for sk-live-SECRET-123 signing-SECRET"), 0.1);
    const view = page.view();
    expect(view.apiUrl).toBe("https://api.example.test/api/v2");
    const html = renderStatusPage(view);
    for (const secret of [
      "sk-live-SECRET-123",
      "SECRETPATH",
      "signing-SECRET",
      "pa55word",
      "frag",
    ]) {
      expect(html).not.toContain(secret);
    }
    expect(html).toContain("rejected key [redacted] for [redacted]");
    expect(html).toContain("auth failed for [redacted] [redacted]");
  });
});

describe("the renderer", () => {
  it("renders error texts and ids from outside as text", () => {
    const source = new StatusFixture({ now: () => NOW }).set("p-1", state("p-1"));
    const tracker = source.reports;
    const evil = `<script>alert("x")</script> & <img src=x onerror=alert(1)> 'quoted'`;
    tracker.committed(
      "p-1",
      pollResult(state("p-1"), [
        ended(snapshot({ id: `op-"><b>`, action: "<i>apply</i>", error: evil })),
      ]),
      0.1,
    );
    const html = renderStatusPage(viewOf(source));
    expect(html).not.toContain("<script>");
    expect(html).not.toContain("<img");
    expect(html).not.toContain("<i>apply");
    expect(html).not.toContain(`op-"><b>`);
    expect(html).toContain(
      "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &lt;img src=x onerror=alert(1)&gt; &#39;quoted&#39;",
    );
    expect(html).toContain(`data-operation="op-&quot;&gt;&lt;b&gt;"`);
    // The only <script> anywhere would be ours, and there is none.
    expect(html.toLowerCase()).not.toMatch(/<script/);
  });

  it("replaces control characters and shortens long texts", () => {
    const source = new StatusFixture({ now: () => NOW }).set("p-1", state("p-1"));
    source.reports.committed(
      "p-1",
      pollResult(state("p-1"), [
        ended(snapshot({ id: "op-1", error: "bad\u0000byte\u001b[31m " + "x".repeat(2000) })),
      ]),
      0.1,
    );
    const view = viewOf(source, {
      limits: { textChars: 100 },
    });
    const error = view.projects[0]!.failures[0]!.error!;
    expect(error).toHaveLength(100);
    expect(error.startsWith("bad\ufffdbyte\ufffd[31m x")).toBe(true);
    expect(error.endsWith("…")).toBe(true);
  });

  it("has empty states: no project, no sink, no dead letter, not ready", () => {
    const html = renderStatusPage(
      viewOf(new StatusFixture(), {
        sinks: [],
        notReadyReason: () => "no project is watched yet",
      }),
    );
    expect(html).toMatch(/^<!doctype html>/);
    expect(html).toContain('<meta http-equiv="refresh" content="10">');
    expect(html).toContain("No project is watched yet.");
    expect(html).toContain("No sink is configured: alerts are not sent.");
    expect(html).toMatch(
      /<section id="dead-letters">\s*<h2>Dead letters<\/h2>\s*<p[^>]*>None\.<\/p>/,
    );
    expect(html).toContain(
      'class="badge bad">not ready</span> <span class="muted">no project is watched yet',
    );
    expect(html).toContain('id="version">9.9.9<');
    for (const link of ["metrics", "healthz", "readyz"]) {
      expect(html).toContain(`<a href="${link}">/${link}</a>`);
    }
    expect(projectRows(html)).toEqual([]);
  });

  it("shows a project with nothing going on plainly", () => {
    const source = new StatusFixture({ now: () => NOW }).set("p-1", state("p-1"));
    source.reports.committed("p-1", pollResult(state("p-1")), 0.1);
    const html = renderStatusPage(viewOf(source));
    const row = /<tr data-project="p-1"[\s\S]*?<\/tr>/.exec(html)?.[0] ?? "";
    expect(row).toContain('data-health="ok"');
    expect(row).toContain(">ok</span>");
    expect(row).toContain("(0 s ago)");
    expect(row).toMatch(/class="open"><span class="muted">none</);
    expect(row).toMatch(/class="failures"><span class="muted">none</);
    expect(row).toContain("0 pending · 0 dead-lettered");
    expect(html).toMatch(/<tr data-sink="webhook">[\s\S]*?class="num pending">0</);
  });

  it("caps the lists of 10,000 projects, problems first, in one pass", () => {
    const source = new StatusFixture({ now: () => NOW });
    const states = new Map<string, ReturnType<typeof state>>();
    for (let i = 0; i < 10_000; i++) {
      const id = `p-${String(i).padStart(5, "0")}`;
      const s = state(id, {
        tracked: Array.from({ length: 12 }, (_, j) => trackedOp({ id: `${id}-op-${j}` })),
        outbox: [outboxEntry(`${id}-a`, ["webhook"], NOW - i)],
      });
      source.set(id, s);
      states.set(id, s);
    }
    const tracker = source.reports;
    for (const [id, s] of states) if (id !== "p-09999") tracker.committed(id, pollResult(s), 0.1);
    // The last project is failing: it comes first.
    tracker.pollFailed("p-09999", new Error("timeout"), 0.1);
    for (let k = 0; k < 30; k++) {
      tracker.committed(
        "p-05000",
        pollResult(states.get("p-05000")!, [
          ended(snapshot({ id: `f-${k}`, updatedAtMs: T0 + k })),
        ]),
        0.1,
      );
    }
    const started = performance.now();
    const view = viewOf(source);
    const html = renderStatusPage(view);
    const ms = performance.now() - started;
    // Again, with every state summarised already.
    const again = performance.now();
    renderStatusPage(viewOf(source));
    const cachedMs = performance.now() - again;

    const rows = projectRows(html);
    expect(rows).toHaveLength(200);
    expect(rows.slice(0, 3)).toEqual(["p-09999", "p-05000", "p-00000"]);
    expect(view.projectsOmitted).toBe(9_800);
    expect(html).toContain("Showing 200 of 10000 projects");
    expect(view.counts).toMatchObject({ projects: 10_000, open: 120_000, pending: 10_000 });
    expect(view.counts.health).toMatchObject({ ok: 9_999, poll_failing: 1 });
    expect(view.sinks[0]).toMatchObject({
      name: "webhook",
      pending: 10_000,
      oldestPendingMs: NOW - 9_999,
    });
    // Per row: 5 open operations listed of 12, 5 failures of the 20 remembered.
    const failing = view.projects[1]!;
    expect(failing.open).toHaveLength(5);
    expect(failing.failureCount).toBe(20);
    expect(failing.failures.map((f) => f.operationId)).toEqual([
      "f-29",
      "f-28",
      "f-27",
      "f-26",
      "f-25",
    ]);
    expect(html).toContain("and 7 more");
    expect(html).toContain("and 15 older");
    expect(html.length).toBeLessThan(1_000_000);
    expect(ms).toBeLessThan(2_000);
    expect(cachedMs).toBeLessThan(500);
  });
});

describe("names beside ids, and the filter by account and organisation", () => {
  /** Four projects of two accounts; three described, two of them in organisations. */
  function fleet(): StatusFixture {
    const source = new StatusFixture({ now: () => NOW })
      .set("p-personal", state("p-personal"))
      .set("p-acme", state("p-acme", { deadLetters: [deadLetter("d1", "webhook", "gone", NOW)] }))
      .set("p-globex", state("p-globex"))
      .set("p-new", undefined);
    const { reports } = source;
    reports.projectDescribed(
      "p-personal",
      projectInfo({ name: `<script>alert("x")</script> & 'ops'`, account: "people" }),
    );
    reports.projectDescribed(
      "p-acme",
      projectInfo({
        name: "Acme Billing",
        account: "people",
        orgId: "org-acme-1234",
        orgName: "Acme <i>Corp</i>",
      }),
    );
    reports.projectDescribed(
      "p-globex",
      projectInfo({ name: "Globex Lab", account: "globex", orgId: "org-globex-5678" }),
    );
    return source;
  }

  it("shows each project's name beside its id, the id alone while it is unknown", () => {
    const view = viewOf(fleet());
    expect(view.projects.map((p) => [p.projectId, p.name, p.orgId, p.orgName])).toEqual([
      ["p-personal", `<script>alert("x")</script> & 'ops'`, undefined, undefined],
      ["p-acme", "Acme Billing", "org-acme-1234", "Acme <i>Corp</i>"],
      ["p-globex", "Globex Lab", "org-globex-5678", undefined],
      ["p-new", undefined, undefined, undefined],
    ]);
    expect(view.deadLetters[0]).toMatchObject({ projectId: "p-acme", projectName: "Acme Billing" });
    expect(view.organisations).toEqual([
      { id: "org-acme-1234", name: "Acme <i>Corp</i>", projects: 1 },
      { id: "org-globex-5678", name: undefined, projects: 1 },
    ]);
    const html = renderStatusPage(view);
    expect(html).toContain(
      '<span class="project-name">Acme Billing</span> <code class="project-id">p-acme</code>',
    );
    expect(html).toMatch(/<td class="project"><code class="project-id">p-new<\/code><\/td>/);
    // The names come from outside: text, never markup.
    expect(html).toContain(
      '<span class="project-name">&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;ops&#39;</span>',
    );
    expect(html).toContain(">Acme &lt;i&gt;Corp&lt;/i&gt;</a>");
    expect(html.toLowerCase()).not.toMatch(/<script/);
    expect(html).not.toContain("<i>Corp");
    // An organisation whose name is unknown is shown by its id.
    expect(html).toContain('data-org="org-globex-5678">org-globex-5678</a>');
    // The dead letter names its project too.
    expect(html).toMatch(/<tr class="dead-letter"[\s\S]*?Acme Billing<\/span> <code>p-acme</);
  });

  it("keeps only the projects of an account, an organisation, or both", () => {
    const source = fleet();
    const ids = (filter: { account?: string; orgId?: string }) =>
      viewOf(source, { filter }).projects.map((p) => p.projectId);
    expect(ids({ account: "people" })).toEqual(["p-personal", "p-acme"]);
    expect(ids({ orgId: "org-globex-5678" })).toEqual(["p-globex"]);
    expect(ids({ account: "people", orgId: "org-acme-1234" })).toEqual(["p-acme"]);
    expect(ids({ account: "globex", orgId: "org-acme-1234" })).toEqual([]);
    const view = viewOf(source, { filter: { orgId: "org-acme-1234" } });
    // The counts, the outbox and the dead letters are the kept projects' alone.
    expect(view.counts.projects).toBe(1);
    expect(view.counts.deadLetters).toBe(1);
    expect(view.filter).toEqual({
      account: undefined,
      orgId: "org-acme-1234",
      orgName: "Acme <i>Corp</i>",
      unknownAccount: false,
      unknownOrg: false,
      watched: 4,
    });
    expect(viewOf(source, { filter: { account: "globex" } }).counts.deadLetters).toBe(0);
    const html = renderStatusPage(view);
    expect(projectRows(html)).toEqual(["p-acme"]);
    expect(html).toContain('<option value="org-acme-1234" selected>');
    expect(html).toContain("Showing the 1 of 4 watched projects of the organisation");
  });

  it("shows no project, and says why, for an unknown account or organisation", () => {
    const source = fleet();
    const account = viewOf(source, { filter: { account: "nobody" } });
    expect(account.projects).toEqual([]);
    expect(account.filter?.unknownAccount).toBe(true);
    const html = renderStatusPage(account);
    expect(html).toContain('id="filter-unknown-account"');
    expect(html).toContain("No watched project matches this filter.");
    const org = viewOf(source, { filter: { orgId: "org-nowhere-1" } });
    expect(org.projects).toEqual([]);
    expect(org.filter?.unknownOrg).toBe(true);
    expect(renderStatusPage(org)).toContain('id="filter-unknown-org"');
  });

  it("reads the filter from the query, refusing malformed values", () => {
    expect(statusFilterOf("/")).toBeUndefined();
    expect(statusFilterOf("/?refresh=1&account=&org=")).toBeUndefined();
    expect(statusFilterOf("/?account=people&org=org-acme-1234")).toEqual({
      account: "people",
      orgId: "org-acme-1234",
    });
    expect(() => statusFilterOf("/?account=a%20b")).toThrow(/is not an account's name/);
    expect(() => statusFilterOf("/?org=ORG")).toThrow(/is not an organisation's id/);
    expect(() => statusFilterOf("/?org=org-a&org=org-b")).toThrow(/org is given 2 times/);
    expect(() => statusFilterOf("/?account=people", "summary")).toThrow(/counts only/);
  });
});

describe("formatting", () => {
  it("escapes every character that matters in text and attributes", () => {
    expect(escapeHtml(`<a href="x">'&'</a>`)).toBe(
      "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;",
    );
  });

  it("says durations briefly", () => {
    expect(
      [
        0,
        999,
        59_000,
        60_000,
        3_599_000,
        3_600_000,
        5_400_000,
        47 * 3_600_000,
        49 * 3_600_000,
        2 * 86_400_000,
      ].map(formatDuration),
    ).toEqual([
      "0 s",
      "0 s",
      "59 s",
      "1 min",
      "59 min",
      "1 h",
      "1 h 30 min",
      "47 h",
      "2 d 1 h",
      "2 d",
    ]);
  });
});

describe("the route", () => {
  let server: RunningServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it("answers HTML that is never cached, and HEAD without a body", async () => {
    const source = new StatusFixture().set("p-1", state("p-1"));
    const page = createStatusPage({
      projects: source,
      version: "1.2.3",
      apiUrl: "https://api.example.test/api/v2",
      sinks: [],
      notReadyReason: () => undefined,
    });
    server = await serveStatusPage(page);
    const response = await fetch(`${server.url}/?refresh=1`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(response.headers.get("cache-control")).toBe("no-store");
    expect(response.headers.get("content-security-policy")).toContain("default-src 'none'");
    const html = await response.text();
    expect(html).toContain('<tr data-project="p-1"');
    expect(Number(response.headers.get("content-length"))).toBe(Buffer.byteLength(html));

    // Its one form is sent to the page itself; a malformed filter is a 400 that says why.
    expect(response.headers.get("content-security-policy")).toContain("form-action 'self'");
    const bad = await fetch(`${server.url}/?org=${encodeURIComponent("<b>")}`);
    expect(bad.status).toBe(400);
    expect(await bad.text()).toBe(
      `bad request: org="<b>" is not an organisation's id (lowercase letters, digits and '-', as org-cool-dew-12345678)\n`,
    );

    const head = await fetch(server.url, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(head.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(await head.text()).toBe("");
  });

  it("renders before the daemon exists", () => {
    const page = createStatusPage({
      projects: new ProjectViews(),
      version: "1.2.3",
      apiUrl: "https://api.example.test/api/v2",
      sinks: [{ name: "webhook", kind: "webhook" }],
      notReadyReason: () => "no project is watched yet",
    });
    expect(renderStatusPage(page.view())).toContain("No project is watched yet.");
  });
});
