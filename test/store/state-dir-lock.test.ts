import { spawn } from "node:child_process";
import { once } from "node:events";
import { readFile, readdir, rename, rm, stat, utimes, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  FileStateStore,
  LOCK_FILE,
  STATE_FORMAT,
  STATE_VERSION,
  StateDirLock,
  StateDirectoryInUseError,
  StateDirectoryLockLostError,
  type LockHolder,
  type ProjectState,
  type StateDirLockEvent,
} from "../../src/store/index.js";
import { emptyTotals } from "../../src/sync/index.js";
import { removeDir, tempDir } from "../support/temp-dir.js";
import { waitFor } from "../support/wait.js";

const HOST = hostname();
const IN_USE =
  /^state directory .+ is in use by pid (\d+) on host (\S+) \(lock file .+\.pgcp-exporter\.lock, heartbeat \d+ s ago\); stop that process or use another --state-dir$/;

const dirs: string[] = [];
const locks: StateDirLock[] = [];

afterEach(async () => {
  await Promise.all(locks.splice(0).map((l) => l.release()));
  await Promise.all(dirs.splice(0).map((d) => removeDir(d)));
});

async function directory(): Promise<string> {
  const dir = await tempDir("pgcp-lock-");
  dirs.push(dir);
  return dir;
}

async function acquire(
  dir: string,
  options: Parameters<typeof StateDirLock.acquire>[1] = {},
): Promise<StateDirLock> {
  const lock = await StateDirLock.acquire(dir, options);
  locks.push(lock);
  return lock;
}

/** A lock on `dir` that refreshes quickly (stale after 1 s), recording what it reports. */
async function acquireWatched(
  dir: string,
): Promise<{ lock: StateDirLock; events: StateDirLockEvent[] }> {
  const events: StateDirLockEvent[] = [];
  const lock = await acquire(dir, {
    staleMs: 1_000,
    heartbeatMs: 50,
    onEvent: (e) => events.push(e),
  });
  return { lock, events };
}

/** Writes a lock file as another process would have, its heartbeat `ageMs` old. */
async function foreignLock(dir: string, content: Partial<LockHolder> | string, ageMs = 0) {
  const file = path.join(dir, LOCK_FILE);
  const text =
    typeof content === "string"
      ? content
      : JSON.stringify({ startedAt: new Date().toISOString(), ...content });
  // Put in place whole, as the lock module does: a heartbeat never reads it half-written.
  const temporary = `${file}.test`;
  await writeFile(temporary, text);
  const at = new Date(Date.now() - ageMs);
  await utimes(temporary, at, at);
  await rename(temporary, file);
  return file;
}

async function lockFile(dir: string): Promise<LockHolder> {
  return JSON.parse(await readFile(path.join(dir, LOCK_FILE), "utf8")) as LockHolder;
}

async function rejection(promise: Promise<unknown>): Promise<Error> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(Error);
  return error as Error;
}

/** The pid of a process of this host that has ended (and been reaped). */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ["-e", ""], { stdio: "ignore" });
  const pid = child.pid;
  await once(child, "exit");
  if (pid === undefined) throw new Error("no pid");
  return pid;
}

