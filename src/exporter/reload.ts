/**
 * Reloads of the configuration while the exporter runs (SIGHUP): one at a time, each either
 * applied whole or refused with the running configuration kept. The outcome is logged and kept
 * for `pgcp_config_last_reload_successful`.
 */
import { ConfigError, type Settings } from "../config/index.js";
import type { Logger } from "../logger.js";
import { systemClock } from "../clock.js";

export type ReloadOutcome =
  | { readonly ok: true; readonly restartNeeded: readonly string[] }
  | { readonly ok: false; readonly problems: readonly string[] };

/** How the configuration was last loaded, as `pgcp_config_last_reload_*` shows it. */
export interface ConfigLoads {
  lastReloadSuccessful: boolean;
  /** Epoch milliseconds of the last successful load. */
  lastSuccessMs: number;
}

/** The loads before any reload: the start's, at `nowMs`. */
export function startLoads(nowMs: number): ConfigLoads {
  return { lastReloadSuccessful: true, lastSuccessMs: nowMs };
}

export interface ReloaderOptions {
  /** Kept up to date by the reloads (`startLoads` at first). */
  readonly loads: ConfigLoads;
  readonly logger: Logger;
  /** Applies the settings' live part; returns the changed settings that wait for a restart. */
  readonly apply: (next: Settings) => Promise<readonly string[]>;
  /** What the success line says of the configuration now running. */
  readonly describe: () => Readonly<Record<string, unknown>>;
  /** Called after every reload, whatever its outcome, before it is logged (the metrics show it). */
  readonly after: () => Promise<void>;
  readonly now?: () => number;
}

export interface Reloader {
  /** Reads the settings with `load` and applies them, after any reload still under way. */
  reload(load: () => Promise<Settings>): Promise<ReloadOutcome>;
}

export function createReloader(options: ReloaderOptions): Reloader {
  const { logger } = options;
  const now = options.now ?? systemClock.wall;
  const { loads } = options;
  let queue: Promise<unknown> = Promise.resolve();

  const once = async (load: () => Promise<Settings>): Promise<ReloadOutcome> => {
    let outcome: ReloadOutcome;
    try {
      outcome = { ok: true, restartNeeded: await options.apply(await load()) };
    } catch (error) {
      outcome = {
        ok: false,
        problems: error instanceof ConfigError ? [...error.problems] : [(error as Error).message],
      };
    }
    loads.lastReloadSuccessful = outcome.ok;
    if (outcome.ok) loads.lastSuccessMs = now();
    // The metrics show the outcome before it is logged: a scrape after the line agrees with it.
    await options.after();
    if (outcome.ok) {
      logger.info(options.describe(), "configuration reloaded");
      if (outcome.restartNeeded.length > 0) {
        logger.warn(
          { settings: outcome.restartNeeded },
          "these settings changed but take effect only after a restart; they keep their running values",
        );
      }
    } else {
      logger.error(
        { problems: outcome.problems },
        "configuration reload failed; the running configuration is kept",
      );
    }
    return outcome;
  };

  return {
    reload(load) {
      const result = queue.then(() => once(load));
      queue = result;
      return result;
    },
  };
}
