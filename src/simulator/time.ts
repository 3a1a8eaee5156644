/**
 * Simulated time is kept as an integer count of microseconds since the Unix epoch (a plain
 * number: 2^53 µs is about 285 years). These helpers convert it to the two wire formats the API
 * uses: whole-second ISO timestamps on records and microsecond ISO timestamps as cursors.
 */

export const US_PER_MS = 1_000;
export const US_PER_SECOND = 1_000_000;

/** `2022-11-15T20:02:00Z`: the whole-second format of `created_at` and `updated_at`. */
export function toIsoSeconds(us: number): string {
  const seconds = Math.floor(us / US_PER_SECOND);
  return new Date(seconds * 1000).toISOString().slice(0, 19) + "Z";
}

/** `2022-12-07T00:45:05.262011Z`: the microsecond format of `pagination.cursor`. */
export function toIsoMicros(us: number): string {
  const seconds = Math.floor(us / US_PER_SECOND);
  const fraction = us - seconds * US_PER_SECOND;
  const base = new Date(seconds * 1000).toISOString().slice(0, 19);
  return `${base}.${String(fraction).padStart(6, "0")}Z`;
}

const ISO_MICROS = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,6}))?Z$/;

/**
 * Parses a UTC timestamp with up to six fractional digits back to microseconds, or returns
 * undefined for anything else (including impossible dates such as February 30th).
 */
export function parseIsoMicros(text: string): number | undefined {
  const match = ISO_MICROS.exec(text);
  const base = match?.[1];
  if (match === null || base === undefined) return undefined;
  const ms = Date.parse(`${base}Z`);
  if (Number.isNaN(ms) || new Date(ms).toISOString().slice(0, 19) !== base) return undefined;
  const fraction = Number((match[2] ?? "").padEnd(6, "0"));
  return ms * US_PER_MS + fraction;
}

export function dateToMicros(date: Date): number {
  return date.getTime() * US_PER_MS;
}

export function microsToDate(us: number): Date {
  return new Date(Math.floor(us / US_PER_MS));
}

export function secondsToMicros(seconds: number): number {
  return Math.round(seconds * US_PER_SECOND);
}
