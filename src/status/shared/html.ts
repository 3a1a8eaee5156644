/**
 * The HTML pieces every section of the status page is written with: escaping (every dynamic value
 * goes through `escapeHtml`), times and durations, counted nouns, and a name from outside beside
 * its id.
 */

/** Escapes text for HTML element content and quoted attribute values. */
export function escapeHtml(value: string | number): string {
  return String(value).replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c);
}

const ESCAPES: Readonly<Record<string, string>> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

/** `2025-01-01 00:00:05Z`, or an em dash for a time that is not one. */
export function formatTime(ms: number): string {
  if (!Number.isFinite(ms)) return "—";
  const date = new Date(ms);
  if (Number.isNaN(date.getTime())) return "—";
  return date
    .toISOString()
    .replace("T", " ")
    .replace(/\.\d+Z$/, "Z");
}

/** A short duration: `4 s`, `12 min`, `3 h 5 min`, `2 d 4 h`. */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms)) return "—";
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s} s`;
  const min = Math.floor(s / 60);
  if (min < 60) return `${min} min`;
  const h = Math.floor(min / 60);
  if (h < 48) return min % 60 === 0 ? `${h} h` : `${h} h ${min % 60} min`;
  const d = Math.floor(h / 24);
  return h % 24 === 0 ? `${d} d` : `${d} d ${h % 24} h`;
}

/** A time as a `<time>` element, or an em dash for a time that is not one. */
export function time(ms: number): string {
  if (!Number.isFinite(ms)) return "—";
  const iso = new Date(ms).toISOString();
  return `<time datetime="${escapeHtml(iso)}">${escapeHtml(formatTime(ms))}</time>`;
}

/** A time and how long ago it was. */
export function timeAgo(ms: number, nowMs: number): string {
  if (!Number.isFinite(ms)) return "—";
  const ago = nowMs - ms;
  const age = ago < 0 ? "in the future" : `${formatDuration(ago)} ago`;
  return `${time(ms)} <span class="muted">(${escapeHtml(age)})</span>`;
}

export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** A name from outside beside its id (the id alone while the name is unknown). */
export function named(
  name: string | undefined,
  id: string,
  nameClass: string,
  idClass = "",
): string {
  const code = `<code${idClass === "" ? "" : ` class="${idClass}"`}>${escapeHtml(id)}</code>`;
  return name === undefined
    ? code
    : `<span class="${nameClass}">${escapeHtml(name)}</span> ${code}`;
}
