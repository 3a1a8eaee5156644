/**
 * `pgcp-exporter wait`, run as the built command against a simulator whose clock follows wall
 * time, with scripted operations for each exit status: 0 finished, 1 failed, 0 again when a
 * failed operation is retried within `--retry-grace`, 3 timeout, 2 bad flags or an unknown
 * operation, 4 a refused key or an unreachable address.
 */
import { spawn } from "node:child_process";
import { createServer } from "node:net";
import { describe, expect, it } from "vitest";
import type { Operation } from "../../src/contract/index.js";
import { runsThen, type Steps } from "../support/operation-steps.js";
import { CLI } from "../support/daemon-process.js";
import { startReceiver } from "../support/receiver.js";
import { runCli, tmpdirEnv, type CliRun } from "../support/run-cli.js";
import type { TestSimulator } from "../support/simulator.js";
import { simulatorWithProject } from "../support/simulator-suite.js";
import { waitFor } from "../support/wait.js";

let sim: TestSimulator;
let projectId: string;
let branchIds: string[];
simulatorWithProject((s) => ({ sim, projectId, branchIds } = s), {
  simulator: { clock: "real" },
  branches: 2,
});

const FAST = ["--interval", "100ms", "--timeout", "15s"];

/**
 * Simulated seconds, on a clock that follows wall time, before a scripted operation's first
 * change: enough for the command to start and read it while it is still open, also on a
 * loaded machine (CI runs the suite two files at a time).
 */
const STARTUP = 6;

/** A scripted operation on the project's first branch (or `branch`), with these steps. */
function script(steps: Steps, branch = branchIds[0] ?? ""): Promise<Operation> {
  return sim.sim.scriptOperation({
    project_id: projectId,
    branch_id: branch,
    action: "apply_config",
    steps,
  });
}

/** `pgcp-exporter wait --project <the project> …args` with the simulator's address and key. */
async function wait(args: readonly string[], env: Record<string, string> = {}): Promise<CliRun> {
  const run = await runCli(["wait", "--project", projectId, ...args], {
    PGCP_API_URL: sim.apiUrl,
    PGCP_API_KEY: sim.apiKey,
    ...env,
  });
  const key = env.PGCP_API_KEY ?? sim.apiKey;
  if (key !== "") expect(run.stdout + run.stderr).not.toContain(key);
  return run;
}

const ids = (...ops: Operation[]) => ops.flatMap((op) => ["--operation", op.id]);

