/**
 * How the daemon's process is set up to keep its resident set small (docs/performance.md,
 * memory): the V8 flags the daemon sets for itself at its start, each unless node's own flags
 * already choose it (an operator's choice is kept), and what node must be started with, flags
 * and environment.
 *
 * - `--heap-growing-percent=50`: on a machine with a few GiB of memory, V8 lets a heap grow up
 *   to four times its live size before collecting; a daemon that keeps polling never goes idle
 *   for V8 to give the pages back, so at 10,000 projects the exporter held 245 MiB of heap for
 *   64 MiB in use. A fixed factor of 1.5 keeps it near what it uses, for more frequent
 *   collections of a small heap.
 * - `--liftoff-only`: the HTTP client parses responses with a WebAssembly build of llhttp,
 *   which V8 would compile a second time with its optimising compiler, in a burst that added
 *   35 MiB to the process's peak resident set on Node 20, and 23 MiB of compiler memory on
 *   Node 24. Code of its baseline compiler parses a response as fast: the parser does not scan
 *   a body whose length it knows.
 *
 * V8 reads the growing factor at each full collection, so setting it once the process runs
 * takes effect. Node 20 and 22 also read `--liftoff-only` when the client first compiles the
 * parser, at its first request; Node 24 reads it only at its start, so it is also one of
 * `DAEMON_NODE_FLAGS`.
 */
import { setFlagsFromString } from "node:v8";

/**
 * Node flags the daemon is started with wherever the project starts it: the image's entrypoint,
 * the production smoke test and the benchmarks. They size the heap when it is created, which a
 * running process can no longer change.
 *
 * - `--max-semi-space-size=8`: V8 grows the young generation of a process that allocates as
 *   fast as a busy daemon to two semi-spaces of 16 MiB, 32 MiB that stay resident once
 *   touched. With two of 8 MiB the exporter watching 1,000 projects holds about 10 MiB less,
 *   and a scavenge copies at most half as much: the pauses of 13–15 ms that stalled the event
 *   loop during a rendering are gone. Smaller (4) saved 10 MiB more, but a catch-up of 1,000
 *   projects then cost a quarter more CPU: its pages outlived the young generation.
 * - `--liftoff-only` (above): Node 24, the image's runtime, takes it only here. Set by `run`
 *   once the process runs, it changes nothing there: the exporter watching 10 projects peaked
 *   at 109 MiB that way, and at 100 MiB started with it.
 */
export const DAEMON_NODE_FLAGS = ["--max-semi-space-size=8", "--liftoff-only"] as const;

/**
 * Environment the daemon is started with wherever the project starts it (the image, the
 * production smoke test, the benchmarks): glibc's allocator reads it when the process starts.
 *
 * - `MALLOC_ARENA_MAX=2`: glibc gives each thread that allocates at once an arena of its own,
 *   up to eight per core, and memory freed in an arena stays with it. Node 24's V8 compiles
 *   and collects on more background threads than Node 20's, and the exporter watching 1,000
 *   projects peaked at 159–163 MiB on Node 24, and at 144–151 with two arenas, with a catch-up
 *   as fast.
 * - `MALLOC_MMAP_THRESHOLD_=131072`: glibc maps a block of 128 KiB or more on its own and
 *   unmaps it when it is freed, but raises that size to the largest such block freed so far,
 *   so that later ones (a `/metrics` body of a few MiB, a rendering's buffers) are carved from
 *   its heap and stay resident after they are freed. Fixed at 128 KiB, they are given back: at
 *   1,000 projects on Node 24, with the memory saver, a peak of 114–119 MiB against 117–121.
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
