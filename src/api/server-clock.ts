/**
 * The API's own clock, read from the `Date` header of its answers (RFC 9110 requires an origin
 * server with a clock to send one). How long an operation has been open is the API's "now"
 * minus the API's `created_at`: both from one clock, so skew between our clock and the API's,
 * or a step of ours, changes nothing. Between answers the API's time moves on by our monotonic
 * clock. The header has whole seconds, so the estimate trails the API by less than a second:
 * a late stuck alert by that much, never an early one.
 */
import type { IncomingHttpHeaders } from "node:http";

/** An IMF-fixdate (or the obsolete forms) as epoch ms; undefined when absent or unreadable. */
export function parseHttpDate(value: string | readonly string[] | undefined): number | undefined {
  const raw = (typeof value === "string" ? value : value?.[0])?.trim();
  // Date.parse reads many shapes ("1", "2020"): only what starts like an HTTP date, with a day
  // name (IMF-fixdate, RFC 850 and asctime all do).
  if (raw === undefined || !/^[A-Za-z]{3,9},? /.test(raw)) return undefined;
  // HTTP dates are always GMT, but the asctime form does not say so and would parse as local.
  const ms = Date.parse(/GMT$/i.test(raw) ? raw : `${raw} GMT`);
  return Number.isNaN(ms) ? undefined : ms;
}

export class ServerClock {
  #sample: { readonly serverMs: number; readonly monotonicMs: number } | undefined;

  /** Takes the time an answer's `Date` header gives, received at `monotonicMs`. */
  observe(headers: IncomingHttpHeaders, monotonicMs: number): number | undefined {
    const serverMs = parseHttpDate(headers.date);
    if (serverMs !== undefined) this.#sample = { serverMs, monotonicMs };
    return serverMs;
  }

  /** The API's time now (epoch ms), or undefined before any answer carried a `Date` header. */
  now(monotonicMs: number): number | undefined {
    const sample = this.#sample;
    return sample === undefined ? undefined : sample.serverMs + (monotonicMs - sample.monotonicMs);
  }
}
