import { US_PER_MS, secondsToMicros } from "./time.js";

export type ClockMode = "real" | "manual";

/**
 * Where simulated time should be. A `real` clock follows the wall clock (offset so that it
 * starts at the chosen start time), `speed` simulated seconds to each wall-clock second; a
 * `manual` clock stands still until `advance` is called.
 */
export interface Clock {
  readonly mode: ClockMode;
  /** The simulated time, in microseconds, that pending events should be settled up to. */
  targetUs(): number;
  /** Moves a manual clock forward. */
  advance(seconds: number): void;
}

class ManualClockOnlyError extends Error {
  constructor() {
    super("the clock follows wall time; only a manual clock can be advanced");
  }
}

export function createClock(
  mode: ClockMode,
  startUs: number,
  wallNowMs = Date.now,
  speed = 1,
): Clock {
  if (!(speed > 0 && Number.isFinite(speed))) {
    throw new RangeError("speed must be a positive number");
  }
  if (mode === "manual") {
    if (speed !== 1) throw new RangeError("speed applies to the real clock only");
    let target = startUs;
    return {
      mode,
      targetUs: () => target,
      advance: (seconds) => {
        if (!(seconds >= 0 && Number.isFinite(seconds))) {
          throw new RangeError("a clock advances by a finite, non-negative number of seconds");
        }
        target += secondsToMicros(seconds);
      },
    };
  }
  const wallStartMs = wallNowMs();
  return {
    mode,
    targetUs: () => startUs + (wallNowMs() - wallStartMs) * US_PER_MS * speed,
    advance: () => {
      throw new ManualClockOnlyError();
    },
  };
}
