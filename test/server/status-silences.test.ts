/**
 * Silences on the status page: the configured ones with whether each is open now, and the
 * recently silenced alerts (newest first, bounded, one row per alert and silence with its
 * sinks), escaped; at `summary` only how many there are.
 */
import { describe, expect, it } from "vitest";
import { configSchema, type SilenceConfig } from "../../src/config/index.js";
import { StatusTracker, renderStatusPage, statusView } from "../../src/status/index.js";
import { StatusFixture, T0, alert, pollResult, state } from "./support.js";

const NOW = T0 + 3_600_000;

function silences(): readonly SilenceConfig[] {
  return configSchema.parse({
    api: { key: "k" },
    projects: ["p-1"],
    silences: [
      {
        name: "open-now",
        comment: "<b>moving</b>",
        projects: ["p-1"],
        start: new Date(NOW - 60_000).toISOString(),
        end: new Date(NOW + 7_200_000).toISOString(),
      },
      { name: "nightly", cron: "0 3 * * *", duration: "1h", sinks: ["slack"] },
      { name: "over", start: "2020-01-01T00:00:00Z", end: "2020-01-02T00:00:00Z" },
    ],
  }).silences;
}

function page(tracker: StatusTracker, detail: "summary" | "full") {
  const status = new StatusFixture();
  const view = statusView({
    source: status,
    tracker,
    version: "9.9.9",
    apiUrl: "https://api.example.test/api/v2",
    sinks: [{ name: "slack", kind: "slack" }],
    silences: silences(),
    notReadyReason: () => undefined,
    now: () => NOW,
  });
  return { view, html: renderStatusPage(view, detail) };
}

describe("silences on the status page", () => {
  it("lists recently silenced alerts newest first, bounded, with the silence and its sinks", () => {
    const tracker = new StatusTracker({ now: () => NOW, silencedKept: 3 });
    for (let i = 1; i <= 4; i++) {
      const a = alert({ id: `a-${i}`, operationId: `op-${i}`, action: "apply<config>" });
      tracker.committed("p-1", {
        ...pollResult(state("p-1")),
        silenced: [
          { alert: a, sink: "slack", silence: "open-now" },
          { alert: a, sink: "hook", silence: "open-now" },
        ],
      });
    }
    const { view, html } = page(tracker, "full");
    expect(view.silenced.map((s) => [s.operationId, s.sinks])).toEqual([
      ["op-4", ["slack", "hook"]],
      ["op-3", ["slack", "hook"]],
      ["op-2", ["slack", "hook"]],
    ]);
    expect(html).toContain('<tr class="silenced-alert" data-silence="open-now">');
    expect(html).toContain("apply&lt;config&gt;");
    expect(html).not.toContain("apply<config>");
    expect(html).not.toContain("<code>op-1</code>");
  });

  it("shows each configured silence open or closed, until when or when it next opens", () => {
    const { view, html } = page(new StatusTracker({ now: () => NOW }), "full");
    expect(view.silences.map((s) => [s.name, s.active, s.untilMs, s.nextMs])).toEqual([
      ["open-now", true, NOW + 7_200_000, undefined],
      ["nightly", false, undefined, Date.parse("2025-01-01T03:00:00Z")],
      ["over", false, undefined, undefined],
    ]);
    expect(html).toMatch(/data-silence="open-now" data-active="true"/);
    expect(html).toContain("&lt;b&gt;moving&lt;/b&gt;");
    expect(html).toContain("projects: p-1");
    expect(html).toContain("closed for good");
  });

  it("shows only counts at the summary level", () => {
    const tracker = new StatusTracker({ now: () => NOW });
    tracker.committed("p-1", {
      ...pollResult(state("p-1")),
      silenced: [{ alert: alert({ id: "a-1" }), sink: "slack", silence: "open-now" }],
    });
    const { html } = page(tracker, "summary");
    expect(html).toContain("3 silences configured, 1 open now; 1 alert silenced recently.");
    expect(html).not.toContain("open-now");
    expect(html).not.toContain("moving");
  });
});
