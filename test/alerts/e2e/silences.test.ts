/**
 * A quiet window, end to end: the exporter (in-process) watches the simulator with a Slack and
 * a webhook sink pointed at local receivers, and a one-off silence open from a minute ago to a
 * few seconds from now. A failure during the window reaches neither receiver, is counted in
 * `pgcp_alerts_silenced_total` for each sink and is listed on the status page with the
 * silence's name; a failure after the window is delivered to both.
 */
import { expect, it } from "vitest";
import type { TestSimulator } from "../../support/simulator.js";
import { alertSuite } from "./alert-suite.js";
import {
  exporterSettings,
  sampleValue,
  scriptFailure,
  sinkEnvironment,
  startAlertExporter,
  waitFor,
  waitForCommits,
  waitForFirstPolls,
  webhookBody,
  type ScriptedReceiver,
  type SimProject,
} from "./support.js";

/** How long the window stays open after the start of the test: room for one poll to find it. */
const WINDOW_MS = 15_000;

let sim: TestSimulator;
let slack: ScriptedReceiver;
let hook: ScriptedReceiver;
let project: SimProject;
let stateDir: string;

alertSuite({ tempPrefix: "pgcp-silences-" }, (s) => ({ sim, slack, hook, project, stateDir } = s));

it("keeps a failure in an open window from every sink, counts and lists it; sends one after", async () => {
  const endMs = Date.now() + WINDOW_MS;
  const exporter = await startAlertExporter(
    [
      exporterSettings(sim, stateDir, [project.projectId]),
      {
        sinks: [
          { name: "slack", kind: "slack", groupWindow: 0 },
          { name: "hook", kind: "webhook", groupWindow: 0 },
        ],
        silences: [
          {
            name: "fleet-migration",
            comment: "moving <every> project",
            start: new Date(Date.now() - 60_000).toISOString(),
            end: new Date(endMs).toISOString(),
          },
        ],
      },
    ],
    sinkEnvironment(slack.url, hook.url),
  );
  try {
    await waitForFirstPolls(exporter, [project.projectId]);
    const quiet = await scriptFailure(sim, project, "config push failed");
    await sim.sim.advance(2);

    const silenced = (sink: string, text: string) =>
      sampleValue(text, "pgcp_alerts_silenced_total", { kind: "operation_failed", sink });
    await waitFor("the failure to be counted as silenced", async () => {
      const text = await exporter.metrics();
      return silenced("slack", text) === 1 && silenced("hook", text) === 1;
    });
    const page = await exporter.get("/");
    expect(page.text).toMatch(
      /<tr class="silenced-alert" data-silence="fleet-migration">[\s\S]*?slack, hook[\s\S]*?apply_config/,
    );
    expect(page.text).toContain(`<code>${quiet.id}</code>`);
    expect(page.text).toMatch(/data-silence="fleet-migration" data-active="true"/);
    expect(page.text).toContain("moving &lt;every&gt; project");
    // Nothing is pending either: the outbox never held it.
    expect(exporter.state(project.projectId)?.outbox).toEqual([]);

    // After the window, a new failure goes to both.
    await waitFor("the window to close", () => Date.now() >= endMs, WINDOW_MS + 20_000);
    const loud = await scriptFailure(sim, project, "config push failed again");
    await sim.sim.advance(2);
    await waitFor("the failure after the window to reach both sinks", () =>
      slack.delivered().length > 0 && hook.delivered().length > 0 ? true : undefined,
    );
    await waitForCommits(exporter, project.projectId, 2);
    const hooked = hook.requests.flatMap((r) => webhookBody(r).alerts.map((a) => a.operation_id));
    expect(hooked).toEqual([loud.id]);
    expect(slack.requests.map((r) => r.text).join("\n")).not.toContain(quiet.id);
    expect(slack.requests.map((r) => r.text).join("\n")).toContain(loud.id);
    const text = await exporter.metrics();
    expect(silenced("slack", text)).toBe(1);
    expect(silenced("hook", text)).toBe(1);
    expect((await exporter.get("/")).text).toMatch(
      /data-silence="fleet-migration" data-active="false"/,
    );
  } finally {
    await exporter.stop();
  }
});
