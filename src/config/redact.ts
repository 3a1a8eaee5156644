/**
 * A last line of defence for secrets: details are built from status codes and error codes only,
 * but anything a sink, a collector or the state store hands back passes through a redactor that
 * knows its secrets anyway. Here, beside the secrets' loading, so that every part that shows
 * something can use it.
 */

/** Pieces shorter than this are not treated as secrets (they would mangle ordinary words). */
const MIN_SECRET_LENGTH = 6;

export type Redactor = (text: string) => string;

/**
 * Replaces every occurrence (any case) of any of `secrets` with `[redacted]`: the value as a
 * whole, where it stands on its own, not a word that merely contains it (a path segment
 * `redirect` does not turn "redirects are not followed" into "[redacted]s are not followed").
 */
export function createRedactor(secrets: readonly string[]): Redactor {
  const pieces = [...new Set(secrets.filter((s) => s.length >= MIN_SECRET_LENGTH))].sort(
    (a, b) => b.length - a.length,
  );
  if (pieces.length === 0) return (text) => text;
  const pattern = new RegExp(
    `(?<![A-Za-z0-9_])(?:${pieces.map(escapeRegExp).join("|")})(?![A-Za-z0-9_])`,
    "gi",
  );
  return (text) => text.replace(pattern, "[redacted]");
}

/**
 * The secret parts of a URL: the whole of it, its path and query, each path segment and query
 * value, and any user or password. (A Slack webhook URL is a bearer credential: its path is the
 * token.)
 */
export function urlSecrets(url: URL): string[] {
  const pieces = [url.href, url.pathname + url.search, url.pathname, url.search];
  pieces.push(...url.pathname.split("/").map(safeDecode));
  for (const [key, value] of url.searchParams) pieces.push(key, value);
  if (url.username !== "") pieces.push(url.username, safeDecode(url.username));
  if (url.password !== "") pieces.push(url.password, safeDecode(url.password));
  return pieces;
}

/** `text` percent-decoded, or as it is when it is not valid percent-encoding. */
export function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
