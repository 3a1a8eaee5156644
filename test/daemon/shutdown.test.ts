/**
 * Graceful shutdown of the real command (`node dist/cli.js run`) against an in-process
 * simulator with a real clock and live traffic: on SIGTERM or SIGINT it exits 0, also while a
 * poll waits on a slow API (the poll is abandoned, not committed), and leaves valid state files.
 *
 * It runs `dist/cli.js`, which `npm test` builds first (`pretest`). When that build is older
 * than `src/` (vitest run directly after an edit), the current sources are compiled into a
 * temporary directory instead, so that the command tested and the `parseState` that checks its
 * files are the same code; the shared `dist/` is never written.
 */
import { execFile } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { copyFile, readFile, readdir, symlink, writeFile } from "node:fs/promises";
import { promisify } from "node:util";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, it } from "vitest";
import { stringify } from "yaml";
import { LOCK_FILE, parseState } from "../../src/store/index.js";
import { spawnDaemon } from "../support/daemon-process.js";
import { startTestSimulator } from "../support/simulator.js";
import { tempDir, waitFor } from "./support.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const BUILT_CLI = path.join(ROOT, "dist", "cli.js");
const STATE_SUFFIX = ".state.json";
/** Far longer than any shutdown may take: the exit must not wait for these answers. */
const SLOW_API_MS = 60_000;
/** A safety net for a hung process, not a measurement. */
const EXIT_TIMEOUT_MS = 10_000;

/** The newest modification time of the files under `dir` whose names end in `suffix`. */
function newest(dir: string, suffix: string): number {
  return readdirSync(dir, { recursive: true, encoding: "utf8" })
    .filter((name) => name.endsWith(suffix))
    .reduce((latest, name) => Math.max(latest, statSync(path.join(dir, name)).mtimeMs), 0);
}

/** Every file in `dir` by name, but the running daemon's lock on it (`LOCK_FILE`). */
async function stateFiles(dir: string): Promise<Map<string, Buffer>> {
  const out = new Map<string, Buffer>();
  for (const name of (await readdir(dir)).sort()) {
    if (name !== LOCK_FILE) out.set(name, await readFile(path.join(dir, name)));
  }
  return out;
}

/** `dist/cli.js` when it is up to date, else a fresh build of `src/` in a temporary directory. */
async function cliUnderTest(): Promise<string> {
  if (
    existsSync(BUILT_CLI) &&
    statSync(BUILT_CLI).mtimeMs >= newest(path.join(ROOT, "src"), ".ts")
  ) {
    return BUILT_CLI;
  }
  const out = await tempDir("pgcp-build-");
  // dist/version.js reads ../package.json; bare imports resolve through ../node_modules.
  await copyFile(path.join(ROOT, "package.json"), path.join(out, "package.json"));
  await symlink(path.join(ROOT, "node_modules"), path.join(out, "node_modules"), "dir");
  const tsc = path.join(ROOT, "node_modules", "typescript", "bin", "tsc");
  const args = [tsc, "-p", "tsconfig.build.json", "--outDir", path.join(out, "dist")];
  // Type errors (someone else's edit in progress) do not stop tsc from emitting.
  await promisify(execFile)(process.execPath, args, { cwd: ROOT }).catch(() => undefined);
  const cli = path.join(out, "dist", "cli.js");
  if (!existsSync(cli)) throw new Error("building src/ into a temporary directory failed");
  return cli;
}

describe.concurrent("graceful shutdown of `pgcp-exporter run`", () => {
  let CLI = BUILT_CLI;

  beforeAll(async () => {
    CLI = await cliUnderTest();
  }, 60_000);

  it.for(["SIGTERM", "SIGINT"] as const)(
    "exits 0 on %s, abandons the poll in flight, and leaves valid state files",
    async (signal, { expect, onTestFinished }) => {
      const sim = await startTestSimulator({
        clock: "real",
        traffic: { projects: 3, operationsPerMinute: 600 },
      });
      onTestFinished(() => sim.close());
      const listed = await sim.api<{ projects: { id: string }[] }>("GET", "/projects?limit=10");
      const projects = listed.body.projects.map((p) => p.id);
      expect(projects).toHaveLength(3);

      const dir = await tempDir("pgcp-shutdown-");
      const stateDir = path.join(dir, "state");
      const configFile = path.join(dir, "config.yaml");
      await writeFile(
        configFile,
        stringify({ poll: { interval: 0.5, fastInterval: 0.5, endpointsInterval: 1 } }),
      );
      // Only the key from the environment (none of the caller's PGCP_* variables).
      const daemon = spawnDaemon(configFile, {
        cli: CLI,
        args: [
          "--api-url",
          sim.apiUrl,
          "--projects",
          projects.join(","),
          "--state-dir",
          stateDir,
          "--listen",
          "127.0.0.1:0",
        ],
        env: { PGCP_API_KEY: sim.apiKey },
      });
      onTestFinished(() => {
        const { child } = daemon;
        if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      });

      // Every project committed at least twice (its first start, then a poll of traffic).
      await waitFor(
        "state files of every project",
        async () => {
          for (const id of projects) {
            const file = path.join(stateDir, id + STATE_SUFFIX);
            if (!existsSync(file)) return false;
            if (parseState(file, await readFile(file, "utf8"), id).sequence < 2) return false;
          }
          return true;
        },
        15_000,
      ).catch((error: unknown) => {
        throw new Error(`${String(error)}\ndaemon output:\n${daemon.text()}`);
      });

      // From now on every API answer takes a minute: the polls that start wait on the API.
      await sim.sim.addFault({ kind: "latency", latency_ms: SLOW_API_MS });
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      const before = await stateFiles(stateDir);

      const exited = daemon.stop(signal);
      const timeout = new Promise<never>((_resolve, reject) => {
        setTimeout(() => {
          reject(
            new Error(`no exit ${String(EXIT_TIMEOUT_MS)} ms after ${signal}:\n${daemon.text()}`),
          );
        }, EXIT_TIMEOUT_MS).unref();
      });
      expect(await Promise.race([exited, timeout])).toEqual({ code: 0, signal: null });

      // The files are the last commits, whole and valid; the abandoned polls wrote nothing;
      // the lock on the directory is released.
      expect(existsSync(path.join(stateDir, LOCK_FILE))).toBe(false);
      const after = await stateFiles(stateDir);
      expect([...after.keys()]).toEqual(projects.map((id) => id + STATE_SUFFIX).sort());
      expect(after).toEqual(before);
      for (const id of projects) {
        const file = path.join(stateDir, id + STATE_SUFFIX);
        expect(parseState(file, after.get(id + STATE_SUFFIX)!.toString("utf8"), id).projectId).toBe(
          id,
        );
      }

      const logs = daemon.logs;
      expect(logs.find((l) => l.msg === "shutting down")).toMatchObject({ signal });
      expect(logs.at(-1)?.msg).toBe("stopped");
      expect(logs.filter((l) => l.level === "error" || l.level === "fatal")).toEqual([]);
      expect(daemon.text()).not.toContain(sim.apiKey);
    },
  );
});
