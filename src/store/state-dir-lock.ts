/**
 * One process per state directory. Two daemons on one directory would both poll every project,
 * both deliver every alert and both export the same counters, each overwriting the other's
 * state files; the file store takes this lock when it opens, and a second daemon refuses to
 * start. (The Postgres store needs none: its leases share the projects out.)
 *
 * The lock is a file in the directory, `.pgcp-exporter.lock`, holding who took it:
 * `{pid, host, startedAt, token}`. It is created exclusively and whole: the document is written
 * and fsynced under a temporary name, then hard-linked to the lock's name, which fails if a lock
 * exists (on a file system without hard links, the lock is opened with `wx` and written in
 * place). The holder touches the file (its mtime) every `heartbeatMs`: that is its heartbeat.
 *
 * A lock found in place is stale, and replaced, when:
 * - its heartbeat is older than `staleMs` (whatever its host: a pod rescheduled on another
 *   host takes over once the window has passed);
 * - it was taken on this host by a process that is not running (`kill -9`), or by this very
 *   pid without being held in this process (a container restarted as pid 1 again);
 * - it cannot be parsed and its mtime is older than `staleMs` (until then it counts as held by
 *   an unknown process).
 * Otherwise it is live, and `acquire` throws `StateDirectoryInUseError` naming its holder. A
 * stale lock is removed under a second lock, `.pgcp-exporter.lock.takeover`, taken the same
 * way for the moment it takes: of two processes that find one stale lock, one replaces it and
 * the other then finds the new lock live.
 *
 * On each heartbeat the holder checks that the file still names it. If another process took the
 * lock (this one was paused past the window, or a takeover left by a killed process was cleared in
 * the middle of another) or the file is gone, the lock is lost for good: `onEvent` hears it, and
 * `check()` (called by the store before each commit) throws `StateDirectoryLockLostError` from then
 * on.
 */
import { randomBytes } from "node:crypto";
import { link, open, readdir, rm, stat, utimes } from "node:fs/promises";
import { readFileSync } from "node:fs";
import { hostname } from "node:os";
import path from "node:path";
import { describe, isNotFound, syncDirectory } from "./fs-primitives.js";
import { systemClock } from "../clock.js";

/** The lock file's name in the state directory. */
export const LOCK_FILE = ".pgcp-exporter.lock";
/**
 * A lock document being written: `.pgcp-exporter.lock.<hex>.tmp` (or the takeover's). One left
 * by a killed process is removed by a later holder once older than the window.
 */
const LOCK_TEMPORARY = /^\.pgcp-exporter\.lock(\.takeover)?\.[0-9a-f]{12}\.tmp$/;
/**
 * Taken, like the lock, by whoever replaces a stale lock, for the time it takes: two processes
 * that find the same stale lock never remove it twice (the second would remove the lock the
 * first has just put in its place).
 */
const TAKEOVER_SUFFIX = ".takeover";
/** A takeover older than this was left by a process killed in the middle of one. */
const TAKEOVER_STALE_MS = 5_000;
/** How long a taker waits on other takers before it gives up (above `TAKEOVER_STALE_MS`). */
const TAKER_WAIT_MS = 10_000;

/** Default staleness window: a lock whose heartbeat is older is replaced. */
export const DEFAULT_LOCK_STALE_MS = 30_000;

/** Who holds a state directory: the lock file's document. */
export interface LockHolder {
  readonly pid: number;
  readonly host: string;
  /** When the holder took the lock (ISO 8601). */
  readonly startedAt: string;
  /** Tells apart two holders with the same pid and host (this one's, or a restarted one's). */
  readonly token?: string;
}

