import { EventQueue } from "./event-queue.js";

/**
 * Simulated time and the events due in it. `nowUs` only moves forward: `runUntil` fires every
 * event due up to a target in time order, with `nowUs` set to each event's own time while it
 * runs, so records created by an event carry the instant the event was due, not the instant
 * the simulator noticed it.
 */
export class Scheduler {
  private readonly queue = new EventQueue();
  private current: number;

  constructor(startUs: number) {
    this.current = startUs;
  }

  get nowUs(): number {
    return this.current;
  }

  /** Schedules `run` at `atUs` (at the current time if that is already past). */
  at(atUs: number, run: () => void): void {
    this.queue.push(Math.max(atUs, this.current), run);
  }

  after(delayUs: number, run: () => void): void {
    this.at(this.current + delayUs, run);
  }

  /** Fires every event due at or before `targetUs`, then moves the time to `targetUs`. */
  runUntil(targetUs: number): void {
    for (;;) {
      const next = this.queue.peekTime();
      if (next === undefined || next > targetUs) break;
      const event = this.queue.pop();
      if (event === undefined) break;
      this.current = Math.max(this.current, event.atUs);
      event.run();
    }
    this.current = Math.max(this.current, targetUs);
  }
}
