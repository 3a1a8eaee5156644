/**
 * What a collector's answer may say, cleared of the target's secrets before it is logged or kept:
 * a collector may echo a token back in the body of its refusal. The redaction is the one every
 * secret goes through (`config/redact.ts`); the secrets are the target's.
 */
import { createRedactor, safeDecode, type OtlpTarget } from "../config/index.js";

/** Fewest characters a word of a header must have to be a secret on its own (not `Bearer`). */
const MIN_TOKEN_LENGTH = 8;

/** `text` with the target's header values and the secrets of its URL replaced. */
export function withoutSecrets(text: string, target: OtlpTarget): string {
  const secrets: string[] = [];
  for (const value of Object.values(target.headers)) {
    // The token of "Bearer <token>" is a secret too, but not the scheme.
    secrets.push(value, ...value.split(/\s+/).filter((w) => w.length >= MIN_TOKEN_LENGTH));
  }
  // Not the path: a collector's (`/v1/traces`) holds no secret.
  const url = URL.parse(target.url);
  if (url !== null) {
    for (const part of [url.username, url.password]) secrets.push(part, safeDecode(part));
    secrets.push(url.search.slice(1), ...url.searchParams.values());
  }
  return createRedactor(secrets)(text);
}
