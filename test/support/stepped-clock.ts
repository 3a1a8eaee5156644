/**
 * A process clock whose wall time a test can step, as NTP, a resumed VM or an operator steps a
 * machine's clock, without touching the machine's: the monotonic clock and the timers stay the
 * system's, as they do when a real wall clock steps.
 */
import { systemClock, type Clock } from "../../src/clock.js";

export interface SteppedClock {
  readonly clock: Clock;
  /** Moves the wall clock by `ms` (negative: back). */
  step(ms: number): void;
}

export function steppedClock(): SteppedClock {
  let offsetMs = 0;
  return {
    clock: {
      wall: () => systemClock.wall() + offsetMs,
      monotonic: systemClock.monotonic,
      sleep: systemClock.sleep,
    },
    step: (ms) => {
      offsetMs += ms;
    },
  };
}