describe("state directory lock", () => {
  it("writes who holds it, refuses a second holder, and is removed on release", async () => {
    const dir = await directory();
    const lock = await acquire(dir);
    const holder = await lockFile(dir);
    expect(holder).toMatchObject({ pid: process.pid, host: HOST, token: lock.holder.token });
    expect(Date.parse(holder.startedAt)).toBeLessThanOrEqual(Date.now());
    // Only the lock: its temporary document was linked into place and removed.
    expect(await readdir(dir)).toEqual([LOCK_FILE]);

    // Held in this very process: not mistaken for a previous run with the same pid.
    const error = await rejection(StateDirLock.acquire(dir));
    expect(error).toBeInstanceOf(StateDirectoryInUseError);
    expect(error.message).toMatch(IN_USE);
    expect(error.message).toContain(`pid ${process.pid} on host ${HOST}`);

    await lock.release();
    expect(await readdir(dir)).toEqual([]);
    await acquire(dir);
  });

  it("refuses a lock held by a live process of this host, naming its pid and host", async () => {
    const dir = await directory();
    const file = await foreignLock(dir, { pid: process.ppid, host: HOST });
    const before = await readFile(file, "utf8");
    const error = await rejection(StateDirLock.acquire(dir));
    expect(error).toBeInstanceOf(StateDirectoryInUseError);
    expect(error.message).toMatch(IN_USE);
    expect(error.message).toContain(`pid ${process.ppid} on host ${HOST}`);
    expect(error).toMatchObject({ holder: { pid: process.ppid, host: HOST } });
    // Untouched, and nothing left beside it.
    expect(await readFile(file, "utf8")).toBe(before);
    expect(await readdir(dir)).toEqual([LOCK_FILE]);
  });

  it("replaces a stale lock left by a dead process of this host, and says so", async () => {
    const dir = await directory();
    const pid = await deadPid();
    await foreignLock(dir, { pid, host: HOST });
    const events: StateDirLockEvent[] = [];
    const lock = await acquire(dir, { onEvent: (e) => events.push(e) });
    expect(await lockFile(dir)).toMatchObject({ pid: process.pid, token: lock.holder.token });
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ kind: "replaced", level: "warn", previous: { pid } });
    expect(events[0]?.message).toContain(`pid ${pid} on host ${HOST} is not running`);
  });

  it("replaces a lock with this process's own pid that this process does not hold", async () => {
    // A container restarted as pid 1 again: the lock names the pid of the process that died.
    const dir = await directory();
    await foreignLock(dir, { pid: process.pid, host: HOST, token: "previous-run" });
    const events: StateDirLockEvent[] = [];
    await acquire(dir, { onEvent: (e) => events.push(e) });
    expect(events.map((e) => e.kind)).toEqual(["replaced"]);
    expect(events[0]?.message).toMatch(/own pid/);
  });

  it("waits for the staleness window before taking over from another host", async () => {
    const dir = await directory();
    await foreignLock(dir, { pid: 4242, host: "db-1" }, 3_000);
    const error = await rejection(StateDirLock.acquire(dir, { staleMs: 30_000 }));
    expect(error).toBeInstanceOf(StateDirectoryInUseError);
    expect(error.message).toMatch(IN_USE);
    expect(error.message).toContain("in use by pid 4242 on host db-1");
    expect(error.message).toMatch(/heartbeat [34] s ago/);

    // Its heartbeat stopped longer ago than the window: the holder is gone (a rescheduled pod).
    await foreignLock(dir, { pid: 4242, host: "db-1" }, 31_000);
    const events: StateDirLockEvent[] = [];
    await acquire(dir, { staleMs: 30_000, onEvent: (e) => events.push(e) });
    expect(events[0]?.message).toMatch(/pid 4242 on host db-1: no heartbeat for 31 s/);
    expect(await lockFile(dir)).toMatchObject({ pid: process.pid, host: HOST });
  });

  it("takes a live-looking lock of this host as stale once its heartbeat is past the window", async () => {
    // A pid reused by an unrelated process after the holder died.
    const dir = await directory();
    await foreignLock(dir, { pid: process.ppid, host: HOST }, 60_000);
    await acquire(dir, { staleMs: 30_000 });
    expect(await lockFile(dir)).toMatchObject({ pid: process.pid });
  });

  it("counts an unparseable lock as held by an unknown process until the window passes", async () => {
    const dir = await directory();
    for (const content of ["", "{half", JSON.stringify({ pid: "x", host: 1 })]) {
      await foreignLock(dir, content, 1_000);
      const error = await rejection(StateDirLock.acquire(dir, { staleMs: 30_000 }));
      expect(error).toBeInstanceOf(StateDirectoryInUseError);
      expect(error.message).toMatch(
        /is in use by an unknown process \(lock file .+ cannot be parsed/,
      );
      expect(error.message).toMatch(/stop that process or use another --state-dir$/);
    }
    await foreignLock(dir, "{half", 45_000);
    const events: StateDirLockEvent[] = [];
    await acquire(dir, { staleMs: 30_000, onEvent: (e) => events.push(e) });
    expect(events[0]?.message).toMatch(/an unparseable lock: no heartbeat for 45 s/);
  });

  it("lets exactly one of two takers replace a stale lock", async () => {
    const dir = await directory();
    await foreignLock(dir, { pid: await deadPid(), host: HOST });
    const results = await Promise.allSettled([
      StateDirLock.acquire(dir),
      StateDirLock.acquire(dir),
    ]);
    const held = results.flatMap((r) => (r.status === "fulfilled" ? [r.value] : []));
    locks.push(...held);
    expect(held).toHaveLength(1);
    const refused = results.find((r) => r.status === "rejected");
    expect(refused?.reason).toBeInstanceOf(StateDirectoryInUseError);
    expect((await lockFile(dir)).token).toBe(held[0]?.holder.token);
  });

  it("clears a takeover left by a process killed while replacing a stale lock", async () => {
    const dir = await directory();
    await foreignLock(dir, { pid: await deadPid(), host: HOST });
    const takeover = path.join(dir, `${LOCK_FILE}.takeover`);
    await writeFile(takeover, "");
    const old = new Date(Date.now() - 60_000);
    await utimes(takeover, old, old);
    const events: StateDirLockEvent[] = [];
    const lock = await acquire(dir, { onEvent: (e) => events.push(e) });
    expect(events.map((e) => e.kind)).toEqual(["replaced"]);
    expect((await lockFile(dir)).token).toBe(lock.holder.token);
    expect(await readdir(dir)).toEqual([LOCK_FILE]);
  });

  it("refreshes its heartbeat, and notices when another process took the lock", async () => {
    const dir = await directory();
    const { lock, events } = await acquireWatched(dir);
    const file = path.join(dir, LOCK_FILE);
    const old = new Date(Date.now() - 10_000);
    await utimes(file, old, old);
    await waitFor("a heartbeat", async () => Date.now() - (await stat(file)).mtimeMs < 2_000);
    await lock.check();

    await foreignLock(dir, { pid: 4242, host: "db-1" });
    const lost = await waitFor("the lock lost", () => events.find((e) => e.kind === "lost"));
    expect(lost).toMatchObject({ level: "error", holder: { pid: 4242, host: "db-1" } });
    expect(lost.message).toContain("pid 4242 on host db-1 holds it now");
    const error = await rejection(lock.check());
    expect(error).toBeInstanceOf(StateDirectoryLockLostError);
    expect(lock.lost).toBe(error);
    // The other process's lock stays.
    await lock.release();
    expect(await lockFile(dir)).toMatchObject({ pid: 4242, host: "db-1" });
  });

  it("checks the lock before a commit when its heartbeat was held up", async () => {
    const dir = await directory();
    const lock = await acquire(dir, { staleMs: 60_000, heartbeatMs: 10_000 });
    // Taken over while this process was paused: no heartbeat ran since.
    await foreignLock(dir, { pid: 4242, host: "db-1" });
    await expect(lock.check()).resolves.toBeUndefined();
    // Twenty-five seconds pass on the monotonic clock, as they do in a paused process.
    const realNow = performance.now.bind(performance);
    try {
      performance.now = () => realNow() + 25_000;
      await expect(lock.check()).rejects.toBeInstanceOf(StateDirectoryLockLostError);
    } finally {
      performance.now = realNow;
    }
  });

  it("is lost, not taken back, when its file is removed", async () => {
    const dir = await directory();
    const { lock, events } = await acquireWatched(dir);
    await rm(path.join(dir, LOCK_FILE));
    await waitFor("the lock lost", () => lock.lost);
    expect(events.map((e) => e.kind)).toEqual(["lost"]);
    expect(lock.lost?.message).toMatch(/its lock file is gone or unreadable/);
    expect(await readdir(dir)).toEqual([]);
  });
});

