/**
 * The parts the daemon runs, each with a lifecycle: started in one declared order, stopped in
 * the reverse, and a reload applied to each in the same order. A part owns its timers: they
 * start with it and stop with it.
 */
import type { Config, ResolvedComputes, ResolvedSink } from "../config/index.js";
import { errorFields, type Logger } from "../logger.js";

/** A reloaded configuration with what it resolves to (the sinks' and computes' secrets). */
export interface LiveConfig {
  readonly config: Config;
  readonly sinks: readonly ResolvedSink[];
  readonly computes: ResolvedComputes;
}

export interface Component {
  /** What the part is, for the logs. */
  readonly name: string;
  start?(): unknown;
  /** Stops its timers and waits for its work under way. */
  stop?(): unknown;
  /** Takes a reload's settings; work under way finishes under the settings it started with. */
  applyConfig?(live: LiveConfig): unknown;
}

/** Components run in their declared order. */
export class Lifecycle {
  /** How many of the components have been started (a prefix of the list). */
  #started = 0;

  constructor(
    private readonly components: readonly Component[],
    private readonly logger: Logger,
  ) {}

  /**
   * Starts each component in order. When one fails, it and those started before it are stopped
   * (in reverse) and the failure is thrown.
   */
  async start(): Promise<void> {
    for (const component of this.components.slice(this.#started)) {
      this.#started += 1;
      try {
        await component.start?.();
      } catch (error) {
        await this.stop();
        throw error;
      }
    }
  }

  /**
   * Stops the started components in reverse order, each even when one before it failed (the
   * failure is logged); once stopped, stopping again does nothing.
   */
  async stop(): Promise<void> {
    while (this.#started > 0) {
      this.#started -= 1;
      const component = this.components[this.#started];
      try {
        await component?.stop?.();
      } catch (error) {
        this.logger.error(
          { component: component?.name, ...errorFields(error) },
          "a part of the daemon failed to stop",
        );
      }
    }
  }
}