/** What the lock reports while it is held (the daemon logs each at `level`). */
export type StateDirLockEvent =
  | {
      /** A stale lock was replaced when the lock was taken. */
      readonly kind: "replaced";
      readonly level: "warn";
      readonly file: string;
      readonly previous: LockHolder | undefined;
      readonly message: string;
    }
  | {
      /** The lock file no longer names this process: nothing more may be committed. */
      readonly kind: "lost";
      readonly level: "error";
      readonly file: string;
      readonly holder: LockHolder | undefined;
      readonly message: string;
    }
  | {
      /** A heartbeat could not read or touch the lock file (it is tried again). */
      readonly kind: "heartbeat_failed";
      readonly level: "warn";
      readonly file: string;
      readonly message: string;
    };

export interface StateDirLockOptions {
  /** A lock whose heartbeat is older than this is stale (default 30 s). */
  readonly staleMs?: number;
  /** How often the holder touches the lock and checks it is still its own (default staleMs/6). */
  readonly heartbeatMs?: number;
  readonly onEvent?: (event: StateDirLockEvent) => void;
}

/** The state directory is locked by a live process: this one must not use it. */
export class StateDirectoryInUseError extends Error {
  override readonly name = "StateDirectoryInUseError";

  constructor(
    readonly directory: string,
    readonly file: string,
    readonly holder: LockHolder | undefined,
    /** How long ago the lock file was last touched. */
    readonly heartbeatAgeMs: number,
    staleMs: number,
  ) {
    const age = `${Math.round(heartbeatAgeMs / 1000)} s ago`;
    const who =
      holder === undefined
        ? `an unknown process (lock file ${file} cannot be parsed, written ${age}; it counts as stale after ${Math.round(staleMs / 1000)} s)`
        : `pid ${holder.pid} on host ${holder.host} (lock file ${file}, heartbeat ${age})`;
    super(
      `state directory ${directory} is in use by ${who}; stop that process or use another --state-dir`,
    );
  }
}

/** This process lost its lock on the state directory: it must not write there any more. */
export class StateDirectoryLockLostError extends Error {
  override readonly name = "StateDirectoryLockLostError";

  constructor(
    readonly directory: string,
    readonly file: string,
    readonly holder: LockHolder | undefined,
  ) {
    const now =
      holder === undefined
        ? "its lock file is gone or unreadable"
        : `pid ${holder.pid} on host ${holder.host} holds it now`;
    super(
      `this process lost its lock on state directory ${directory} (${now}; lock file ${file}); nothing more is committed there (two processes must never share a state directory)`,
    );
  }
}

/** Tokens of the locks this process holds now (a lock with our pid may be one of them). */
const heldHere = new Set<string>();

/** A held lock on a state directory; see the module's comment. */
export class StateDirLock {
  readonly file: string;
  #lost: StateDirectoryLockLostError | undefined;
  #released = false;
  #timer: NodeJS.Timeout | undefined;
  /** The heartbeat in progress, shared by a `check()` that comes meanwhile. */
  #beating: Promise<void> | undefined;
  #lastVerifiedMs: number;
  #heartbeatFailed = false;

  private constructor(
    readonly directory: string,
    readonly holder: LockHolder & { readonly token: string },
    private readonly settings: Settings,
  ) {
    this.file = path.join(directory, LOCK_FILE);
    this.#lastVerifiedMs = systemClock.monotonic();
  }

