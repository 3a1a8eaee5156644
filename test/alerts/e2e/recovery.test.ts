/**
 * A recovery is sent only where its failure went. The exporter (in-process) watches the
 * simulator and delivers to two local webhook receivers (the generic webhook's documented
 * contract): `all` takes every alert, `failures-of-apply` drops the failures of one action.
 * Operations fail and are then retried by the service until they finish; some fail before any
 * sink could hear of them (the exporter's first poll finds them failed already), one fails
 * across a restart of the exporter. Every `resolves` a receiver gets names an alert it got.
 * An operation stuck, failed, retried and failed again gets one recovery per receiver, naming
 * every alert of the operation that receiver got (`resolves` and `also_resolves`).
 */
import { describe, expect, it } from "vitest";
import type { RawConfig } from "../../../src/config/index.js";
import type { TestSimulator } from "../../support/simulator.js";
import { alertSuite } from "./alert-suite.js";
import {
  exporterSettings,
  failsThenFinishes,
  scriptOperation,
  startAlertExporter,
  waitFor,
  waitForCommits,
  waitForFirstPolls,
  webhookBody,
  type AlertExporter,
  type ScriptedReceiver,
  type SimProject,
} from "./support.js";

let sim: TestSimulator;
let all: ScriptedReceiver;
let picky: ScriptedReceiver;
let project: SimProject;
let stateDir: string;

alertSuite(
  { receivers: ["all", "picky"], tempPrefix: "pgcp-recovery-" },
  (s) => ({ sim, all, picky, project, stateDir } = s),
);

/** The exporter, with `more` over its settings. */
function start(more: readonly RawConfig[] = []): Promise<AlertExporter> {
  const sinks: RawConfig = {
    sinks: [
      { name: "all", kind: "webhook", urlEnv: "HOOK_ALL_URL", groupWindow: 0 },
      {
        name: "picky",
        kind: "webhook",
        urlEnv: "HOOK_PICKY_URL",
        groupWindow: 0,
        drop: [{ actions: ["apply_storage_config"], kinds: ["operation_failed"] }],
      },
    ],
  };
  return startAlertExporter(
    [exporterSettings(sim, stateDir, [project.projectId]), sinks, ...more],
    {
      HOOK_ALL_URL: `${all.url}/all`,
      HOOK_PICKY_URL: `${picky.url}/picky`,
    },
  );
}

/** Fails at `failAt`, is retried at `retryAt` and finishes a second later (simulated time). */
function failsThenRecovers(action: string, failAt: number, retryAt: number) {
  return scriptOperation(
    sim,
    project,
    action,
    failsThenFinishes(failAt, retryAt, "compute node restarted"),
  );
}

interface Received {
  readonly id: string;
  readonly kind: string;
  readonly operation_id: string;
  readonly resolves: string | null;
  readonly also_resolves: readonly string[];
}

function received(receiver: ScriptedReceiver): Received[] {
  return receiver.requests.flatMap((r) => webhookBody(r).alerts as unknown as Received[]);
}

it("sends a recovery only to the sinks that were sent its failure, also across a restart", async () => {
  // Failed before the exporter ever polled: history, no failure alert, so no recovery either.
  const before = await failsThenRecovers("apply_config", 1, 30);
  await sim.sim.advance(2);

  let exporter = await start();
  await waitForFirstPolls(exporter, [project.projectId]);

  // Failures both sinks get, one only `all` gets (picky drops failures of its action).
  const everywhere = await failsThenRecovers("apply_config", 1, 20);
  const onlyAll = await failsThenRecovers("apply_storage_config", 1, 20);
  // Fails now, recovers after a restart of the exporter.
  const acrossRestart = await failsThenRecovers("create_branch", 1, 40);
  await sim.sim.advance(2);
  await waitFor("the failures to be delivered", () =>
    received(all).filter((a) => a.kind === "operation_failed").length === 3 &&
    received(picky).filter((a) => a.kind === "operation_failed").length === 2
      ? true
      : undefined,
  );

  // The first two are retried and finish.
  await sim.sim.advance(20);
  await waitFor("the recoveries to be delivered", () =>
    received(all).filter((a) => a.kind === "operation_recovered").length >= 2 ? true : undefined,
  );
  // Stopped once they are acknowledged in the committed outbox: a message still in flight when
  // the exporter stops is sent again after its restart (at least once); one acknowledged never.
  await waitFor("the recoveries to be acknowledged", () =>
    exporter
      .state(project.projectId)
      ?.outbox.every((entry) => entry.alert.kind !== "operation_recovered")
      ? true
      : undefined,
  );
  await exporter.stop();

  // `before` finishes while the exporter is down; `acrossRestart` after it is back.
  await sim.sim.advance(12);
  exporter = await start();
  await waitForCommits(exporter, project.projectId, 2);
  await sim.sim.advance(10);
  await waitFor("the recovery after the restart", () =>
    received(all).some(
      (a) => a.kind === "operation_recovered" && a.operation_id === acrossRestart.id,
    )
      ? true
      : undefined,
  );
  await waitForCommits(exporter, project.projectId, 3);
  await exporter.stop();

  const recoveries = (alerts: Received[]) =>
    alerts
      .filter((a) => a.kind === "operation_recovered")
      .map((a) => a.operation_id)
      .sort();
  expect(recoveries(received(all))).toEqual([everywhere.id, onlyAll.id, acrossRestart.id].sort());
  expect(recoveries(received(picky))).toEqual([everywhere.id, acrossRestart.id].sort());
  expect(received(all).some((a) => a.operation_id === before.id)).toBe(false);
  expectOnlyIdsSent();
});

