/**
 * The default state store: one JSON file per project in a state directory.
 *
 * One file per project (rather than one per process) because a commit then costs in proportion
 * to the project that changed, not to every project the process follows; a corrupt file stops
 * only its own project; and an operator can inspect, move aside or delete one project's state
 * without touching the others.
 *
 * Every write is atomic and durable: the document goes to a temporary file in the same
 * directory, which is fsynced, renamed over the old file, and then the directory is fsynced so
 * that the rename itself survives a power cut. A reader sees the old document or the new one,
 * never a mixture.
 *
 * One process owns the directory: `open()` takes a lock on it (`state-dir-lock.ts`) and a
 * second daemon on the same directory gets `StateDirectoryInUseError` instead of sharing it.
 */
import { randomBytes } from "node:crypto";
import { open, readFile, readdir, rename, rm, rmdir } from "node:fs/promises";
import path from "node:path";
import { RESOURCE_ID_PATTERN } from "../contract/index.js";
import { StateFileError, type StateStore } from "./state-store.js";
import {
  StateDirLock,
  StateDirectoryInUseError,
  type StateDirLockEvent,
  type StateDirLockOptions,
} from "./state-dir-lock.js";
import type { ProjectState } from "./project-state.js";
import { parseStateDocument } from "./state-document.js";
import { describe, isNotFound, makeDirectory, syncDirectory } from "./fs-primitives.js";

const SUFFIX = ".state.json";
/**
 * What a killed process leaves behind: the temporary file of an interrupted commit
 * (`<project>.state.json.<hex>.tmp`), or the probe of an interrupted `open` (`.write-probe-<hex>`).
 */
const LEFTOVER = /^(?:[a-z0-9-]{1,60}\.state\.json\.[0-9a-f]{12}\.tmp|\.write-probe-[0-9a-f]{12})$/;

export interface FileStateStoreOptions {
  /** The directory lock's staleness window and heartbeat (defaults: 30 s and 5 s). */
  readonly lock?: Omit<StateDirLockOptions, "onEvent">;
  /** Hears the directory lock: a stale lock replaced, the lock lost (the daemon logs both). */
  readonly onLockEvent?: (event: StateDirLockEvent) => void;
}

export class FileStateStore implements StateStore {
  readonly kind = "file";
  /**
   * Settles when the directory's lock is lost to another process (nothing can be committed any
   * more: the daemon has failed); never settles otherwise.
   */
  readonly lost: Promise<Error>;
  readonly #lose: (error: Error) => void;
  #lock: StateDirLock | undefined;

  constructor(
    readonly directory: string,
    private readonly options: FileStateStoreOptions = {},
  ) {
    let lose: (error: Error) => void = () => undefined;
    this.lost = new Promise((resolve) => {
      lose = resolve;
    });
    this.#lose = lose;
  }

