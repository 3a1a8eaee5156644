/**
 * Whether the file store can use a state directory, as `run` and `check-config` ask before
 * starting: an unwritable one is named with the file system's reason (its code once), a
 * missing one that can be made is fine, and a check leaves nothing behind. Running as root, a
 * chmod'ed directory is still writable: the unwritable ones here are a path through a regular
 * file (ENOTDIR) and one under /proc, where nothing can be made (ENOENT).
 */
import { existsSync } from "node:fs";
import { readdir, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { FileStateStore, StateFileError, stateDirectoryProblem } from "../../src/store/index.js";
import { tempDir } from "../support/temp-dir.js";

describe("a state directory", () => {
  it("through a regular file cannot be written, and says why once", async () => {
    const base = await tempDir("pgcp-state-");
    await writeFile(path.join(base, "file"), "");
    const dir = path.join(base, "file", "state");
    expect(await stateDirectoryProblem(dir, { keep: false })).toBe(
      `the state directory ${dir} cannot be written: ENOTDIR: not a directory, mkdir '${dir}'`,
    );
    const error = await new FileStateStore(dir).open().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StateFileError);
    expect((error as Error).message).toBe(
      `state directory is not writable: ENOTDIR: not a directory, mkdir '${dir}'`,
    );
  });

  it("that is a regular file is named as one", async () => {
    const base = await tempDir("pgcp-state-");
    const file = path.join(base, "state");
    await writeFile(file, "");
    expect(await stateDirectoryProblem(file, { keep: false })).toBe(
      `the state directory ${file} cannot be written: ENOTDIR: ${file} is a file, not a directory`,
    );
  });

  it.runIf(existsSync("/proc/self"))(
    "under /proc is refused at once (Node's recursive mkdir would never settle there)",
    async () => {
      expect(await stateDirectoryProblem("/proc/pgcp-nowhere/state", { keep: false })).toBe(
        "the state directory /proc/pgcp-nowhere/state cannot be written: " +
          "ENOENT: no such file or directory, mkdir '/proc/pgcp-nowhere'",
      );
    },
  );

  it("that can be made passes a check that leaves nothing behind", async () => {
    const base = await tempDir("pgcp-state-");
    expect(await stateDirectoryProblem(path.join(base, "a", "b", "state"), { keep: false })).toBe(
      undefined,
    );
    expect(await readdir(base)).toEqual([]);
  });

  it("that exists keeps what it holds after a check, and is made to stay by run's", async () => {
    const base = await tempDir("pgcp-state-");
    await writeFile(path.join(base, "p-1.state.json"), "{}");
    expect(await stateDirectoryProblem(base, { keep: false })).toBe(undefined);
    expect(await readdir(base)).toEqual(["p-1.state.json"]);
    const made = path.join(base, "made", "state");
    expect(await stateDirectoryProblem(made, { keep: true })).toBe(undefined);
    expect((await stat(made)).isDirectory()).toBe(true);
    expect(await readdir(made)).toEqual([]);
  });
});
