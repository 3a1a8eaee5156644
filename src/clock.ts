/**
 * The process's two clocks. The monotonic clock measures every wait and duration (due times,
 * the token bucket, backoff, deadlines, grouping windows): it never steps. The wall clock is
 * for what people read, for calendar rules (cron silences) and for times stored to be read
 * again after a restart: NTP, a resumed VM or an operator may step it either way at any time.
 * Everything in the exporter reads time through a `Clock`, so that tests can step the wall
 * clock of one exporter without touching the machine's.
 */
export interface Clock {
  /** Wall-clock time in milliseconds since the Unix epoch. May step in either direction. */
  readonly wall: () => number;
  /** Monotonic time in milliseconds from an arbitrary origin. Never goes back. */
  readonly monotonic: () => number;
  /**
   * Resolves after `ms` milliseconds of monotonic time; rejects with `signal.reason` if the
   * signal aborts first.
   */
  readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
}

/** The machine's clocks and Node's timers (which run on the monotonic clock). */
export const systemClock: Clock = {
  // eslint-disable-next-line no-restricted-properties -- the one place the wall clock is read
  wall: () => Date.now(),
  // eslint-disable-next-line no-restricted-properties -- the one place the monotonic clock is read
  monotonic: () => performance.now(),
  sleep: sleepFor,
};

function sleepFor(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal?.aborted === true) {
      reject(abortReason(signal));
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(abortReason(signal));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * The reason an aborted signal carries, as an Error. Callers abort with `controller.abort()`
 * (a DOMException `AbortError`) or with their own reason; either is what they get back.
 */
export function abortReason(signal: AbortSignal | undefined): Error {
  const reason: unknown = signal?.reason;
  if (reason instanceof Error) return reason;
  return new DOMException("The operation was aborted", "AbortError");
}