  /**
   * Takes the lock on `directory` (which must exist), replacing a stale one; throws
   * `StateDirectoryInUseError` when a live process holds it, and the file system's error when
   * the lock file cannot be read or written.
   */
  static async acquire(
    directory: string,
    options: StateDirLockOptions = {},
  ): Promise<StateDirLock> {
    const settings = settle(options);
    const file = path.join(directory, LOCK_FILE);
    const holder = {
      pid: settings.pid,
      host: settings.host,
      startedAt: new Date(systemClock.wall()).toISOString(),
      token: randomBytes(8).toString("hex"),
    };
    const body = `${JSON.stringify(holder)}\n`;
    // Counts as held here from the first attempt: another taker in this process must not
    // mistake the lock just created for one of a previous run with the same pid.
    heldHere.add(holder.token);
    let replaced: { previous: LockHolder | undefined; reason: string } | undefined;
    let seen: Inspection | undefined;
    try {
      const deadline = systemClock.monotonic() + TAKER_WAIT_MS;
      while (systemClock.monotonic() < deadline) {
        if (await createExclusively(file, body)) {
          const lock = new StateDirLock(directory, holder, settings);
          await removeTemporaries(directory, settings.staleMs);
          if (replaced !== undefined) {
            lock.emit({
              kind: "replaced",
              level: "warn",
              file,
              previous: replaced.previous,
              message: `replaced a stale lock on the state directory (${replaced.reason})`,
            });
          }
          lock.startHeartbeat();
          return lock;
        }
        seen = await inspect(file);
        if (seen === undefined) continue; // gone meanwhile: try again
        const verdict = judge(seen, settings);
        if (verdict.live) break;
        if (await removeStale(file, seen.text, body)) {
          replaced = { previous: seen.holder, reason: verdict.reason };
        }
      }
    } catch (error) {
      heldHere.delete(holder.token);
      throw error;
    }
    heldHere.delete(holder.token);
    // A live holder; or others kept replacing the lock at the same moment, and one holds it.
    throw new StateDirectoryInUseError(
      directory,
      file,
      seen?.holder,
      seen?.ageMs ?? 0,
      settings.staleMs,
    );
  }

  /** Set once the lock was found taken by another process or gone; never cleared. */
  get lost(): StateDirectoryLockLostError | undefined {
    return this.#lost;
  }

