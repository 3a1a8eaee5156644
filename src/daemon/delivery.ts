/**
 * Alert delivery: the notifier draining the watched projects' outboxes to the configured sinks
 * (none: it has nothing to do), and how long a project given up waits for a delivery under way.
 */
import { Notifier, createSinks, type NotifierObserver } from "../alerts/index.js";
import type { Clock } from "../clock.js";
import type { Config, ResolvedSink } from "../config/index.js";
import type { Logger } from "../logger.js";
import type { NameLookup } from "../sync/index.js";
import type { ProjectRoster } from "./project-roster.js";

export interface DeliveryInputs {
  /** The alert sinks with their secrets (see `resolveSinks`). */
  readonly sinks: readonly ResolvedSink[];
  readonly alerts: Config["alerts"];
  /** The watched projects, whose outboxes the notifier drains. */
  readonly roster: ProjectRoster;
  readonly logger: Logger;
  readonly clock: Clock;
  /** Hears the notifier (delivery metrics). */
  readonly observer?: NotifierObserver | undefined;
  /** Names beside ids, for the alerts sent. */
  readonly names?: NameLookup | undefined;
}

export class Delivery {
  readonly notifier: Notifier;
  readonly #roster: ProjectRoster;
  #sinks: readonly ResolvedSink[];

  constructor(inputs: DeliveryInputs) {
    this.#roster = inputs.roster;
    this.#sinks = inputs.sinks;
    this.notifier = new Notifier({
      sinks: createSinks(inputs.sinks, inputs.alerts),
      owner: (projectId) => inputs.roster.owner(projectId),
      projects: () => inputs.roster.owners(),
      logger: inputs.logger,
      clock: inputs.clock,
      names: inputs.names,
      ...(inputs.observer === undefined ? {} : { observer: inputs.observer }),
    });
  }

  /** The sinks delivered to now. */
  get sinks(): readonly ResolvedSink[] {
    return this.#sinks;
  }

  /** Delivers to `sinks` from now on (a reload); a delivery under way ends first. */
  async setSinks(sinks: readonly ResolvedSink[], alerts: Config["alerts"]): Promise<void> {
    await this.notifier.setSinks(createSinks(sinks, alerts));
    this.#sinks = sinks;
  }

  /** Resolves once nothing is in flight for a project given up (before its lease is released). */
  async drained(projectId: string): Promise<void> {
    await this.#roster.settled(projectId);
    // A delivery of the project's alerts chosen before it was dropped ends within its sink's
    // timeout, with its acknowledgement shortly after.
    await Promise.race([this.notifier.idle(), delay(deliveryTimeMs(this.#sinks))]);
  }
}

/** How long a delivery (and its acknowledgement) may take, by the slowest sink's timeout. */
function deliveryTimeMs(sinks: readonly ResolvedSink[]): number {
  return Math.max(0, ...sinks.map((s) => s.config.timeout * 1000)) + 2_000;
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => {
    setTimeout(resolve, ms).unref();
  });
}
