/**
 * The status history of an operation scripted in the simulator (`sim.scriptOperation`), for
 * the common case: running at once, then one more status a while later.
 */

/** One status of a scripted history, reached `after_seconds` after the operation's creation. */
export interface Step {
  status: string;
  after_seconds: number;
  error?: string;
}

export type Steps = Step[];

/** running at 0, then `status` after `afterSeconds` (simulated), with `error` if given. */
export function runsThen(status: string, afterSeconds: number, error?: string): Steps {
  return [
    { status: "running", after_seconds: 0 },
    { status, after_seconds: afterSeconds, ...(error === undefined ? {} : { error }) },
  ];
}
