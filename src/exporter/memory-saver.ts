/**
 * V8's memory saver mode while the daemon has time to spare (docs/performance.md#memory).
 *
 * In memory saver mode (`--memory-saver-mode`, V8 13.6 and later: Node 24, the image's runtime)
 * V8 collects to save memory rather than time: each full collection compacts the heap and
 * shrinks the young generation. That keeps an idle daemon small but makes a catch-up too slow,
 * so the daemon switches it by how busy its event loop is, as Chrome switches it by the memory a
 * machine has left: on while the loop has time to spare, off at once when a second finds it busy
 * (a catch-up, a start-up of thousands of projects), and on again after ten quiet seconds in a
 * row. V8 reads the mode at each collection, so a switch takes effect within the next few.
 *
 * `nextSaverState` is the decision, pure; `startMemorySaver` samples the event loop's
 * utilization once a second and sets the flag. Node 20 and 22 have no such mode: there it does
 * nothing. An operator who starts node with `--memory-saver-mode`, `--no-memory-saver-mode`
 * or `--optimize-for-size` keeps that choice.
 */
import { performance, type EventLoopUtilization } from "node:perf_hooks";
import { setFlagsFromString } from "node:v8";
import { v8FlagChosen } from "./process-settings.js";

/** When the mode switches, from the event loop's utilization over each second (0 to 1). */
export interface SaverPolicy {
  /** A second at or above this is busy: the mode goes off at once. */
  readonly busyFrom: number;
  /** A second below this is quiet. */
  readonly quietBelow: number;
  /** Quiet seconds in a row after which the mode goes on again. */
  readonly quietSeconds: number;
}

export const SAVER_POLICY: SaverPolicy = { busyFrom: 0.8, quietBelow: 0.3, quietSeconds: 10 };

/**
 * Whether the mode is on, and the quiet seconds in a row seen since the last second that was not.
 */
export interface SaverState {
  readonly saving: boolean;
  readonly quiet: number;
}

/**
 * The daemon starts saving: a start-up of a thousand projects leaves the loop time to spare, and
 * a longer one turns the mode off within its first busy second.
 */
export const SAVER_START: SaverState = { saving: true, quiet: 0 };

/** The state after a second whose event loop was busy for `utilization` of it. */
export function nextSaverState(
  state: SaverState,
  utilization: number,
  policy: SaverPolicy = SAVER_POLICY,
): SaverState {
  if (utilization >= policy.busyFrom) return { saving: false, quiet: 0 };
  if (utilization >= policy.quietBelow) return { saving: state.saving, quiet: 0 };
  const quiet = state.quiet + 1;
  return { saving: state.saving || quiet >= policy.quietSeconds, quiet };
}

/** The first V8 that has the mode (Node 24.0 ships 13.6). */
const FIRST_V8 = [13, 6] as const;

/** Whether this V8 (`process.versions.v8`, as "13.6.233.10-node.28") has the mode. */
export function memorySaverSupported(v8Version: string = process.versions.v8): boolean {
  const [major, minor] = v8Version.split(".").map((part) => Number.parseInt(part, 10));
  if (major === undefined || minor === undefined || Number.isNaN(major) || Number.isNaN(minor)) {
    return false;
  }
  return major > FIRST_V8[0] || (major === FIRST_V8[0] && minor >= FIRST_V8[1]);
}

/**
 * Who decides the mode: nobody (no such mode), the operator through node's flags, or the daemon.
 */
export type SaverChoice = "unsupported" | "operator" | "exporter";

export interface MemorySaver {
  readonly choice: SaverChoice;
  stop(): void;
}

export interface MemorySaverOptions {
  readonly execArgv?: readonly string[];
  readonly v8Version?: string;
  /** Told of each switch, with the utilization of the second that caused it. */
  readonly onSwitch?: (saving: boolean, utilization: number) => void;
  readonly policy?: SaverPolicy;
}

/** Starts switching the mode once a second, unless this V8 lacks it or the operator chose. */
export function startMemorySaver(options: MemorySaverOptions = {}): MemorySaver {
  const execArgv = options.execArgv ?? process.execArgv;
  if (!memorySaverSupported(options.v8Version)) return fixed("unsupported");
  if (v8FlagChosen("memory-saver-mode", execArgv) || v8FlagChosen("optimize-for-size", execArgv)) {
    return fixed("operator");
  }
  const policy = options.policy ?? SAVER_POLICY;
  let state = SAVER_START;
  setFlagsFromString("--memory-saver-mode");
  let last: EventLoopUtilization = performance.eventLoopUtilization();
  const timer = setInterval(() => {
    const now = performance.eventLoopUtilization();
    const { utilization } = performance.eventLoopUtilization(now, last);
    last = now;
    const next = nextSaverState(state, utilization, policy);
    if (next.saving !== state.saving) {
      setFlagsFromString(next.saving ? "--memory-saver-mode" : "--no-memory-saver-mode");
      options.onSwitch?.(next.saving, utilization);
    }
    state = next;
  }, 1000);
  timer.unref();
  return {
    choice: "exporter",
    stop: () => {
      clearInterval(timer);
    },
  };
}

function fixed(choice: Exclude<SaverChoice, "exporter">): MemorySaver {
  return { choice, stop: () => undefined };
}