  /**
   * Throws `StateDirectoryLockLostError` if the lock is lost. When the heartbeat has not run
   * for two of its periods (a paused process, a blocked event loop), checks the file first:
   * another process may have taken the directory over meanwhile.
   */
  async check(): Promise<void> {
    if (
      this.#lost === undefined &&
      !this.#released &&
      systemClock.monotonic() - this.#lastVerifiedMs > 2 * this.settings.heartbeatMs
    ) {
      await this.heartbeat();
    }
    if (this.#lost !== undefined) throw this.#lost;
  }

  /**
   * Stops the heartbeat and removes the lock file if it still names this process. Never
   * throws: a lock file that cannot be removed names a process that has ended, which is stale.
   */
  async release(): Promise<void> {
    if (this.#released) return;
    this.#released = true;
    this.stopHeartbeat();
    await this.#beating;
    heldHere.delete(this.holder.token);
    if (this.#lost !== undefined) return;
    try {
      const seen = await inspect(this.file);
      if (seen?.holder?.token === this.holder.token) await rm(this.file, { force: true });
    } catch {
      // Left in place: stale once this process has ended.
    }
  }

  /** One heartbeat: checks that the file still names this process, and touches it. */
  heartbeat(): Promise<void> {
    this.#beating ??= this.beat().finally(() => {
      this.#beating = undefined;
    });
    return this.#beating;
  }

  private async beat(): Promise<void> {
    if (this.#lost !== undefined || this.#released) return;
    let seen: Inspection | undefined;
    try {
      seen = await inspect(this.file);
      if (seen?.holder?.token === this.holder.token) {
        const now = new Date(systemClock.wall());
        await utimes(this.file, now, now);
        this.#lastVerifiedMs = systemClock.monotonic();
        this.#heartbeatFailed = false;
        return;
      }
    } catch (error) {
      // Not a verdict: tried again at the next heartbeat (reported once until it works).
      if (!this.#heartbeatFailed) {
        this.#heartbeatFailed = true;
        this.emit({
          kind: "heartbeat_failed",
          level: "warn",
          file: this.file,
          message: `cannot refresh the lock on the state directory: ${describe(error)}`,
        });
      }
      return;
    }
    // Gone, or naming someone else: never taken back, since another process may have
    // committed meanwhile and this one's states are older than the files.
    this.#lost = new StateDirectoryLockLostError(this.directory, this.file, seen?.holder);
    heldHere.delete(this.holder.token);
    this.stopHeartbeat();
    this.emit({
      kind: "lost",
      level: "error",
      file: this.file,
      holder: seen?.holder,
      message: this.#lost.message,
    });
  }

  private startHeartbeat(): void {
    this.#timer = setInterval(() => void this.heartbeat(), this.settings.heartbeatMs);
    this.#timer.unref();
  }

  private stopHeartbeat(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
  }

  private emit(event: StateDirLockEvent): void {
    try {
      this.settings.onEvent?.(event);
    } catch {
      // A listener's failure is not the lock's.
    }
  }
}

interface Settings {
  readonly staleMs: number;
  readonly heartbeatMs: number;
  readonly onEvent: ((event: StateDirLockEvent) => void) | undefined;
  /** This process, as its lock names it. */
  readonly host: string;
  readonly pid: number;
}

function settle(options: StateDirLockOptions): Settings {
  const staleMs = options.staleMs ?? DEFAULT_LOCK_STALE_MS;
  if (!(staleMs > 0)) throw new Error(`staleMs must be positive, not ${staleMs}`);
  const heartbeatMs = options.heartbeatMs ?? Math.max(1, Math.floor(staleMs / 6));
  if (!(heartbeatMs > 0 && heartbeatMs < staleMs)) {
    throw new Error(
      `heartbeatMs must be positive and below staleMs (${staleMs}), not ${heartbeatMs}`,
    );
  }
  return {
    staleMs,
    heartbeatMs,
    onEvent: options.onEvent,
    host: hostname(),
    pid: process.pid,
  };
}

/** A lock file as found: its text, its holder if it parses, and the age of its heartbeat. */
interface Inspection {
  readonly text: string;
  readonly holder: LockHolder | undefined;
  readonly ageMs: number;
}

/** The lock file, or undefined if there is none (text and mtime of one and the same file). */
async function inspect(file: string): Promise<Inspection | undefined> {
  let handle;
  try {
    handle = await open(file, "r");
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
  try {
    const { mtimeMs } = await handle.stat();
    const text = await handle.readFile("utf8");
    return { text, holder: parseHolder(text), ageMs: Math.max(0, systemClock.wall() - mtimeMs) };
  } finally {
    await handle.close();
  }
}

function judge(seen: Inspection, s: Settings): { live: true } | { live: false; reason: string } {
  const age = `${Math.round(seen.ageMs / 1000)} s`;
  const { holder } = seen;
  if (seen.ageMs > s.staleMs) {
    const who =
      holder === undefined ? "an unparseable lock" : `pid ${holder.pid} on host ${holder.host}`;
    return { live: false, reason: `${who}: no heartbeat for ${age}` };
  }
  if (holder === undefined || holder.host !== s.host) return { live: true };
  if (holder.pid === s.pid) {
    if (holder.token !== undefined && heldHere.has(holder.token)) return { live: true };
    return {
      live: false,
      reason: `pid ${holder.pid} on host ${holder.host} is this process's own pid: a previous run (a restarted container)`,
    };
  }
  if (!isRunning(holder.pid)) {
    return { live: false, reason: `pid ${holder.pid} on host ${holder.host} is not running` };
  }
  return { live: true };
}

function parseHolder(text: string): LockHolder | undefined {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof json !== "object" || json === null) return undefined;
  const { pid, host, startedAt, token } = json as Record<string, unknown>;
  if (typeof pid !== "number" || !Number.isSafeInteger(pid) || pid <= 0) return undefined;
  if (typeof host !== "string" || typeof startedAt !== "string") return undefined;
  return { pid, host, startedAt, ...(typeof token === "string" ? { token } : {}) };
}

/** Whether a process with `pid` runs on this host (one we may not signal runs too). */
function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== "ESRCH";
  }
  return !isZombie(pid);
}