  /**
   * Creates the directory if needed, checks that it can be written to, takes the directory's
   * lock (throws `StateDirectoryInUseError` if a live process holds it), and then removes
   * temporary files a killed process left between writing and renaming, and write probes (this
   * process owns the directory now; such a file was never a committed state).
   */
  async open(): Promise<void> {
    try {
      await probeDirectory(this.directory, { keep: true });
      this.#lock ??= await StateDirLock.acquire(this.directory, {
        ...this.options.lock,
        onEvent: (event) => {
          this.options.onLockEvent?.(event);
          if (event.kind === "lost") this.#lose(new Error(event.message));
        },
      });
      for (const name of await readdir(this.directory)) {
        if (LEFTOVER.test(name)) await rm(path.join(this.directory, name), { force: true });
      }
    } catch (cause) {
      if (cause instanceof StateDirectoryInUseError) throw cause;
      throw new StateFileError(
        this.directory,
        "unwritable",
        `state directory is not writable: ${describe(cause)}`,
      );
    }
  }

  fileFor(projectId: string): string {
    if (!RESOURCE_ID_PATTERN.test(projectId)) {
      throw new Error(`not a project id: ${JSON.stringify(projectId)}`);
    }
    return path.join(this.directory, projectId + SUFFIX);
  }

  async load(projectId: string): Promise<ProjectState | undefined> {
    const file = this.fileFor(projectId);
    let text: string;
    try {
      text = await readFile(file, "utf8");
    } catch (cause) {
      if (isNotFound(cause)) return undefined;
      throw new StateFileError(file, "unreadable", `cannot read state file: ${describe(cause)}`);
    }
    return parseState(file, text, projectId);
  }

  async commit(state: ProjectState): Promise<void> {
    const file = this.fileFor(state.projectId);
    // Another process took the directory over: its files are newer than this one's states.
    await this.#lock?.check();
    const temporary = `${file}.${randomBytes(6).toString("hex")}.tmp`;
    const body = JSON.stringify(state);
    try {
      const handle = await open(temporary, "w", 0o600);
      try {
        await handle.writeFile(body, "utf8");
        await handle.sync();
      } finally {
        await handle.close();
      }
      await rename(temporary, file);
      await syncDirectory(this.directory);
    } catch (cause) {
      await rm(temporary, { force: true }).catch(() => undefined);
      throw new StateFileError(file, "unwritable", `cannot write state file: ${describe(cause)}`);
    }
  }

  async projects(): Promise<string[]> {
    const names = await readdir(this.directory).catch((cause: unknown) => {
      if (isNotFound(cause)) return [] as string[];
      throw cause;
    });
    return names
      .filter((name) => name.endsWith(SUFFIX))
      .map((name) => name.slice(0, -SUFFIX.length))
      .filter((id) => RESOURCE_ID_PATTERN.test(id))
      .sort();
  }

  /** Releases the directory's lock. Every commit is already durable; nothing is buffered. */
  async close(): Promise<void> {
    const lock = this.#lock;
    this.#lock = undefined;
    await lock?.release();
  }
}

/**
 * Why the file store cannot use `directory` (`the state directory /x/state cannot be written:
 * ENOTDIR: not a directory, mkdir '/x/state'`), or undefined when it can: the directory exists or
 * can be made, and takes a new file. With `keep: false` (a check of the configuration) nothing is
 * left behind: the directories made for the check are removed again.
 */
export async function stateDirectoryProblem(
  directory: string,
  options: { readonly keep: boolean },
): Promise<string | undefined> {
  try {
    await probeDirectory(directory, options);
    return undefined;
  } catch (cause) {
    return `the state directory ${directory} cannot be written: ${describe(cause)}`;
  }
}

/**
 * Makes `directory` if it is missing and writes and removes a probe file in it; throws the
 * file system's error. Without `keep`, removes the directories it made.
 */
async function probeDirectory(directory: string, options: { readonly keep: boolean }) {
  const made = await makeDirectory(directory);
  const probe = path.join(directory, `.write-probe-${randomBytes(6).toString("hex")}`);
  try {
    const handle = await open(probe, "w");
    await handle.close();
  } finally {
    await rm(probe, { force: true }).catch(() => undefined);
    if (!options.keep && made !== undefined) await removeMade(directory, made);
  }
}

/** Removes `directory` and its parents up to `made`, the first directory mkdir made (if empty). */
async function removeMade(directory: string, made: string): Promise<void> {
  let current = path.resolve(directory);
  const top = path.resolve(made);
  for (;;) {
    const removed = await rmdir(current).then(
      () => true,
      () => false,
    );
    if (!removed || current === top || path.dirname(current) === current) return;
    current = path.dirname(current);
  }
}

/** Validates a state document read from `file`; never returns a document it cannot vouch for. */
export function parseState(file: string, text: string, projectId: string): ProjectState {
  return parseStateDocument(text, projectId, { location: file, noun: "state file" });
}
