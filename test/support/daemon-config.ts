/**
 * The configuration file of a daemon a test spawns (`node dist/cli.js run --config FILE`),
 * built from a typed object and written as YAML. A test states the settings it is about; the
 * builder adds those every such test shares (the HTTP server on a random loopback port, debug
 * logs), each of which the test may override. The named settings below are the ones several
 * tests use alike.
 *
 *   await writeDaemonConfig(configFile, {
 *     api: { url: sim.apiUrl, ...UNTHROTTLED_API, timeout: 10 },
 *     projects: "all",
 *     state: { dir: stateDir },
 *     poll: { ...QUICK_POLL, jitter: 0 },
 *   });
 */
import { writeFile } from "node:fs/promises";
import { stringify } from "yaml";

/** A daemon's settings as its configuration file holds them (see docs/configuration.md). */
export interface DaemonConfig {
  /** The API's address (a simulator's `apiUrl`) and the client's settings; never the key. */
  readonly api: { readonly url: string } & Readonly<Record<string, unknown>>;
  readonly projects?: readonly string[] | "all";
  readonly state: { readonly dir: string } & Readonly<Record<string, unknown>>;
  readonly listen?: string;
  readonly poll?: Readonly<Record<string, unknown>>;
  readonly log?: Readonly<Record<string, unknown>>;
  readonly [setting: string]: unknown;
}

/** What the builder fills in: a test's own `listen` or `log` replaces them. */
export const DAEMON_DEFAULTS = {
  listen: "127.0.0.1:0",
  log: { level: "debug" },
} as const;

/**
 * The client's rate limit far above anything a test asks for: the simulator has none (or
 * injects its own 429s), and the client's should not stretch the polls.
 */
export const UNTHROTTLED_API = { requestsPerMinute: 600_000, burstPerSecond: 10_000 } as const;

/** A poll of every project twice a second, and no listing of endpoints. */
export const QUICK_POLL = { interval: 0.5, fastInterval: 0.5, endpointsInterval: 0 } as const;

/**
 * A day of history on a first start, read in small pages, a few a poll: a run that was killed
 * for a while comes back to a catch-up in segments.
 */
export const SMALL_PAGES = {
  backfill: "1d",
  maxPagesPerPoll: 2,
  pageLimit: 20,
  firstPageLimit: 5,
} as const;

/** Stuck thresholds far beyond any test (the simulated clock may lag the wall clock). */
export const NEVER_STUCK = { default: 86_400, actions: { start_compute: 86_400 } } as const;

/** `config` over `DAEMON_DEFAULTS`, as YAML. */
export function daemonConfigYaml(config: DaemonConfig): string {
  return stringify({ ...DAEMON_DEFAULTS, ...config });
}

/** Writes `daemonConfigYaml(config)` to `file`. */
export async function writeDaemonConfig(file: string, config: DaemonConfig): Promise<void> {
  await writeFile(file, daemonConfigYaml(config));
}
