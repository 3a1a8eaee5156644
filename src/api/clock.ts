/**
 * Time as the client sees it. Every wait (rate limiter, retry delay, operation polling) and every
 * duration goes through one `Clock`, so tests can substitute a virtual one and check timing
 * decisions without waiting for them.
 */
export interface Clock {
  /** Milliseconds since the Unix epoch (also used to read HTTP-date `Retry-After` values). */
  now(): number;
  /** Resolves after `ms` milliseconds; rejects with `signal.reason` if the signal aborts first. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** The wall clock and real timers. */
export const systemClock: Clock = {
  now: () => Date.now(),
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