/**
 * A process killed but not yet reaped by its parent still answers signal 0; on Linux its
 * state in `/proc/<pid>/stat` says so (elsewhere it counts as running).
 */
function isZombie(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const state = stat.charAt(stat.lastIndexOf(")") + 2);
    return state === "Z" || state === "X";
  } catch {
    return false;
  }
}

/**
 * Creates the lock file with `body`, whole and durable, unless one exists: false then. The
 * document is written under a temporary name and hard-linked into place, so that the lock is
 * never seen empty or half-written, even after a `kill -9` in the middle.
 */
async function createExclusively(file: string, body: string): Promise<boolean> {
  const temporary = `${file}.${randomBytes(6).toString("hex")}.tmp`;
  try {
    // Inside the try: a write that fails (a full disk) leaves no temporary behind either.
    await writeDurably(temporary, body);
    if (!(await linkExclusively(temporary, file, body))) return false;
  } finally {
    await rm(temporary, { force: true }).catch(() => undefined);
  }
  await syncDirectory(path.dirname(file));
  return true;
}

/** Links the written `temporary` to `file`, or writes `file` in place without hard links. */
async function linkExclusively(temporary: string, file: string, body: string): Promise<boolean> {
  try {
    await link(temporary, file);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // A lock exists (or the temporary document vanished): the caller looks at what is there.
    if (code === "EEXIST" || code === "ENOENT") return false;
    if (!NO_HARD_LINKS.has(code ?? "")) throw error;
  }
  // No hard links here: exclusive creation in place (a kill in the middle leaves a lock that
  // cannot be parsed, stale after the window).
  try {
    await writeDurably(file, body);
    return true;
  } catch (inPlace) {
    if ((inPlace as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw inPlace;
  }
}

const NO_HARD_LINKS = new Set(["EPERM", "ENOTSUP", "EOPNOTSUPP", "ENOSYS", "EMLINK"]);

/**
 * Writes `body` to a new file (`wx`: fails if it exists), fsynced. A file it created but could
 * not write whole (a full disk) is removed: half a document is never left behind.
 */
async function writeDurably(file: string, body: string): Promise<void> {
  const handle = await open(file, "wx", 0o644);
  try {
    try {
      await handle.writeFile(body, "utf8");
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch (error) {
    await rm(file, { force: true }).catch(() => undefined);
    throw error;
  }
}

/**
 * Removes the stale lock judged from `text`, under the takeover lock, if it is still that one;
 * true if it did. When another process is replacing it, waits a moment and returns false (the
 * caller looks again); a takeover left by a killed process is cleared once old.
 */
async function removeStale(file: string, text: string, body: string): Promise<boolean> {
  const takeover = file + TAKEOVER_SUFFIX;
  if (!(await createExclusively(takeover, body))) {
    const other = await inspect(takeover);
    if (other !== undefined && other.ageMs > TAKEOVER_STALE_MS) {
      await rm(takeover, { force: true });
    } else {
      await delay(20 + Math.random() * 50);
    }
    return false;
  }
  try {
    // Only a taker holding the takeover removes a lock: this one is still the one judged.
    if ((await inspect(file))?.text !== text) return false;
    await rm(file, { force: true });
    return true;
  } finally {
    await rm(takeover, { force: true });
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => {
    setTimeout(resolve, ms);
  });
}

/**
 * Lock documents left by a process killed while writing one (best effort). Only those older
 * than the staleness window: a younger one may be another process's, which is taking the lock
 * at this moment (and will find it held).
 */
async function removeTemporaries(directory: string, staleMs: number): Promise<void> {
  try {
    for (const name of await readdir(directory)) {
      if (!LOCK_TEMPORARY.test(name)) continue;
      const file = path.join(directory, name);
      const { mtimeMs } = await stat(file);
      if (systemClock.wall() - mtimeMs > staleMs) await rm(file, { force: true });
    }
  } catch {
    // Left for the next holder: such a file is never taken for a lock.
  }
}
