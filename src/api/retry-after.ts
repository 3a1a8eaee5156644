/**
 * The delay a `Retry-After` header asks for, in milliseconds, or undefined when the header is
 * absent or unreadable. Both RFC 9110 forms are read: delay-seconds (`120`) and an HTTP date
 * (`Wed, 21 Oct 2015 07:28:00 GMT`), measured against `referenceMs`: the answer's own `Date`
 * where it has one, so that our clock's skew does not count; a date in the past means 0.
 * The caller caps the result: a server must not be able to park the client for days.
 */
import { parseHttpDate } from "./server-clock.js";

export function parseRetryAfter(
  value: string | readonly string[] | undefined,
  referenceMs: number,
): number | undefined {
  const raw = (typeof value === "string" ? value : value?.[0])?.trim();
  if (raw === undefined || raw === "") return undefined;
  if (/^\d+$/.test(raw)) return Number(raw) * 1000;
  const at = parseHttpDate(raw);
  return at === undefined ? undefined : Math.max(0, at - referenceMs);
}
