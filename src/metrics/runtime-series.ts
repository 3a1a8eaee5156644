/**
 * Families read from the running process when a rendering is built: the scheduler's intervals
 * and stretch, the rate limiter's tokens, the configuration's last reload and the build.
 */
import type { Lane } from "../scheduler/budget.js";
import type { Projections } from "./projected-family.js";

/** Every lane; a lane added to the scheduler is a compile error here until it is listed. */
const LANES = Object.keys({ base: true, fast: true } satisfies Record<Lane, true>) as Lane[];

export const runtimeProjections = {
  *pgcp_scheduler_poll_interval_seconds({ runtime }) {
    const scheduler = runtime.scheduler?.();
    if (scheduler === undefined) return;
    for (const lane of LANES) {
      yield { labels: { lane }, value: scheduler.effectiveIntervalSeconds(lane) };
    }
  },

  *pgcp_scheduler_interval_stretch_ratio({ runtime }) {
    const scheduler = runtime.scheduler?.();
    if (scheduler !== undefined) yield { labels: {}, value: scheduler.budget.stretch };
  },

  *pgcp_api_rate_limit_tokens({ runtime }) {
    const tokens = runtime.limiterTokens?.();
    if (tokens !== undefined) yield { labels: {}, value: tokens };
  },

  *pgcp_config_last_reload_successful({ runtime }) {
    const loads = runtime.configLoads?.();
    if (loads !== undefined) yield { labels: {}, value: loads.lastReloadSuccessful ? 1 : 0 };
  },

  *pgcp_config_last_reload_success_timestamp_seconds({ runtime }) {
    const loads = runtime.configLoads?.();
    if (loads !== undefined) yield { labels: {}, value: loads.lastSuccessMs / 1000 };
  },

  *pgcp_build_info({ runtime }) {
    yield {
      labels: {
        version: runtime.version,
        revision: runtime.revision ?? "",
        node_version: process.versions.node,
      },
      value: 1,
    };
  },
} satisfies Partial<Projections>;
