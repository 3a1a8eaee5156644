/**
 * The delay a `Retry-After` header asks for, in milliseconds, or undefined when the header is
 * absent or unreadable. Both RFC 9110 forms are read: delay-seconds (`120`) and an HTTP date
 * (`Wed, 21 Oct 2015 07:28:00 GMT`, measured against `nowMs`; a date in the past means 0).
 * The caller caps the result: a server must not be able to park the client for days.
 */
export function parseRetryAfter(
  value: string | readonly string[] | undefined,
  nowMs: number,
): number | undefined {
  const raw = (typeof value === "string" ? value : value?.[0])?.trim();
  if (raw === undefined || raw === "") return undefined;
  if (/^\d+$/.test(raw)) return Number(raw) * 1000;
  // Date.parse reads many shapes ("1", "-1", "2020"): only accept what starts like an HTTP
  // date, i.e. with a day name (IMF-fixdate, RFC 850 and asctime all do).
  if (!/^[A-Za-z]{3,9},? /.test(raw)) return undefined;
  // HTTP dates are always GMT, but the asctime form does not say so and would parse as local.
  const at = Date.parse(/GMT$/i.test(raw) ? raw : `${raw} GMT`);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - nowMs);
}
