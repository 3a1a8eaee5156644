/**
 * Families read from the running process when a rendering is built: each account's scheduler
 * (whether its key is accepted, projects, intervals and stretch) and rate limiter's tokens, the configuration's last reload and the build.
 */
import type { Lane } from "../scheduler/budget.js";
import type { Projections } from "./projected-family.js";

/** Every lane; a lane added to the scheduler is a compile error here until it is listed. */
const LANES = Object.keys({ base: true, fast: true } satisfies Record<Lane, true>) as Lane[];

export const runtimeProjections = {
  *pgcp_account_up({ runtime }) {
    for (const account of runtime.accounts?.() ?? []) {
      yield {
        labels: { account: account.name },
        value: account.keyRefusal() === undefined ? 1 : 0,
      };
    }
  },

  *pgcp_scheduler_projects({ runtime }) {
    for (const account of runtime.accounts?.() ?? []) {
      yield { labels: { account: account.name }, value: account.projects().length };
    }
  },

  *pgcp_scheduler_poll_interval_seconds({ runtime }) {
    for (const { name, scheduler } of runtime.accounts?.() ?? []) {
      for (const lane of LANES) {
        yield { labels: { account: name, lane }, value: scheduler.effectiveIntervalSeconds(lane) };
      }
    }
  },

  *pgcp_scheduler_interval_stretch_ratio({ runtime }) {
    for (const { name, scheduler } of runtime.accounts?.() ?? []) {
      yield { labels: { account: name }, value: scheduler.budget.stretch };
    }
  },

  *pgcp_api_rate_limit_tokens({ runtime }) {
    for (const { name, client } of runtime.accounts?.() ?? []) {
      yield { labels: { account: name }, value: client.limiterStats().tokensRemaining };
    }
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
