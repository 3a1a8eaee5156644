/**
 * Helpers for driving a scheduler by hand: jobs answered from a table the test changes, and a
 * monotonic clock the test moves a tick at a time, so that hours of backoff are checked in
 * milliseconds.
 */
import type { JobOutcome, Scheduler } from "../../src/scheduler/index.js";

/** Jobs answered from a table the test changes; each poll is recorded with the clock's time. */
export function scriptedJobs(clock: { now: number }) {
  const answers = new Map<string, JobOutcome>();
  const polls: [string, number][] = [];
  const jobs = {
    poll: (projectId: string) => {
      polls.push([projectId, clock.now]);
      const outcome = answers.get(projectId) ?? { answered: true };
      return Promise.resolve({ requests: 1, open: false, ...outcome });
    },
    listEndpoints: () => Promise.resolve(undefined),
  };
  /** When the project was polled, in order. */
  const of = (id: string) => polls.filter(([p]) => p === id).map(([, at]) => at);
  return { jobs, answers, polls, of };
}

/** Moves the test's clock in ticks of one second, letting each tick's jobs finish. */
export async function run(s: Scheduler, clock: { now: number }, seconds: number): Promise<void> {
  for (let i = 0; i < seconds; i++) {
    clock.now += 1000;
    s.tick();
    await s.drain();
  }
}
