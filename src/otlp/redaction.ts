/**
 * What a collector's answer may say, cleared of the target's secrets before it is logged or kept:
 * a collector may echo a token back in the body of its refusal.
 */
import type { OtlpTarget } from "../config/index.js";

/** `text` with the target's header values and the secrets of its URL replaced. */
export function withoutSecrets(text: string, target: OtlpTarget): string {
  const secrets = new Set<string>();
  const add = (value: string) => {
    if (value.length >= 4) secrets.add(value);
    // The token of "Bearer <token>" is a secret too, but not a short word such as the scheme.
    for (const part of value.split(/\s+/)) if (part.length >= 8) secrets.add(part);
  };
  for (const value of Object.values(target.headers)) add(value);
  const url = URL.parse(target.url);
  if (url !== null) {
    for (const part of [url.username, url.password, url.search.slice(1)]) {
      add(part);
      add(decoded(part));
    }
    for (const value of url.searchParams.values()) add(value);
  }
  let out = text;
  // Longest first, so that a whole value goes before its parts.
  for (const secret of [...secrets].sort((a, b) => b.length - a.length)) {
    out = out.split(secret).join("[redacted]");
  }
  return out;
}

function decoded(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
