/** The monitor's settings from a validated configuration and its resolved connections. */
import type { Config, ResolvedComputes } from "../config/index.js";
import type { MonitorSettings } from "./monitor.js";

export function monitorSettings(config: Config, computes: ResolvedComputes): MonitorSettings {
  const c = config.computes;
  const connections = new Map([...computes.accounts].filter(([, conn]) => conn !== undefined));
  return {
    connections,
    intervalMs: c.interval * 1000,
    timeoutMs: c.timeout * 1000,
    concurrency: c.concurrency,
    ignoreUsers: c.ignoreUsers,
    ignoreApplications: c.ignoreApplications,
    advice: {
      warmupMs: c.advice.warmup * 1000,
      windowMs: c.advice.window * 1000,
      hitRatio: c.advice.hitRatio,
      connectionsShare: c.advice.connections,
    },
  };
}
