/**
 * The daemon's components (src/daemon/component.ts): started in their declared order, stopped
 * in the reverse, and a start that fails stops what it started, so that the process can exit.
 */
import { describe, expect, it } from "vitest";
import { Lifecycle, type Component } from "../../src/daemon/component.js";
import { createLogger } from "../../src/logger.js";

const logger = createLogger("silent");

/** Components that write what happens to them into `events`. */
function recorded(events: string[], names: readonly string[], failing?: string): Component[] {
  return names.map((name) => ({
    name,
    start: async () => {
      await Promise.resolve();
      events.push(`start ${name}`);
      if (name === failing) throw new Error(`${name} cannot start`);
    },
    stop: () => {
      events.push(`stop ${name}`);
    },
  }));
}

describe("the daemon's lifecycle", () => {
  it("starts in order, stops in reverse, and stops once", async () => {
    const events: string[] = [];
    const lifecycle = new Lifecycle(recorded(events, ["store", "leases", "polls"]), logger);
    await lifecycle.start();
    await lifecycle.stop();
    await lifecycle.stop();
    expect(events).toEqual([
      "start store",
      "start leases",
      "start polls",
      "stop polls",
      "stop leases",
      "stop store",
    ]);
  });

  it("stops what started when a start fails, and throws its failure", async () => {
    const events: string[] = [];
    const lifecycle = new Lifecycle(
      recorded(events, ["store", "server", "polls"], "server"),
      logger,
    );
    await expect(lifecycle.start()).rejects.toThrow("server cannot start");
    expect(events).toEqual(["start store", "start server", "stop server", "stop store"]);
  });

  it("stops every component even when one fails to stop", async () => {
    const events: string[] = [];
    const components: Component[] = [
      ...recorded(events, ["store"]),
      {
        name: "notifier",
        stop: () => {
          throw new Error("stuck");
        },
      },
      ...recorded(events, ["polls"]),
    ];
    const lifecycle = new Lifecycle(components, logger);
    await lifecycle.start();
    await lifecycle.stop();
    expect(events).toEqual(["start store", "start polls", "stop polls", "stop store"]);
  });
});
