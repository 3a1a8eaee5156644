/**
 * `pgcp-exporter demo` as a person sees it in the terminal, as the built command: the banner,
 * the alerts as they arrive, a short summary every so often, and the exporter's warnings and
 * errors only; the lines about every operation go to the log file. A recovery is printed only
 * for an operation whose failure or stuck alert was printed. Ctrl-C stops it with a last summary
 * and leaves no temporary folder behind. With OpenTelemetry's variables set, it sends spans and
 * metrics to the local OTLP receiver (`test/support/otlp-receiver.ts`) and says so.
 */
import { spawn } from "node:child_process";
import { mkdir, readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { CLI } from "../support/daemon-process.js";
import { startOtlpReceiver } from "../support/otlp-receiver.js";
import { removeDir, tempDir } from "../support/temp-dir.js";
import { waitForWith } from "../support/wait.js";

const waitFor = waitForWith({ timeoutMs: 60_000, intervalMs: 100 });

let dir: string;
beforeAll(async () => {
  dir = await tempDir("pgcp-demo-test-");
});
afterAll(async () => {
  await removeDir(dir);
});

it("shows alerts and summaries in the terminal, and every operation in the log file", async () => {
  const tmp = path.join(dir, "tmp");
  await mkdir(tmp);
  const logFile = path.join(dir, "exporter.log");
  const collector = await startOtlpReceiver();
  const child = spawn(
    process.execPath,
    [
      CLI,
      "demo",
      "--listen",
      "127.0.0.1:0",
      "--projects",
      "5",
      "--summary-every",
      "2",
      "--log-file",
      logFile,
    ],
    {
      env: {
        PATH: process.env.PATH ?? "",
        TMPDIR: tmp,
        OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
        OTEL_METRIC_EXPORT_INTERVAL: "1000",
      },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let terminal = "";
  child.stdout.setEncoding("utf8").on("data", (c: string) => (terminal += c));
  child.stderr.setEncoding("utf8").on("data", (c: string) => (terminal += c));
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
  try {
    await waitFor(`a summary and a failure alert in:\n${terminal}`, () =>
      /^summary of the last \d+ s: \d+ projects? watched · \d+ polls/m.test(terminal) &&
      /^alert FAILED /m.test(terminal) &&
      collector.spans().length > 0 &&
      collector.metrics().some((m) => m.name.startsWith("pgcp_"))
        ? true
        : undefined,
    );
  } finally {
    child.kill("SIGINT");
  }
  expect(terminal).toContain(
    `otlp:       spans to ${collector.url}/v1/traces, metrics to ${collector.url}/v1/metrics`,
  );
  expect(await exited).toBe(0);
  await collector.close();
  // Two organisations besides the personal projects: one through a member's personal key, one
  // through its own key; 5 + 2 + 2 projects in all.
  expect(terminal).toMatch(/personal: key "demo-key", its 5 projects and Acme Analytics \(org-/);
  expect(terminal).toMatch(/globex: key "demo-globex-key", Globex Labs \(org-/);
  expect(terminal).toMatch(/^summary of the last \d+ s: 9 projects watched/m);
  const lines = terminal.split("\n").filter((l) => l !== "");
  expect(lines.at(-1)).toBe("demo stopped");
  expect(lines.at(-2)).toMatch(/^summary of the last /);
  expect(terminal).toContain(`log:        ${logFile}`);
  // The compute probe: shown on a PostgreSQL server when one can be had, else how to have one.
  expect(terminal).toMatch(/^ {2}computes: +(probed on |not probed: .*pass --postgres-url)/m);

  // The terminal holds no log line about single operations, nor any JSON line.
  expect(terminal).not.toMatch(/operation (ended|failed|recovered|new)/);
  expect(lines.filter((l) => l.startsWith("{"))).toEqual([]);
  // Every line is the banner, an alert, a summary, an exporter warning or the last word.
  const banner = lines.indexOf("Press Ctrl-C to stop.");
  for (const line of lines.slice(banner + 1, -1)) {
    expect(line).toMatch(/^(alert |summary of the last |exporter (warn|error|fatal): )/);
  }

  // A recovery only follows a printed failure or stuck alert of the same operation.
  const printed = new Set<string>();
  for (const line of lines) {
    const alert = /^alert (\w+) .*operation ([0-9a-f]{8})\)/.exec(line);
    if (alert === null) continue;
    const [, mark, operation] = alert;
    if (mark === "RECOVERED") expect(printed.has(operation!), line).toBe(true);
    else printed.add(operation!);
  }

  // The log file has the lines about each operation, as JSON.
  const log = (await readFile(logFile, "utf8")).split("\n").filter((l) => l !== "");
  const messages = log.map((l) => (JSON.parse(l) as { msg: string }).msg);
  expect(messages).toContain("exporter started");
  expect(messages.some((m) => /^operation (ended|failed)$/.test(m))).toBe(true);
  // Nothing is left in the temporary folder.
  expect(await readdir(tmp)).toEqual([]);
}, 90_000);