describe("file state store and its directory lock", () => {
  const state = (projectId: string): ProjectState => ({
    format: STATE_FORMAT,
    version: STATE_VERSION,
    projectId,
    sequence: 1,
    committedAtMs: 1_700_000_000_000,
    watermark: { second: 1_700_000_000, ids: [] },
    segment: null,
    tracked: [],
    totals: emptyTotals(),
    outbox: [],
    deadLetters: [],
  });

  it("holds the lock from open to close, and refuses a second store", async () => {
    const dir = await directory();
    const store = new FileStateStore(dir);
    await store.open();
    expect(await readdir(dir)).toEqual([LOCK_FILE]);
    const second = new FileStateStore(dir);
    const error = await rejection(second.open());
    expect(error).toBeInstanceOf(StateDirectoryInUseError);
    await second.close();
    expect(await readdir(dir)).toEqual([LOCK_FILE]);
    await store.close();
    expect(await readdir(dir)).toEqual([]);
    // Opened again after a close: the lock is taken again.
    await store.open();
    expect(await readdir(dir)).toEqual([LOCK_FILE]);
    await store.close();
  });

  it("refuses commits once another process took the directory, and reports it", async () => {
    const dir = await directory();
    const events: StateDirLockEvent[] = [];
    const store = new FileStateStore(dir, {
      lock: { staleMs: 1_000, heartbeatMs: 50 },
      onLockEvent: (e) => events.push(e),
    });
    await store.open();
    await store.commit(state("p-1"));
    await foreignLock(dir, { pid: 4242, host: "db-1" });
    await waitFor("the lock lost", () => events.some((e) => e.kind === "lost"));
    const error = await rejection(store.commit({ ...state("p-1"), sequence: 2 }));
    expect(error).toBeInstanceOf(StateDirectoryLockLostError);
    expect(error.message).toMatch(
      /lost its lock on state directory .+ \(pid 4242 on host db-1 holds it now/,
    );
    expect((await store.load("p-1"))?.sequence).toBe(1);
    await store.close();
    expect(await lockFile(dir)).toMatchObject({ pid: 4242 });
  });
});