/** Every id a recovery names, a receiver was sent. */
function expectOnlyIdsSent(): void {
  for (const receiver of [all, picky]) {
    const alerts = received(receiver);
    const ids = new Set(alerts.map((a) => a.id));
    for (const alert of alerts) {
      if (alert.resolves !== null) expect(ids.has(alert.resolves)).toBe(true);
      for (const id of alert.also_resolves) expect(ids.has(id)).toBe(true);
    }
  }
}

describe("an operation with several alerts", () => {
  // A simulator of its own, whose clock lags the wall clock (the first test's ran ahead of it).
  alertSuite(
    { receivers: ["all", "picky"], tempPrefix: "pgcp-recovery-several-" },
    (s) => ({ sim, all, picky, project, stateDir } = s),
  );

  it("resolves with one recovery every alert of an operation each receiver was sent", async () => {
    // apply_storage_config is stuck once it has been open for a second by the API's clock.
    const exporter = await start([
      { stuck: { default: 86_400, actions: { start_compute: 86_400, apply_storage_config: 1 } } },
    ]);
    try {
      await waitForFirstPolls(exporter, [project.projectId]);
      const error = "volume detach timed out";
      const op = await scriptOperation(sim, project, "apply_storage_config", [
        { status: "running", after_seconds: 0 },
        { status: "failed", after_seconds: 2, error },
        { status: "running", after_seconds: 4 },
        { status: "failed", after_seconds: 6, error },
        { status: "finished", after_seconds: 8 },
      ]);
      const of = (receiver: ScriptedReceiver, kind: string) =>
        received(receiver).filter((a) => a.operation_id === op.id && a.kind === kind);
      await sim.sim.advance(1.5);
      await waitFor("the stuck alert", () => of(picky, "operation_stuck")[0]);
      // Each step is seen before the next: failed, retried, failed again.
      for (let failures = 1; failures <= 2; failures++) {
        await sim.sim.advance(failures === 1 ? 2 : 4);
        await waitFor(`failure ${String(failures)}`, () =>
          of(all, "operation_failed").length === failures ? true : undefined,
        );
      }
      await sim.sim.advance(2);
      await waitFor("both recoveries", () =>
        of(all, "operation_recovered").length > 0 && of(picky, "operation_recovered").length > 0
          ? true
          : undefined,
      );
      await waitForCommits(exporter, project.projectId, 2);

      const [stuck] = of(all, "operation_stuck");
      const [first, second] = of(all, "operation_failed");
      // `all` got every alert: its recovery names the last failure, then the others.
      expect(of(all, "operation_recovered")).toMatchObject([
        { resolves: second!.id, also_resolves: [first!.id, stuck!.id] },
      ]);
      // `picky` drops this action's failures: it got the stuck alert only, and that is resolved.
      expect(of(picky, "operation_failed")).toEqual([]);
      expect(of(picky, "operation_recovered")).toMatchObject([
        { resolves: stuck!.id, also_resolves: [] },
      ]);
      expectOnlyIdsSent();
    } finally {
      await exporter.stop();
    }
  });
});
