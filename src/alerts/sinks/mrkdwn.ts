/**
 * Text helpers for Slack's mrkdwn. Slack asks for exactly three characters to be escaped (`&`,
 * `<`, `>`); everything else is literal. Limits are counted in UTF-16 code units, which is never
 * less than what Slack counts, and cuts never split an escape or a surrogate pair.
 */

const ELLIPSIS = "…";

/** Escapes Slack's three control characters. */
export function escapeMrkdwn(text: string): string {
  return text.replace(/[&<>]/g, (c) => (c === "&" ? "&amp;" : c === "<" ? "&lt;" : "&gt;"));
}

/** Escapes `text` and, when the result is longer than `max`, cuts it to fit with an ellipsis. */
export function escapeAndTruncate(text: string, max: number): string {
  const full = escapeMrkdwn(text);
  if (full.length <= max) return full;
  let out = "";
  for (const ch of text) {
    const escaped = escapeMrkdwn(ch);
    if (out.length + escaped.length > max - ELLIPSIS.length) break;
    out += escaped;
  }
  return out + ELLIPSIS;
}

/** Cuts plain text (no escaping: `plain_text` objects are literal) to at most `max` units. */
export function truncatePlain(text: string, max: number): string {
  if (text.length <= max) return text;
  let out = "";
  for (const ch of text) {
    if (out.length + ch.length > max - ELLIPSIS.length) break;
    out += ch;
  }
  return out + ELLIPSIS;
}

/**
 * A name beside its id in plain text, on one line: "Tenant Acme (proj-1)"; the id alone while
 * the name is unknown (or blank, or the id itself: a project created without a name is named
 * after its id).
 */
export function nameBesideId(name: string | undefined, id: string): string {
  const flat = flatName(name, id);
  return flat === undefined ? id : `${truncatePlain(flat, 100)} (${id})`;
}

/** A name on one line; undefined when absent, blank or the same as its id. */
export function flatName(name: string | undefined, id: string): string | undefined {
  const flat = name?.replace(/\s+/g, " ").trim();
  return flat === undefined || flat === "" || flat === id ? undefined : flat;
}

/**
 * A value as inline code: on one line, escaped, cut to `max` characters. A backtick would end
 * the span, so it becomes a look-alike (U+02CB). An empty value renders as a dash.
 */
export function inlineCode(value: string, max: number): string {
  const flat = value.replace(/`/g, "\u02cb").replace(/\s+/g, " ").trim();
  if (flat === "") return "—";
  return `\`${escapeAndTruncate(flat, max)}\``;
}

/**
 * A multi-line code block holding `text` (e.g. an operation's error), escaped and cut so the
 * whole block, fences included, takes at most `max` characters; undefined when not even a short
 * excerpt fits. Inside a block Slack applies no formatting, so `*`, `_` and `~` stay literal.
 */
export function codeBlock(text: string, max: number): string | undefined {
  const fence = "```";
  const room = max - 2 * fence.length;
  if (room < 16) return undefined;
  const body = text.replace(/`/g, "\u02cb").replace(/\r\n?/g, "\n").trim();
  return `${fence}${escapeAndTruncate(body === "" ? "(empty)" : body, room)}${fence}`;
}

/**
 * A mrkdwn link (`<url|label>`) for an http(s) URL, or undefined for any other scheme or a URL
 * longer than `max` once encoded. The characters that would end the link or break out of it are
 * percent-encoded and `&` is entity-encoded, which Slack decodes back.
 */
export function mrkdwnLink(url: string, label: string, max: number): string | undefined {
  if (!/^https?:\/\//i.test(url)) return undefined;
  const safe = url
    .replace(/\|/g, "%7C")
    .replace(/</g, "%3C")
    .replace(/>/g, "%3E")
    .replace(/\s/g, (c) => encodeURIComponent(c))
    .replace(/&/g, "&amp;");
  if (safe.length > max) return undefined;
  return `<${safe}|${escapeMrkdwn(label)}>`;
}

/** An ISO time as `2025-06-01 12:00:00 UTC`; an unreadable one is shown as given (escaped). */
export function formatTime(iso: string): string {
  const ms = Date.parse(iso);
  if (Number.isNaN(ms)) return escapeAndTruncate(iso, 40);
  return `${new Date(ms).toISOString().slice(0, 19).replace("T", " ")} UTC`;
}

/** A duration in seconds as `2d 3h`, `1h 2m`, `4m 5s`, `12s` (two units at most). */
export function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return "unknown";
  if (seconds > 0 && seconds < 1) return "<1s";
  const total = Math.round(seconds);
  const units: readonly (readonly [string, number])[] = [
    ["d", 86_400],
    ["h", 3_600],
    ["m", 60],
    ["s", 1],
  ];
  const parts: string[] = [];
  let rest = total;
  for (const [unit, size] of units) {
    const count = Math.floor(rest / size);
    rest -= count * size;
    if (count > 0 || parts.length > 0) parts.push(`${count}${unit}`);
    if (parts.length === 2) break;
  }
  const shown = parts.filter((p, i) => i === 0 || !p.startsWith("0"));
  return shown.length === 0 ? "0s" : shown.join(" ");
}
