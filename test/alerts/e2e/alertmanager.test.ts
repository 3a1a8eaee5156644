/**
 * The Alertmanager sink against real Alertmanagers (Debian's `prometheus-alertmanager`; CI
 * installs it, a local run without it is skipped naming the package). Two stand-alone peers,
 * each routing every notification at once to a webhook receiver of the test. The exporter
 * watches the simulator, whose scripted operations fail and recover.
 *
 * What a team relies on: a failure shows in Alertmanager with the labels its routes and
 * silences match on, and reaches the receiver; its recovery resolves it; a silence made in
 * Alertmanager mutes it; a peer that was down gets every firing alert once it is back; both
 * peers get them; and the exporter, killed with SIGKILL and started again, keeps re-sending
 * what fires (nothing but its state file remembers it).
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RawConfig } from "../../../src/config/index.js";
import type { ProjectState } from "../../../src/store/index.js";
import { requireBinary } from "../../e2e/support/binaries.js";
import {
  ALERTMANAGER_BINARY,
  ALERTMANAGER_PACKAGE,
  startAlertmanager,
  type GettableAlert,
  type RunningAlertmanager,
  type WebhookNotification,
} from "../../e2e/support/alertmanager.js";
import {
  NEVER_STUCK,
  QUICK_POLL,
  UNTHROTTLED_API,
  writeDaemonConfig,
} from "../../support/daemon-config.js";
import { spawnDaemon } from "../../support/daemon-process.js";
import { startReceiver, type Receiver } from "../../support/receiver.js";
import type { TestSimulator } from "../../support/simulator.js";
import { removeDir, tempDir } from "../../support/temp-dir.js";
import {
  createProject,
  exporterSettings,
  failsAfter,
  failsThenFinishes,
  scriptOperation,
  startAlertExporter,
  startSim,
  waitFor,
  waitForCommits,
  waitForFirstPolls,
  type AlertExporter,
  type SimProject,
} from "./support.js";

let binary: string | undefined;
let sim: TestSimulator;
let project: SimProject;
let hooks: Receiver;
let peers: RunningAlertmanager[] = [];
let stateDir: string;

beforeAll(async () => {
  binary = requireBinaryOrUndefined();
  if (binary === undefined) return;
  sim = await startSim();
  project = await createProject(sim);
  hooks = await startReceiver();
  const am = binary;
  peers = await Promise.all(
    ["one", "two"].map((name) => startAlertmanager(am, { webhookUrl: `${hooks.url}/${name}` })),
  );
  stateDir = await tempDir("pgcp-alertmanager-");
}, 60_000);

afterAll(async () => {
  if (binary === undefined) return;
  await Promise.all(peers.map((p) => p.remove()));
  await Promise.all([hooks.close(), sim.close()]);
  await removeDir(stateDir);
});

/** The binary, or undefined when missing outside CI (the tests then skip themselves). */
function requireBinaryOrUndefined(): string | undefined {
  try {
    return requireBinary(
      ALERTMANAGER_BINARY,
      (note) => {
        throw new SkipSignal(note);
      },
      ALERTMANAGER_PACKAGE,
    );
  } catch (error) {
    if (error instanceof SkipSignal) return undefined;
    throw error;
  }
}

class SkipSignal extends Error {}

function skipWithoutBinary(ctx: { skip: (note: string) => never }): void {
  if (binary === undefined) {
    requireBinary(ALERTMANAGER_BINARY, (note) => ctx.skip(note), ALERTMANAGER_PACKAGE);
  }
}

function sinkSettings(): RawConfig {
  return {
    sinks: [
      {
        name: "alertmanager",
        kind: "alertmanager",
        urlsEnv: "TEST_ALERTMANAGER_URLS",
        groupWindow: 0,
        resendInterval: 1,
        labels: { team: "platform" },
        severity: { operation_failed: "page" },
      },
    ],
    alerts: { statusPageUrl: "https://pgcp.example.test/" },
  };
}

/** The exporter, with `more` over the sink settings. */
function startExporter(more: readonly RawConfig[] = []): Promise<AlertExporter> {
  return startAlertExporter(
    [exporterSettings(sim, stateDir, [project.projectId]), sinkSettings(), ...more],
    {
      TEST_ALERTMANAGER_URLS: peers.map((p) => p.url).join(","),
    },
  );
}

