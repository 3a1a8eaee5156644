/**
 * A simulator's clock kept moving in small steps while a long test runs (so that its traffic
 * keeps coming), until the test freezes it to compare with the truth.
 */
import type { TestSimulator } from "./simulator.js";
import { sleep } from "./wait.js";

export interface ClockSteps {
  /** Simulated seconds of the next step (rounded to the millisecond). */
  readonly seconds: () => number;
  /** Wall-clock pause after it, in ms. */
  readonly pauseMs: () => number;
}

/** Starts the steps; the function returned stops them and resolves once the last one is done. */
export function keepClockMoving(sim: TestSimulator, steps: ClockSteps): () => Promise<void> {
  const clock = { stopped: false };
  const loop = (async () => {
    while (!clock.stopped) {
      sim.simulator.advance(Math.round(steps.seconds() * 1000) / 1000);
      await sleep(steps.pauseMs());
    }
  })();
  return async () => {
    clock.stopped = true;
    await loop;
  };
}
