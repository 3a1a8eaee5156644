/**
 * Waiting in tests: `sleep` for a pause the test means to take, `waitFor` for an observable
 * effect, polled until it shows (a test waits for what the code does, never for a fixed time;
 * the timeout is a safety net for a broken build, never the thing tested).
 */

export const sleep = (ms: number): Promise<void> =>
  new Promise<void>((resolve) => {
    setTimeout(resolve, Math.max(0, ms));
  });

/** What `waitFor` polls: done when it returns something other than undefined or false. */
export type Probe<T> = () => Promise<T | undefined | false> | T | undefined | false;

/**
 * Calls `probe` every `intervalMs` until it returns something other than undefined/false, and
 * returns that. A probe that throws counts as not yet. Gives up after `timeoutMs` with `what`
 * and the last value (or error) in the message.
 */
export async function waitFor<T>(
  what: string,
  probe: Probe<T>,
  timeoutMs = 20_000,
  intervalMs = 50,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value;
      last = value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${what} (last: ${String(last)})`,
      );
    }
    await sleep(intervalMs);
  }
}

/** `waitFor` with other defaults: for a suite that polls more often or gives up sooner. */
export function waitForWith(defaults: {
  readonly timeoutMs?: number;
  readonly intervalMs?: number;
}) {
  return <T>(
    what: string,
    probe: Probe<T>,
    timeoutMs = defaults.timeoutMs ?? 20_000,
    intervalMs = defaults.intervalMs ?? 50,
  ): Promise<T> => waitFor(what, probe, timeoutMs, intervalMs);
}

/** A flag background loops read; a method, so that no narrowing keeps an old value. */
export class Stop {
  #stopped = false;
  stop(): void {
    this.#stopped = true;
  }
  stopped(): boolean {
    return this.#stopped;
  }
}
