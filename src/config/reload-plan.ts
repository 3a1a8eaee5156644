/**
 * What a reload (SIGHUP) changes in a running exporter, as a pure decision: the settings that
 * can change while it runs are taken from the new configuration; every other setting keeps its
 * running value until the next restart, and is named (never with its value) so that the log
 * can say so.
 */
import type { Config } from "./schema.js";

/**
 * The settings a running exporter applies on reload: which projects it watches (with the single-key
 * settings; `accounts` waits for a restart), where alerts go and which it raises, the silences,
 * platform incidents, stuck thresholds, the log level, who may reach the HTTP server, and the
 * compute probe (`computes`; an account's own `accounts[].computes` waits for a restart with the
 * accounts).
 */
export const LIVE_SETTINGS: readonly (readonly string[])[] = [
  ["projects"],
  ["discoveryInterval"],
  ["discoveryGrace"],
  ["sinks"],
  ["silences"],
  ["incidents"],
  ["alerts", "cancelledIsFailure"],
  ["alerts", "retrying"],
  ["alerts", "recovered"],
  ["alerts", "link"],
  ["alerts", "statusPageUrl"],
  ["stuck"],
  ["log", "level"],
  ["web"],
  ["computes"],
];

export interface ReloadPlan {
  /** The configuration to run with: the running one, with the live settings of the new one. */
  readonly config: Config;
  /** Settings that differ in the new configuration but wait for a restart (`api.url`). */
  readonly restartNeeded: readonly string[];
}

export function planReload(running: Config, next: Config): ReloadPlan {
  let config: Config = running;
  // The accounts (their keys, addresses and limiters) wait for a restart, and so do the
  // single-key projects when the change is to or from accounts: they go together.
  const accountsChanged = !sameValue(running.accounts, next.accounts);
  for (const path of LIVE_SETTINGS) {
    if (accountsChanged && path[0] === "projects") continue;
    config = withValue(config, path, valueAt(next, path));
  }
  const restartNeeded = differences(config, next, []).map((path) => path.join("."));
  return { config, restartNeeded };
}

function valueAt(root: unknown, path: readonly string[]): unknown {
  let node = root;
  for (const key of path) node = isRecord(node) ? node[key] : undefined;
  return node;
}

/** A copy of `root` with `value` at `path` (undefined removes the key). */
function withValue<T>(root: T, path: readonly string[], value: unknown): T {
  const [key, ...rest] = path;
  if (key === undefined) return value as T;
  const node: Record<string, unknown> = isRecord(root) ? root : {};
  const next = withValue(node[key], rest, value);
  const others = Object.entries(node).filter(([name]) => name !== key);
  return Object.fromEntries(next === undefined ? others : [...others, [key, next]]) as T;
}

/**
 * The paths where `a` and `b` differ, down to settings (a list is compared whole, and a map of
 * user-chosen keys such as `stuck.actions` is named by its own path).
 */
function differences(a: unknown, b: unknown, path: readonly string[]): string[][] {
  if (isRecord(a) && isRecord(b) && path.length < 2) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    return [...keys].sort().flatMap((key) => differences(a[key], b[key], [...path, key]));
  }
  return sameValue(a, b) ? [] : [[...path]];
}

function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((item, i) => sameValue(item, b[i]));
  }
  if (isRecord(a) && isRecord(b)) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    return [...keys].every((key) => sameValue(a[key], b[key]));
  }
  return false;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
