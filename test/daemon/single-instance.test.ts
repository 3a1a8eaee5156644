/**
 * One process per state directory, over the real daemon (`node dist/cli.js run`) as child
 * processes against an in-process simulator: a second `run` on a directory in use exits at once
 * with a line naming the holder, before it polls or serves anything, and the first runs on; once
 * the first is killed with SIGKILL, the lock it left behind does not stop a new run, which
 * resumes from the committed states. `dist/cli.js` must be built (`npm test` builds it first).
 */
import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LOCK_FILE, type LockHolder } from "../../src/store/index.js";
import { QUICK_POLL, writeDaemonConfig } from "../support/daemon-config.js";
import { CLI, DaemonGroup, type DaemonProcess } from "../support/daemon-process.js";
import { failureNotes } from "../support/failure-notes.js";
import { startTestSimulator, type TestSimulator } from "../support/simulator.js";
import { readStateFiles } from "../support/state-files.js";
import { removeDir, tempDir } from "../support/temp-dir.js";
import { waitFor } from "../support/wait.js";

const PROJECTS = 2;
/** A safety net for a hung process, not a measurement: the refusal takes well under it. */
const REFUSAL_MS = 10_000;

describe("one daemon per state directory", () => {
  let sim: TestSimulator;
  let dir: string;
  let configFile: string;
  let stateDir: string;
  const daemons = new DaemonGroup();

  beforeAll(async () => {
    dir = await tempDir("pgcp-single-");
    sim = await startTestSimulator({
      clock: "real",
      traffic: { projects: PROJECTS, operationsPerMinute: 600 },
    });
    configFile = path.join(dir, "config.yaml");
    stateDir = path.join(dir, "state");
    await writeDaemonConfig(configFile, {
      api: { url: sim.apiUrl, timeout: 10 },
      projects: "all",
      state: { dir: stateDir },
      poll: QUICK_POLL,
    });
  });

  afterAll(async () => {
    await daemons.killAll();
    await sim.close();
    await removeDir(dir);
  });

  // The key comes from the environment, with none of the caller's PGCP_* variables.
  const launch = (): DaemonProcess =>
    daemons.spawn(configFile, { env: { PGCP_API_KEY: sim.apiKey } });

  const startedOrDead = async (daemon: DaemonProcess, what: string) => {
    const exitedEarly = (await daemon.startedOrExit) === undefined;
    expect(exitedEarly, `${what} exited before it started:\n${daemon.tail()}`).toBe(false);
  };

  const commits = (daemon: DaemonProcess) =>
    daemon.logs.filter((l) => l.msg === "poll committed").length;

  const lockHolder = async (): Promise<LockHolder> =>
    JSON.parse(await readFile(path.join(stateDir, LOCK_FILE), "utf8")) as LockHolder;

  /** Each project's committed sequence: it grows by one with every commit. */
  const sequences = async (): Promise<Map<string, number>> =>
    new Map([...(await readStateFiles(stateDir))].map(([id, s]) => [id, s.sequence]));

  let first: DaemonProcess;

  it("refuses a second daemon at once, naming the first's pid and host, and the first runs on", async () => {
    const note = failureNotes();
    expect(existsSync(CLI), `${CLI} is missing: run npm run build first`).toBe(true);
    first = launch();
    await startedOrDead(first, "the first run");
    const firstUrl = await first.url;
    await first.waitForLog("a commit of every project", () => commits(first) >= PROJECTS);
    expect(await lockHolder()).toMatchObject({ pid: first.child.pid, host: hostname() });

    const second = launch();
    const spawned = Date.now();
    const exit = await Promise.race([
      second.exited,
      new Promise<"timeout">((resolve) => {
        setTimeout(resolve, REFUSAL_MS, "timeout").unref();
      }),
    ]);
    expect(exit, `the second run did not exit:\n${second.tail()}`).toEqual({
      code: 1,
      signal: null,
    });
    await second.stop(); // everything it wrote has been read
    const took = Date.now() - spawned;

    // One fatal line with the reason: who holds the directory, and what to do.
    const fatal = second.logs.filter((l) => l.level === "fatal");
    expect(fatal, second.text()).toHaveLength(1);
    expect(fatal[0]).toMatchObject({
      msg: "exporter could not start",
      errorName: "StateDirectoryInUseError",
    });
    const reason = String(fatal[0]!.error);
    expect(reason).not.toContain("\n");
    expect(reason).toContain(`state directory ${stateDir} is in use by pid ${first.child.pid}`);
    expect(reason).toContain(`on host ${hostname()}`);
    expect(reason).toMatch(/heartbeat \d+ s ago\); stop that process or use another --state-dir$/);
    // It stopped before discovering, polling or serving anything.
    const messages = second.logs.map((l) => String(l.msg));
    expect(messages).not.toContain("projects discovered");
    expect(messages).not.toContain("exporter started");
    expect(messages).not.toContain("poll committed");
    expect(messages.some((m) => m.startsWith("serving"))).toBe(false);
    note(`the second run exited ${took} ms after its spawn: ${reason}`);

    // The first still holds the directory, and keeps polling, committing and serving.
    expect(await lockHolder()).toMatchObject({ pid: first.child.pid });
    const before = commits(first);
    await first.waitForLog("more commits", () => commits(first) >= before + PROJECTS);
    expect((await fetch(`${firstUrl}/healthz`)).status).toBe(200);
    expect(first.child.exitCode).toBeNull();
    expect(first.logs.filter((l) => l.level === "error" || l.level === "fatal")).toEqual([]);
  });

  it("starts at once on the directory of a daemon killed with SIGKILL, and resumes", async () => {
    const note = failureNotes();
    const killedPid = first.child.pid;
    expect((await first.stop("SIGKILL")).signal).toBe("SIGKILL");
    // The lock stays behind, naming the dead process.
    expect(await lockHolder()).toMatchObject({ pid: killedPid, host: hostname() });
    const committed = await sequences();
    expect(committed.size).toBe(PROJECTS);

    const next = launch();
    const spawned = Date.now();
    await startedOrDead(next, "the run after the kill");
    const took = Date.now() - spawned;
    const replaced = await next.waitForLog("the stale lock replaced", (l) =>
      String(l.msg).startsWith("replaced a stale lock"),
    );
    expect(replaced).toMatchObject({ level: "warn" });
    expect(String(replaced.msg)).toContain(`pid ${killedPid} on host ${hostname()} is not running`);
    expect(await lockHolder()).toMatchObject({ pid: next.child.pid, host: hostname() });

    // It resumes from the committed states: every project's sequence goes on from there.
    await waitFor("a commit of every project after the restart", async () => {
      const now = await sequences();
      return [...committed].every(([id, sequence]) => (now.get(id) ?? 0) > sequence);
    });
    note(`the run after the kill started ${took} ms after its spawn`);

    // A clean stop releases the directory.
    expect(await next.stop("SIGTERM")).toEqual({ code: 0, signal: null });
    expect(existsSync(path.join(stateDir, LOCK_FILE))).toBe(false);
    expect(next.logs.filter((l) => l.level === "error" || l.level === "fatal")).toEqual([]);
  });

  it("stops with status 1 when another process takes the directory while it runs", async () => {
    const running = launch();
    await startedOrDead(running, "the run");
    await running.waitForLog("a commit", () => commits(running) >= 1);
    // Another holder, alive and well by its heartbeat, as after a takeover of a paused process.
    const other: LockHolder = {
      ...(await lockHolder()),
      pid: 1,
      host: "elsewhere",
      token: "another-process",
    };
    await writeFile(path.join(stateDir, LOCK_FILE), JSON.stringify(other));
    const exit = await Promise.race([
      running.exited,
      new Promise<"timeout">((resolve) => {
        setTimeout(resolve, REFUSAL_MS + 10_000, "timeout").unref();
      }),
    ]);
    expect(exit, `the run did not exit:\n${running.tail()}`).toEqual({ code: 1, signal: null });
    await running.stop();
    const fatal = running.logs.filter((l) => l.level === "fatal");
    expect(fatal).toHaveLength(1);
    expect(fatal[0]?.msg).toBe("exporter cannot go on; stopping");
    // The other holder's lock is left as it is.
    expect(await lockHolder()).toMatchObject({ pid: 1, host: "elsewhere" });
  });
});
