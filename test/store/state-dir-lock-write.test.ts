/**
 * The state directory lock leaves nothing behind when its document cannot be written: a full
 * disk is simulated by failing the lock files' writes (node:fs/promises is wrapped for this
 * file only), on the hard-link path and on the in-place one of file systems without links.
 */
import type * as FsPromises from "node:fs/promises";
import { readdir } from "node:fs/promises";
import { afterEach, describe, expect, it, vi } from "vitest";
import { FileStateStore, StateDirLock, StateFileError } from "../../src/store/index.js";
import { tempDir } from "../support/temp-dir.js";

/** Which lock files' writes fail (none by default), and whether hard links are refused. */
const faults = vi.hoisted(() => ({
  failWrite: undefined as ((file: string) => boolean) | undefined,
  noHardLinks: false,
}));

vi.mock("node:fs/promises", async (importOriginal) => {
  const actual = await importOriginal<typeof FsPromises>();
  const diskFull = () =>
    Object.assign(new Error("ENOSPC: no space left on device, write"), {
      code: "ENOSPC",
    });
  const open: typeof actual.open = async (file, ...rest) => {
    const handle = await actual.open(file, ...rest);
    if (faults.failWrite?.(String(file)) !== true) return handle;
    // The file is created, as on a full disk; writing its document fails.
    return new Proxy(handle, {
      get(target, property) {
        if (property === "writeFile") return () => Promise.reject(diskFull());
        const value: unknown = Reflect.get(target, property);
        return typeof value === "function" ? (value as () => unknown).bind(target) : value;
      },
    });
  };
  const link: typeof actual.link = (existing, file) =>
    faults.noHardLinks
      ? Promise.reject(
          Object.assign(new Error("EPERM: operation not permitted, link"), {
            code: "EPERM",
          }),
        )
      : actual.link(existing, file);
  return { ...actual, open, link, default: { ...actual, open, link } };
});

afterEach(() => {
  faults.failWrite = undefined;
  faults.noHardLinks = false;
});

const isLockFile = (file: string) => file.includes(".pgcp-exporter.lock");

describe("a lock document that cannot be written (a full disk)", () => {
  it("leaves no temporary file and no lock behind", async () => {
    const dir = await tempDir("pgcp-lock-");
    faults.failWrite = isLockFile;
    await expect(StateDirLock.acquire(dir)).rejects.toThrow("ENOSPC");
    expect(await readdir(dir)).toEqual([]);
  });

  it("leaves no half-written lock where the lock is written in place (no hard links)", async () => {
    const dir = await tempDir("pgcp-lock-");
    faults.noHardLinks = true;
    // The temporary document is written; the lock written in place is not.
    faults.failWrite = (file) => isLockFile(file) && !file.endsWith(".tmp");
    await expect(StateDirLock.acquire(dir)).rejects.toThrow("ENOSPC");
    expect(await readdir(dir)).toEqual([]);
  });

  it("makes the file store refuse to open, naming the state directory, and leave nothing", async () => {
    const dir = await tempDir("pgcp-store-");
    faults.failWrite = isLockFile;
    const error = await new FileStateStore(dir).open().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StateFileError);
    expect((error as Error).message).toContain(
      "state directory is not writable: ENOSPC: no space left on device, write",
    );
    expect(await readdir(dir)).toEqual([]);
  });

  it("still takes the lock once the disk has room again", async () => {
    const dir = await tempDir("pgcp-lock-");
    faults.failWrite = isLockFile;
    await expect(StateDirLock.acquire(dir)).rejects.toThrow("ENOSPC");
    faults.failWrite = undefined;
    const lock = await StateDirLock.acquire(dir);
    expect(await readdir(dir)).toEqual([".pgcp-exporter.lock"]);
    await lock.release();
  });
});
