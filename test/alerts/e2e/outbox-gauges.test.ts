/**
 * The outbox gauges (`pgcp_alerts_pending`, `pgcp_alerts_oldest_pending_timestamp_seconds`,
 * `pgcp_alerts_dead_letters`) follow the committed outbox, also when the notifier changes it
 * between polls (acknowledgements, dead letters) and while polls fail.
 *
 * Scenario: an alert waits in the outbox while the webhook answers 500; the API then goes down
 * (every operations read answers 503) and the webhook comes back. The alert is delivered and
 * acknowledged (the committed outbox is empty) while several polls fail, and `/metrics` says
 * no alert is pending.
 */
import { describe, expect, it } from "vitest";
import type { TestSimulator } from "../../support/simulator.js";
import { alertExporterSuite } from "./alert-suite.js";
import {
  sampleValue,
  scriptFailure,
  waitFor,
  type AlertExporter,
  type ScriptedReceiver,
  type SimProject,
} from "./support.js";

describe("the outbox gauges", () => {
  let sim: TestSimulator;
  let hook: ScriptedReceiver;
  let exporter: AlertExporter;
  let project: SimProject;
  const receiverUp = { value: false };

  alertExporterSuite(
    {
      scripts: {
        hook: () =>
          receiverUp.value ? { status: 200, body: "ok" } : { status: 500, body: "down" },
      },
      // The failing polls back off to a second at most: the test waits for two of them.
      layers: () => [
        {
          sinks: [{ name: "hook", kind: "webhook", groupWindow: 0.2 }],
          poll: { errorBackoffMax: 1 },
        },
      ],
    },
    (s) => ({ sim, hook, exporter, project } = s),
  );

  const pending = async () =>
    sampleValue(await exporter.metrics(), "pgcp_alerts_pending", { sink: "hook" }) ?? 0;
  const failedPolls = async () =>
    sampleValue(await exporter.metrics(), "pgcp_poll_duration_seconds_count", {
      result: "failure",
    }) ?? 0;

  it("(setup) delivers a pending alert while every poll fails", async () => {
    await scriptFailure(sim, project, "boom");
    await sim.sim.advance(2);
    await waitFor("a refused delivery", () => hook.requests.length >= 1);
    await waitFor("the gauge to show the pending alert", async () => (await pending()) === 1);

    // The API goes down; the webhook comes back.
    await sim.sim.addFault({ route: "listOperations", kind: "status", status: 503 });
    await sim.sim.addFault({ route: "getOperation", kind: "status", status: 503 });
    receiverUp.value = true;
    await waitFor("the delivery", () => hook.delivered().length === 1);
    await waitFor(
      "the outbox to drain",
      () => exporter.state(project.projectId)?.outbox.length === 0,
    );
    const failed = await failedPolls();
    await waitFor(
      "two failed polls after the delivery",
      async () => (await failedPolls()) >= failed + 2,
    );
  });

  it("pgcp_alerts_pending drops to 0 once the alert is delivered", async () => {
    expect(hook.delivered()).toHaveLength(1);
    expect(await pending()).toBe(0);
  });
});
