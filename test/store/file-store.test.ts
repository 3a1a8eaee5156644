import { readFile, readdir, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  FileStateStore,
  LOCK_FILE,
  STATE_FORMAT,
  STATE_VERSION,
  StateDirectoryInUseError,
  StateFileError,
  type ProjectState,
} from "../../src/store/index.js";
import { emptyTotals } from "../../src/sync/index.js";
import { neverPollingSync } from "../support/never-polling-sync.js";
import { tempDir } from "../support/temp-dir.js";

function state(projectId: string, sequence = 1): ProjectState {
  return {
    format: STATE_FORMAT,
    version: STATE_VERSION,
    projectId,
    sequence,
    committedAtMs: 1_700_000_000_000,
    watermark: { second: 1_700_000_000, ids: ["a"] },
    segment: null,
    tracked: [],
    totals: emptyTotals(),
    outbox: [],
    deadLetters: [],
  };
}

async function freshStore(): Promise<FileStateStore> {
  const store = new FileStateStore(await tempDir("pgcp-store-"));
  await store.open();
  return store;
}

async function problemOf(promise: Promise<unknown>): Promise<StateFileError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(StateFileError);
  return error as StateFileError;
}

describe("file state store", () => {
  it("returns undefined for a project never committed, and the last commit after it", async () => {
    const store = await freshStore();
    expect(await store.load("p-1")).toBeUndefined();
    await store.commit(state("p-1", 1));
    await store.commit(state("p-1", 2));
    expect((await store.load("p-1"))?.sequence).toBe(2);
    expect(await store.projects()).toEqual(["p-1"]);
    // Only the state file and the open store's lock remain: no temporary file is left behind.
    expect((await readdir(store.directory)).sort()).toEqual([LOCK_FILE, "p-1.state.json"]);
    await store.close();
    expect(await readdir(store.directory)).toEqual(["p-1.state.json"]);
  });

  it("loads alerts stored without names (as before names were kept) and with them", async () => {
    const store = await freshStore();
    const alert = {
      id: "a-1",
      kind: "operation_failed" as const,
      projectId: "p-1",
      operationId: "op-1",
      branchId: "br-1",
      action: "apply_config",
      status: "failed",
      failuresCount: 1,
      createdAt: "2025-06-01T12:00:00.000Z",
      updatedAt: "2025-06-01T12:00:05.000Z",
      durationSeconds: 5,
      detectedAt: "2025-06-01T12:00:06.000Z",
    };
    const named = { ...alert, id: "a-2", projectName: "Tenant Acme", branchName: "main" };
    const outbox = [alert, named].map((a) => ({ alert: a, createdAtMs: 1, pending: ["hook"] }));
    await store.commit({ ...state("p-1"), outbox });
    const loaded = await store.load("p-1");
    expect(loaded?.outbox.map((e) => e.alert)).toEqual([alert, named]);
    await store.close();
  });

  it("clears temporary files an interrupted commit left behind, and only those", async () => {
    const store = await freshStore();
    await store.commit(state("p-5"));
    const leftover = `${store.fileFor("p-5")}.0123456789ab.tmp`;
    await writeFile(leftover, "{half a docu");
    await writeFile(path.join(store.directory, "notes.txt"), "an operator's file");
    // The next process to open the directory clears them (this one must let go of it first).
    await store.close();
    const next = new FileStateStore(store.directory);
    await next.open();
    await next.close();
    expect((await readdir(store.directory)).sort()).toEqual(["notes.txt", "p-5.state.json"]);
  });

  it("leaves the temporary files alone when another process holds the directory", async () => {
    const store = await freshStore();
    const leftover = `${store.fileFor("p-6")}.0123456789ab.tmp`;
    await writeFile(leftover, "{half a docu");
    // Another live process holds it: this host's parent process, with a fresh heartbeat.
    await writeFile(
      path.join(store.directory, LOCK_FILE),
      JSON.stringify({ pid: process.ppid, host: hostname(), startedAt: new Date().toISOString() }),
    );
    await store.close();
    const second = new FileStateStore(store.directory);
    await expect(second.open()).rejects.toBeInstanceOf(StateDirectoryInUseError);
    expect((await readdir(store.directory)).sort()).toEqual([
      LOCK_FILE,
      "p-6.state.json.0123456789ab.tmp",
    ]);
  });

  it("names the file and never overwrites a corrupt, foreign or newer state file", async () => {
    const store = await freshStore();
    const file = store.fileFor("p-2");
    const cases: [string, StateFileError["problem"], RegExp][] = [
      ["{not json", "corrupt", /not valid JSON/],
      [JSON.stringify({ hello: "world" }), "foreign", /not a pgcp-exporter\/project-state/],
      [JSON.stringify({ ...state("p-2"), version: 99 }), "version", /version 99/],
      [JSON.stringify(state("other-project")), "foreign", /belongs to project "other-project"/],
      [
        JSON.stringify({ ...state("p-2"), watermark: { second: "x" } }),
        "corrupt",
        /watermark\.second/,
      ],
    ];
    for (const [content, problem, message] of cases) {
      await writeFile(file, content);
      const error = await problemOf(store.load("p-2"));
      expect(error.problem).toBe(problem);
      expect(error.message).toMatch(message);
      expect(error.message).toContain(file);
      // The engine reports the project as blocked and does not touch the file.
      const sync = neverPollingSync("p-2", store);
      expect((await sync.step(Date.now())).kind).toBe("blocked");
      expect(await readFile(file, "utf8")).toBe(content);
    }
  });

  it("reports a directory it cannot create or write to", async () => {
    const base = await tempDir("pgcp-store-");
    await writeFile(path.join(base, "file"), "");
    const store = new FileStateStore(path.join(base, "file", "state"));
    const error = await problemOf(store.open());
    expect(error.problem).toBe("unwritable");
    await expect(store.commit(state("p-3"))).rejects.toBeInstanceOf(StateFileError);
  });

  it("restarts histogram buckets counted with other bounds, keeping counts and sums", async () => {
    const store = await freshStore();
    const old = state("p-4");
    old.totals = {
      ...old.totals,
      durationBuckets: [1, 10],
      arrivals: [
        {
          action: "start_compute",
          status: "finished",
          count: 3,
          durationSum: 6,
          buckets: [1, 2, 0],
        },
      ],
    };
    await store.commit(old);
    const sync = neverPollingSync("p-4", store);
    const status = await sync.load();
    expect(status.kind === "ready" && status.bucketsReset).toBe(true);
    const arrivals = sync.state?.totals.arrivals[0];
    expect(arrivals?.count).toBe(3);
    expect(arrivals?.durationSum).toBe(6);
    expect(arrivals?.buckets.every((b) => b === 0)).toBe(true);
    expect(sync.state?.totals.durationBuckets).toEqual(emptyTotals().durationBuckets);
  });
});