/** Fails after `failAt` simulated seconds; with `finishAt`, is retried and finishes then. */
function failing(action: string, failAt: number, finishAt?: number) {
  const error = "compute node restarted";
  return scriptOperation(
    sim,
    project,
    action,
    finishAt === undefined
      ? failsAfter(failAt, "failed", error)
      : failsThenFinishes(failAt, finishAt - 1, error),
  );
}

function alertOf(alerts: readonly GettableAlert[], operationId: string): GettableAlert | undefined {
  return alerts.find((a) => a.labels.operation_id === operationId);
}

function notifications(peer: string): WebhookNotification[] {
  return hooks.requests
    .filter((r) => r.path === `/${peer}`)
    .map((r) => r.json as WebhookNotification);
}

function notified(peer: string, operationId: string, status: "firing" | "resolved"): boolean {
  return notifications(peer).some((n) =>
    n.alerts.some((a) => a.labels.operation_id === operationId && a.status === status),
  );
}

describe("an alertmanager sink", () => {
  it("resolves a stuck alert when its operation finishes, though its failure was not sent", async (ctx) => {
    skipWithoutBinary(ctx);
    const [sink] = sinkSettings().sinks as Record<string, unknown>[];
    const exporter = await startExporter([
      {
        // apply_storage_config is stuck once it has been open for a second by the API's clock.
        stuck: { ...NEVER_STUCK, actions: { ...NEVER_STUCK.actions, apply_storage_config: 1 } },
        // The team takes stuck operations here; failures go elsewhere.
        sinks: [{ ...sink, drop: [{ kinds: ["operation_failed"] }] }],
      },
    ]);
    try {
      await waitForFirstPolls(exporter, [project.projectId]);
      const op = await scriptOperation(sim, project, "apply_storage_config", [
        { status: "running", after_seconds: 0 },
        { status: "failed", after_seconds: 2, error: "volume detach timed out" },
        { status: "running", after_seconds: 4 },
        { status: "finished", after_seconds: 6 },
      ]);
      await sim.sim.advance(1.5);
      for (const peer of peers) {
        const stuck = await waitFor("the stuck alert in Alertmanager", async () =>
          alertOf(await peer.alerts(), op.id),
        );
        expect(stuck.labels.alertname).toBe("PgcpOperationStuck");
      }
      // It fails (not sent here), is retried, and finishes (at 2, 4 and 6 s).
      for (let step = 0; step < 3; step++) {
        await sim.sim.advance(2);
        await waitForCommits(exporter, project.projectId, 2);
      }
      await waitFor(
        "no alert of the operation left in either peer",
        async () => {
          const left = await Promise.all(peers.map(async (p) => alertOf(await p.alerts(), op.id)));
          return left.every((a) => a === undefined) ? true : undefined;
        },
        20_000,
      );
      await waitFor("the resolved notification", () =>
        notified("one", op.id, "resolved") && notified("two", op.id, "resolved") ? true : undefined,
      );
    } finally {
      await exporter.stop();
    }
  }, 60_000);

  it("fires a failure in both peers with its labels, and resolves it when it recovers", async (ctx) => {
    skipWithoutBinary(ctx);
    const exporter = await startExporter();
    try {
      await waitForFirstPolls(exporter, [project.projectId]);
      const op = await failing("start_compute", 1, 20);
      await sim.sim.advance(2);

      for (const peer of peers) {
        const fired = await waitFor("the failure in Alertmanager", async () =>
          alertOf(await peer.alerts(), op.id),
        );
        expect(fired.labels).toMatchObject({
          alertname: "PgcpOperationFailed",
          project_id: project.projectId,
          branch_id: project.branchId,
          action: "start_compute",
          status: "failed",
          operation_id: op.id,
          severity: "page",
          team: "platform",
        });
        expect(fired.annotations.error).toBe("compute node restarted");
        expect(fired.annotations.summary).toContain("start_compute");
        // The names beside the ids are annotations (the failure may be raised before the project
        // was read, and its branches are read only once its alerts want their names: the names
        // come with a re-send): labels are the alert's identity, so it stays the one alert.
        // Named as the API names them: a project created without a name after its id; the
        // operation is on no endpoint, so no endpoint name.
        const named = await waitFor("the failure's names in Alertmanager", async () => {
          const alert = alertOf(await peer.alerts(), op.id);
          return alert?.annotations.branch_name === undefined ? undefined : alert;
        });
        expect(named.annotations).toMatchObject({
          project_name: project.projectId,
          branch_name: "main",
        });
        expect(named.annotations).not.toHaveProperty("endpoint_name");
        expect(named.labels).toEqual(fired.labels);
        expect((await peer.alerts()).filter((a) => a.labels.operation_id === op.id)).toHaveLength(
          1,
        );
        expect(fired.generatorURL).toBe("https://pgcp.example.test/");
        expect(fired.status.state).toBe("active");
      }
      await waitFor("both receivers to be notified", () =>
        notified("one", op.id, "firing") && notified("two", op.id, "firing") ? true : undefined,
      );

      // The service retries it and it finishes: Alertmanager resolves it.
      await sim.sim.advance(20);
      await waitFor(
        "the resolved notification",
        () =>
          notified("one", op.id, "resolved") && notified("two", op.id, "resolved")
            ? true
            : undefined,
        20_000,
      );
    } finally {
      await exporter.stop();
    }
  }, 60_000);

  it("is muted by a silence made in Alertmanager", async (ctx) => {
    skipWithoutBinary(ctx);
    const exporter = await startExporter();
    try {
      await waitForFirstPolls(exporter, [project.projectId]);
      await Promise.all(
        peers.map((p) =>
          p.silence({ alertname: "PgcpOperationFailed", action: "apply_config" }, 600_000),
        ),
      );
      const muted = await failing("apply_config", 1);
      const heard = await failing("create_branch", 1);
      await sim.sim.advance(2);
      const peer = peers[0]!;
      const silenced = await waitFor("the muted failure in Alertmanager", async () =>
        alertOf(await peer.alerts(), muted.id),
      );
      await waitFor("the other failure to be notified", () =>
        notified("one", heard.id, "firing") ? true : undefined,
      );
      expect(silenced.status.state).toBe("suppressed");
      expect(notified("one", muted.id, "firing")).toBe(false);
    } finally {
      await exporter.stop();
    }
  }, 60_000);

  it("delivers what failed while every peer was down, to each as it comes back", async (ctx) => {
    skipWithoutBinary(ctx);
    const exporter = await startExporter();
    const [first, second] = peers as [RunningAlertmanager, RunningAlertmanager];
    try {
      await waitForFirstPolls(exporter, [project.projectId]);
      await Promise.all([first.stop(), second.stop()]);
      const op = await failing("suspend_compute", 1);
      await sim.sim.advance(2);
      // The outbox keeps it while no peer answers.
      await waitFor("a failed delivery", () =>
        exporter.logs.lines().some((l) => l.msg === "alert delivery failed; will retry")
          ? true
          : undefined,
      );
      await first.start();
      await waitFor(
        "the failure in the first peer back",
        async () => alertOf(await first.alerts(), op.id),
        20_000,
      );
      // The second gets it from the firing set, re-sent every interval.
      await second.start();
      await waitFor(
        "the failure in the second peer back",
        async () => alertOf(await second.alerts(), op.id),
        20_000,
      );
    } finally {
      await exporter.stop();
    }
  }, 60_000);

  it("keeps re-sending what fires after the exporter is killed and started again", async (ctx) => {
    skipWithoutBinary(ctx);
    const dir = await tempDir("pgcp-alertmanager-kill-");
    const configFile = path.join(dir, "config.yaml");
    await writeDaemonConfig(configFile, {
      api: { url: sim.apiUrl, ...UNTHROTTLED_API, timeout: 5 },
      projects: [project.projectId],
      state: { dir: path.join(dir, "state") },
      poll: { ...QUICK_POLL, jitter: 0 },
      stuck: NEVER_STUCK,
      ...sinkSettings(),
    });
    const env = {
      PGCP_API_KEY: sim.apiKey,
      TEST_ALERTMANAGER_URLS: peers.map((p) => p.url).join(","),
    };
    const peer = peers[0]!;
    let daemon = spawnDaemon(configFile, { env });
    try {
      await daemon.started;
      // Its first poll has passed: what fails from now on is news, not history.
      await daemon.waitForLog("the first poll", (line) => line.msg === "poll committed");
      const op = await failing("restart_compute", 1);
      await sim.sim.advance(2);
      const before = await waitFor("the failure in Alertmanager", async () =>
        alertOf(await peer.alerts(), op.id),
      );
      // Acknowledged: out of the outbox, into the firing set of the committed state.
      const stateFile = path.join(dir, "state", `${project.projectId}.state.json`);
      await waitFor("the firing set to be committed", async () => {
        const state = JSON.parse(await readFile(stateFile, "utf8")) as ProjectState;
        return state.outbox.length === 0 && state.firing?.some((f) => f.alert.operationId === op.id)
          ? true
          : undefined;
      });
      await daemon.stop("SIGKILL");
      // Nothing but the state file knows it fires now: its end time moves on once re-sent.
      daemon = spawnDaemon(configFile, { env });
      await daemon.started;
      const after = await waitFor(
        "the failure re-sent by the new process",
        async () => {
          const alert = alertOf(await peer.alerts(), op.id);
          return alert !== undefined && Date.parse(alert.endsAt) > Date.parse(before.endsAt) + 1000
            ? alert
            : undefined;
        },
        // Run after the file's other tests this takes 15-20 s, alone 4 s: what holds it is
        // not found yet (see the note).
        40_000,
      );
      expect(after.status.state).toBe("active");
    } finally {
      await daemon.stop("SIGTERM");
      await removeDir(dir);
    }
  }, 60_000);

  it("fires one platform incident across projects, updates it in place and resolves it", async (ctx) => {
    skipWithoutBinary(ctx);
    const region = "aws-eu-west-2";
    const regional: SimProject[] = [];
    for (let i = 0; i < 6; i++) regional.push(await createProject(sim, region));
    const exporter = await startAlertExporter(
      [
        exporterSettings(
          sim,
          stateDir,
          regional.map((p) => p.projectId),
        ),
        sinkSettings(),
        { incidents: { window: "4s", minProjects: 5 } },
      ],
      { TEST_ALERTMANAGER_URLS: peers.map((p) => p.url).join(",") },
    );
    try {
      // Each project's region is known once it has been read after its first poll.
      await waitFor("every project's region", () =>
        regional.every((p) => exporter.state(p.projectId)?.regionId === region) ? true : undefined,
      );
      const fail = (p: SimProject, n: number) =>
        scriptOperation(
          sim,
          p,
          "start_compute",
          failsAfter(1, "failed", `pageserver ps-${n} unreachable for ${p.endpointId}`),
          { onEndpoint: true },
        );
      for (const [i, p] of regional.slice(0, 5).entries()) await fail(p, i);
      await sim.sim.advance(2);
      const incidents = async (peer: RunningAlertmanager) =>
        (await peer.alerts()).filter((a) => a.labels.alertname === "PgcpPlatformIncident");
      for (const peer of peers) {
        const [fired] = await waitFor("the incident in Alertmanager", async () => {
          const found = await incidents(peer);
          return found.length > 0 ? found : undefined;
        });
        expect(fired?.labels).toEqual({
          alertname: "PgcpPlatformIncident",
          action: "start_compute",
          region,
          error_class: "pageserver <id> unreachable for <id>",
          severity: "critical",
          team: "platform",
        });
      }
      // A sixth project joins: the same alert, with the count in its annotations.
      await fail(regional[5]!, 5);
      await sim.sim.advance(2);
      for (const peer of peers) {
        await waitFor("the incident's update", async () => {
          const found = await incidents(peer);
          return found.length === 1 && found[0]?.annotations.project_count === "6"
            ? true
            : undefined;
        });
      }
      // Nothing joins for the window: it resolves.
      await waitFor(
        "the incident's resolution",
        () =>
          ["one", "two"].every((peer) =>
            notifications(peer).some((n) =>
              n.alerts.some(
                (a) => a.labels.alertname === "PgcpPlatformIncident" && a.status === "resolved",
              ),
            ),
          )
            ? true
            : undefined,
        20_000,
      );
    } finally {
      await exporter.stop();
    }
  }, 60_000);
});
