/**
 * The daemon sets its V8 flags (the heap growing factor, and no optimising compiler for the
 * HTTP parser's WebAssembly) unless the operator gave node one of them: the decision reads
 * node's own flags as `process.execArgv` holds them; the image and CI's smoke test start node
 * with the flags and environment the daemon needs from its start. (What they save is measured
 * by `npm run bench`, not asserted here.)
 */
import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import {
  DAEMON_ENVIRONMENT,
  DAEMON_NODE_FLAGS,
  DAEMON_V8_FLAGS,
  setDaemonV8Flags,
  v8FlagChosen,
} from "../../src/exporter/index.js";

describe("whether the operator chose a V8 flag", () => {
  it("is so for the flag in either spelling, with its value joined or apart", () => {
    expect(v8FlagChosen("heap-growing-percent", ["--heap-growing-percent=100"])).toBe(true);
    const both = ["--max-old-space-size=512", "--heap_growing_percent=50"];
    expect(v8FlagChosen("heap-growing-percent", both)).toBe(true);
    expect(v8FlagChosen("heap-growing-percent", ["--heap-growing-percent", "100"])).toBe(true);
    expect(v8FlagChosen("liftoff-only", ["--liftoff_only"])).toBe(true);
  });

  it("is so for a flag switched off", () => {
    expect(v8FlagChosen("liftoff-only", ["--no-liftoff-only"])).toBe(true);
    expect(v8FlagChosen("liftoff-only", ["--noliftoff-only"])).toBe(true);
  });

  it("is not so for other flags, or for none", () => {
    expect(v8FlagChosen("heap-growing-percent", [])).toBe(false);
    const others = ["--max-old-space-size=512", "--expose-gc", "--liftoff"];
    for (const { name } of DAEMON_V8_FLAGS) expect(v8FlagChosen(name, others)).toBe(false);
    expect(v8FlagChosen("heap-growing-percent", ["--heap-growing-percentage=5"])).toBe(false);
  });
});

it("keeps every flag the operator chose, and says so", () => {
  const execArgv = ["--heap-growing-percent=0", "--no-liftoff-only"];
  expect(setDaemonV8Flags(execArgv)).toEqual([
    { flag: "heap-growing-percent", chosenBy: "operator" },
    { flag: "liftoff-only", chosenBy: "operator" },
  ]);
});

it("starts the daemon with the node flags of DAEMON_NODE_FLAGS, in the image and in CI's smoke", () => {
  const dockerfile = readFileSync(new URL("../../Dockerfile", import.meta.url), "utf8");
  const entrypoint = /^ENTRYPOINT (\[.*\])$/m.exec(dockerfile)?.[1];
  expect(entrypoint, "the Dockerfile's ENTRYPOINT").toBeDefined();
  expect(JSON.parse(entrypoint ?? "[]")).toEqual(["node", ...DAEMON_NODE_FLAGS, "dist/cli.js"]);
  const smoke = readFileSync(new URL("../../.ci/production-smoke", import.meta.url), "utf8");
  expect(smoke).toContain(`exec "$runtime" ${DAEMON_NODE_FLAGS.join(" ")} dist/cli.js run`);
});

it("starts the daemon with the environment of DAEMON_ENVIRONMENT, in the image and in CI's smoke", () => {
  const dockerfile = readFileSync(new URL("../../Dockerfile", import.meta.url), "utf8");
  const smoke = readFileSync(new URL("../../.ci/production-smoke", import.meta.url), "utf8");
  const started = /^.*exec "\$runtime" .*dist\/cli\.js run.*$/m.exec(smoke)?.[0];
  expect(started, "the smoke test's start of the daemon").toBeDefined();
  for (const [name, value] of Object.entries(DAEMON_ENVIRONMENT)) {
    expect(dockerfile).toMatch(new RegExp(`^ENV ${name}=${value}$`, "m"));
    expect(started).toContain(`export ${name}=${value} &&`);
  }
});
