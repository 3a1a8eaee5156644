/**
 * How the daemon's process is set up to keep its resident set small: the V8 flags the daemon
 * sets for itself at its start (each unless node's own flags already choose it: an operator's
 * choice is kept), and the flags and environment node must be started with. What each does and
 * what it saves: docs/performance.md#memory.
 *
 * - `--heap-growing-percent=50`: a daemon that keeps polling is never idle for V8 to give heap
 *   pages back, so V8's default lets its heap grow to several times what it holds.
 * - `--liftoff-only`: compiles the HTTP client's WebAssembly parser once, with V8's baseline
 *   compiler, rather than again with the optimising one in a burst of memory; parsing is as fast.
 *
 * V8 reads the growing factor at each full collection, so setting it here takes effect. Node 20
 * and 22 read `--liftoff-only` when the parser is first compiled; Node 24 only at its start, so
 * it is also one of `DAEMON_NODE_FLAGS`.
 */
import { setFlagsFromString } from "node:v8";

/**
 * Node flags the daemon is started with wherever the project starts it (the image's entrypoint,
 * the production smoke test, the benchmarks): node takes them only at its start.
 *
 * - `--max-semi-space-size=8`: a smaller young generation than V8 gives a busy process, so less
 *   stays resident and a scavenge is short enough not to stall a rendering. Smaller still would
 *   make a catch-up of many projects dearer: its pages would outlive the young generation.
 * - `--liftoff-only` (above): Node 24, the image's runtime, takes it only here.
 */
export const DAEMON_NODE_FLAGS = ["--max-semi-space-size=8", "--liftoff-only"] as const;

/**
 * Environment the daemon is started with wherever the project starts it (the image, the
 * production smoke test, the benchmarks): glibc's allocator reads it when the process starts.
 *
 * - `MALLOC_ARENA_MAX=2`: glibc would give each thread allocating at once an arena of its own,
 *   keeping what is freed in it; Node 24's V8 allocates on many background threads.
 * - `MALLOC_MMAP_THRESHOLD_=131072`: blocks of 128 KiB and more (a `/metrics` body, a rendering's
 *   buffers) are mapped on their own and given back when freed; by default glibc raises that size
 *   to the largest block freed so far and keeps later ones resident in its heap.
 */
export const DAEMON_ENVIRONMENT = {
  MALLOC_ARENA_MAX: "2",
  MALLOC_MMAP_THRESHOLD_: "131072",
} as const satisfies Readonly<Record<string, string>>;

/** The flags, without their `--`: a name, and a value where the flag takes one. */
export const DAEMON_V8_FLAGS = [
  { name: "heap-growing-percent", value: "50" },
  { name: "liftoff-only" },
] as const satisfies readonly { readonly name: string; readonly value?: string }[];

export type DaemonV8Flag = (typeof DAEMON_V8_FLAGS)[number]["name"];

/** Who chose a flag: node's flags (kept as they are), or the exporter, which set `text`. */
export type V8FlagChoice =
  | { readonly flag: DaemonV8Flag; readonly chosenBy: "operator" }
  | { readonly flag: DaemonV8Flag; readonly chosenBy: "exporter"; readonly text: string };

/**
 * Whether node's own flags (`process.execArgv`) choose `name`: the flag in either spelling
 * (dashes or underscores), with or without a value, or switched off (`--no-`, `--no`).
 */
export function v8FlagChosen(name: string, execArgv: readonly string[]): boolean {
  const spelled = name.replace(/-/g, "[-_]");
  const pattern = new RegExp(`^--(?:no[-_]?)?${spelled}(=|$)`);
  return execArgv.some((flag) => pattern.test(flag));
}

/** Sets each of `DAEMON_V8_FLAGS` for this process that node's flags do not already choose. */
export function setDaemonV8Flags(
  execArgv: readonly string[] = process.execArgv,
): readonly V8FlagChoice[] {
  return DAEMON_V8_FLAGS.map((flag): V8FlagChoice => {
    if (v8FlagChosen(flag.name, execArgv)) return { flag: flag.name, chosenBy: "operator" };
    const text = "value" in flag ? `--${flag.name}=${flag.value}` : `--${flag.name}`;
    setFlagsFromString(text);
    return { flag: flag.name, chosenBy: "exporter", text };
  });
}