describe("exit 0", () => {
  it("waits until every operation finished or was skipped, a line per status change", async () => {
    const a = await script(runsThen("finished", STARTUP));
    const b = await script([
      { status: "scheduling", after_seconds: 0 },
      { status: "skipped", after_seconds: STARTUP + 0.5 },
    ]);
    const run = await wait([...ids(a, b), ...FAST]);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(new RegExp(`${a.id} apply_config on ${branchIds[0]}: running\\n`));
    expect(run.stdout).toContain(`${a.id} apply_config on ${branchIds[0]}: running -> finished`);
    expect(run.stdout).toContain(`${b.id} apply_config on ${branchIds[0]}: scheduling -> skipped`);
    expect(run.stdout).toContain("2 operations: 1 finished, 1 skipped");
    expect(run.stdout).toContain("succeeded: every operation finished or was skipped (exit 0)");
  });

  it("follows a failed operation the service retries within --retry-grace to its finish", async () => {
    const op = await script([
      { status: "running", after_seconds: 0 },
      { status: "failed", after_seconds: STARTUP, error: "compute did not start" },
      { status: "running", after_seconds: STARTUP + 1 },
      { status: "finished", after_seconds: STARTUP + 1.5 },
    ]);
    const run = await wait([...ids(op), ...FAST, "--retry-grace", "5s"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("running -> failed (failures 1: compute did not start)");
    expect(run.stdout).toContain("failed -> running");
    expect(run.stdout).toContain("-> finished");
  });
});

describe("exit 1", () => {
  it("reports a failed operation with its error", async () => {
    const ok = await script(runsThen("finished", STARTUP));
    const bad = await script(runsThen("failed", STARTUP + 0.5, "disk on fire"));
    const run = await wait([...ids(ok, bad), ...FAST]);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain(`${bad.id} apply_config on ${branchIds[0]}: failed`);
    expect(run.stdout).toContain("disk on fire");
    expect(run.stdout).toContain("failed: 1 operation did not succeed (exit 1)");
  });

  it("gives up on a failed operation not retried within --retry-grace", async () => {
    const bad = await script(runsThen("failed", STARTUP, "no retry"));
    const run = await wait([...ids(bad), ...FAST, "--retry-grace", "500ms"]);
    expect(run.code).toBe(1);
  });
});

it("exits 3 when an operation is still open at the timeout", async () => {
  const slow = await script(runsThen("finished", 600));
  const run = await wait([...ids(slow), "--interval", "100ms", "--timeout", "500ms"]);
  expect(run.code).toBe(3);
  expect(run.stdout).toContain("timed_out: timed out after 0.5 s with 1 still open (exit 3)");
});

it("stops on Ctrl-C with the summary of where things stand, exit 130", async () => {
  const slow = await script(runsThen("finished", 600));
  const child = spawn(process.execPath, [CLI, "wait", "--project", projectId, ...ids(slow)], {
    env: {
      PATH: process.env.PATH ?? "",
      ...tmpdirEnv(),
      PGCP_API_URL: sim.apiUrl,
      PGCP_API_KEY: sim.apiKey,
    },
  });
  let stdout = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
  // Interrupted once it has read the operation (its first status line is out).
  await waitFor("the first status line", () => stdout.includes(slow.id));
  child.kill("SIGINT");
  expect(await exited).toBe(130);
  expect(stdout).toContain(`1 operation: 1 running`);
  expect(stdout).toContain("interrupted: stopped with 1 still open (exit 130)");
});

describe("--open", () => {
  it("waits for the operations open at the start on the branch asked for", async () => {
    const [main, other] = [branchIds[0] ?? "", branchIds[1] ?? ""];
    const mine = await script(runsThen("finished", STARTUP), other);
    const mineToo = await script(runsThen("finished", STARTUP + 0.5), other);
    const elsewhere = await script(runsThen("finished", 600), main);
    const run = await wait(["--open", "--branch", other, ...FAST]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("2 open operations in");
    expect(run.stdout).toContain(`${mine.id} apply_config on ${other}: running -> finished`);
    expect(run.stdout).toContain(`${mineToo.id} apply_config on ${other}: running -> finished`);
    expect(run.stdout).not.toContain(elsewhere.id);
  });

  it("ends at once when nothing is open on the branch", async () => {
    const run = await wait(["--open", "--branch", "br-nothing-here", ...FAST]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("0 open operations in");
  });
});

it("prints one JSON document with each operation's final record for --output json", async () => {
  const ok = await script(runsThen("finished", STARTUP));
  const bad = await script(runsThen("error", STARTUP + 0.5, "gave up"));
  const run = await wait([...ids(ok, bad), ...FAST, "--output", "json"]);
  expect(run.code).toBe(1);
  const doc = JSON.parse(run.stdout) as {
    project_id: string;
    result: string;
    exit_code: number;
    operations: Operation[];
  };
  expect(doc).toMatchObject({ project_id: projectId, result: "failed", exit_code: 1 });
  const byId = new Map(doc.operations.map((op) => [op.id, op]));
  expect(byId.get(ok.id)).toMatchObject({ status: "finished", action: "apply_config" });
  expect(byId.get(bad.id)).toMatchObject({ status: "error", error: "gave up" });
  expect(byId.size).toBe(2);
});

describe("exit 2", () => {
  it.each([
    [[], "give --operation ID (one or more) or --open"],
    [["--open", "--operation", "x"], "give either --operation or --open, not both"],
    [["--open", "--interval", "soon"], '--interval "soon" is not a positive duration'],
    [["--open", "--output", "yaml"], '--output "yaml" is neither text nor json'],
    [["--operation", "x", "--branch", "br-1"], "use them with --open"],
    [["--open", "--colour"], "unknown option --colour"],
    [["--open", "--projetc", "x"], "unknown option --projetc; did you mean --project?"],
  ])("refuses %j, saying where to read the usage", async (args, problem) => {
    const run = await wait(args);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^pgcp-exporter wait: /);
    expect(run.stderr).toContain(problem);
    expect(run.stderr).toContain("run `pgcp-exporter wait --help` for usage");
    expect(run.stderr).not.toContain("usage: pgcp-exporter wait");
  });

  it("names a base URL that answers 404 even at /projects, not --project", async () => {
    const url = sim.apiUrl.replace(/\/api\/v2$/, "");
    const run = await wait(["--open", ...FAST], { PGCP_API_URL: url });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`the API base URL ${url}`);
    expect(run.stderr).toContain("answers 404 at /projects too");
    expect(run.stderr).toContain("ends in /api/v2");
    expect(run.stderr).not.toContain("--project");
  });

  it("says an operation the API does not know is not found", async () => {
    const run = await wait(["--operation", "00000000-0000-4000-8000-000000000000", ...FAST]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("not found");
  });

  it("refuses to start without an API key", async () => {
    const run = await wait(["--open"], { PGCP_API_KEY: "" });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("api.key: is required (set PGCP_API_KEY)");
  });
});

describe("exit 4", () => {
  it("says the API refused the key, without printing it", async () => {
    const run = await wait(["--open", ...FAST], { PGCP_API_KEY: "wrong-key-5f3a9c" });
    expect(run.code).toBe(4);
    expect(run.stderr).toContain("the API refused the key (check PGCP_API_KEY)");
    expect(run.stderr).toContain("HTTP 401");
  });

  it("says the API cannot be reached", async () => {
    const url = `http://127.0.0.1:${await closedPort()}/api/v2`;
    const run = await wait(["--open", ...FAST], { PGCP_API_URL: url });
    expect(run.code).toBe(4);
    expect(run.stderr).toContain(`cannot reach the API at ${url}`);
  });
});

/** A port nothing listens on: one the system just gave out and took back. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise<void>((resolve) =>
    server.close(() => {
      resolve();
    }),
  );
  if (address === null || typeof address === "string") throw new Error("no port");
  return address.port;
}

describe("--exporter", () => {
  // The receiver stands in for the exporter's POST /-/nudge (its own tests are in
  // test/daemon/nudge.test.ts): here what matters is what `wait` sends and how it takes the answer.
  it("nudges the exporter when the wait starts and when it ends, with basic auth never shown", async () => {
    const exporter = await startReceiver({
      fallback: { status: 202, json: { nudged: [projectId], coalesced: [] } },
    });
    try {
      const done = await script(runsThen("finished", 0));
      const url = new URL(exporter.url);
      url.username = "ci";
      url.password = "nudge-PASSWORD-9f1";
      const run = await wait([...ids(done), ...FAST, "--exporter", url.href]);
      expect([run.code, run.stderr]).toEqual([0, ""]);
      const basic = `Basic ${Buffer.from("ci:nudge-PASSWORD-9f1").toString("base64")}`;
      const nudge = ["POST", `/-/nudge?project=${projectId}`, basic];
      expect(exporter.requests.map((r) => [r.method, r.path, r.headers.authorization])).toEqual([
        nudge,
        nudge,
      ]);
      expect(run.stdout + run.stderr).not.toContain("nudge-PASSWORD-9f1");
    } finally {
      await exporter.close();
    }
  });

  it("only warns when the exporter refuses the nudge: the wait's outcome stands", async () => {
    const exporter = await startReceiver({
      fallback: { status: 404, json: { error: "not watched by this exporter: x", unknown: ["x"] } },
    });
    try {
      const done = await script(runsThen("finished", 0));
      const run = await wait([...ids(done), ...FAST, "--exporter", exporter.url]);
      expect(run.code).toBe(0);
      expect(run.stderr).toContain(
        `pgcp-exporter wait: warning: the exporter at ${exporter.url}/ answered 404: not watched by this exporter: x`,
      );
    } finally {
      await exporter.close();
    }
  });
});
