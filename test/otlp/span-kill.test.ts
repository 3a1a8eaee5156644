/**
 * A span survives `kill -9` and a repeat is the same span (docs/opentelemetry.md): the real
 * daemon (`node dist/cli.js run`) exports to the local OTLP receiver (which decodes by the OTLP
 * specification; no collector runs here). The receiver answers the first export with its 2xx
 * status line and holds the body back, and the daemon is killed in that window, before it can
 * take the spans from its queue. The next run sends them again: every span arrives, and the ones
 * sent twice carry the same ids, times and attributes both times.
 */
import path from "node:path";
import { afterAll, expect, it } from "vitest";
import { operationSpanIds } from "../../src/otlp/ids.js";
import { DaemonGroup } from "../support/daemon-process.js";
import {
  NEVER_STUCK,
  QUICK_POLL,
  UNTHROTTLED_API,
  writeDaemonConfig,
} from "../support/daemon-config.js";
import { runsThen } from "../support/operation-steps.js";
import { startOtlpReceiver, type ReceivedSpan } from "../support/otlp-receiver.js";
import { removeDir, tempDir } from "../support/temp-dir.js";
import {
  createProject,
  scriptOperation,
  startSim,
  waitFor,
  SECRETS,
} from "../alerts/e2e/support.js";

const daemons = new DaemonGroup();
afterAll(() => daemons.killAll());

it(
  "sends a span again after kill -9, with the same ids, and loses none",
  { timeout: 60_000 },
  async () => {
    const sim = await startSim();
    const receiver = await startOtlpReceiver();
    const dir = await tempDir("pgcp-otlp-kill-");
    try {
      const project = await createProject(sim);
      const configFile = path.join(dir, "config.yaml");
      await writeDaemonConfig(configFile, {
        api: { url: sim.apiUrl, ...UNTHROTTLED_API, maxAttempts: 1, timeout: 5 },
        projects: [project.projectId],
        state: { dir: path.join(dir, "state") },
        poll: { ...QUICK_POLL, jitter: 0 },
        stuck: NEVER_STUCK,
        otlp: { endpoint: receiver.url, timeout: 10, metrics: { enabled: false } },
      });
      const env = { PGCP_API_KEY: SECRETS.apiKey };

      // The first export is answered 200 at once, its body held back: the daemon dies before it
      // has read the answer, so its spans are still queued.
      let answered: () => void = () => undefined;
      const firstAnswered = new Promise<void>((resolve) => {
        answered = resolve;
      });
      let first = true;
      receiver.setFallback(() => {
        if (!first)
          return { status: 200, headers: { "content-type": "application/json" }, body: "{}" };
        first = false;
        answered();
        return {
          status: 200,
          headers: { "content-type": "application/json" },
          body: "{}",
          bodyDelayMs: 30_000,
        };
      });

      const killed = daemons.spawn(configFile, { env });
      // Its first poll starts the project from the top: what ends after it is counted.
      await killed.waitForLog("the first poll", (line) => line.msg === "poll committed");
      const ops: string[] = [];
      for (let i = 0; i < 3; i++) {
        ops.push((await scriptOperation(sim, project, "apply_config", runsThen("finished", 1))).id);
      }
      await sim.sim.advance(2);
      await firstAnswered;
      expect((await killed.stop("SIGKILL")).signal).toBe("SIGKILL");
      const before = receiver.spans();
      const ours = (spans: readonly ReceivedSpan[]) =>
        spans.filter((s) => ops.includes(String(s.attributes["pgcp.operation.id"])));
      expect(ours(before).length).toBeGreaterThan(0);

      const last = daemons.spawn(configFile, { env });
      await last.started;
      const expected = ops.map((id) => operationSpanIds(id, 1).spanId);
      await receiver.waitForSpans(
        (spans) => expected.every((id) => spans.some((s) => s.spanId === id)),
        20_000,
      );
      await waitFor("the queue emptied", async () => {
        const response = await fetch(`${await last.url}/metrics`);
        return /^pgcp_otlp_spans_queued 0$/m.test(await response.text());
      });
      expect((await last.stop("SIGTERM")).code).toBe(0);

      // Every attempt arrived; those of the killed run's export arrived twice, the same span.
      const all = ours(receiver.spans());
      expect(new Set(all.map((s) => s.spanId))).toEqual(new Set(expected));
      const repeated = ours(before);
      for (const span of repeated) {
        const again = all.filter((s) => s.spanId === span.spanId && s.request !== span.request);
        expect(again, `the span ${span.spanId} sent again`).toHaveLength(1);
        const { request: _a, ...first } = span;
        const { request: _b, ...second } = again[0] as ReceivedSpan;
        expect(second).toEqual(first);
      }
    } finally {
      await daemons.killAll();
      await receiver.close();
      await sim.close();
      await removeDir(dir);
    }
  },
);
