/**
 * The operations list's cursors. The API calls them opaque; the seed and the real API send the
 * microsecond-precision creation time of a page's last record, which orders them. A cursor of
 * another shape reads as undefined, and the checks that need an order then pass it by.
 */

/** A cursor as microseconds since the epoch, or undefined when it is not a timestamp. */
export function cursorMicros(cursor: string): bigint | undefined {
  const match = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,6}))?Z$/.exec(cursor);
  if (match === null) return undefined;
  const whole = Date.parse(`${match[1] ?? ""}Z`);
  if (Number.isNaN(whole)) return undefined;
  return BigInt(whole) * 1000n + BigInt((match[2] ?? "").padEnd(6, "0"));
}
