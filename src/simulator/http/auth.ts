import { ApiError } from "../errors.js";
import type { KeyOwner } from "../model/accounts.js";

/**
 * Checks `Authorization: Bearer <key>` (the scheme is case-insensitive) against the known keys
 * and answers the key's owner, or throws a 401. Keys are looked up by digest (see Accounts),
 * so the time taken does not depend on where a wrong key differs from a right one.
 */
export function authenticate(
  header: string | undefined,
  ownerOf: (key: string) => KeyOwner | undefined,
): KeyOwner {
  const match = /^Bearer\s+(.+)$/i.exec(header?.trim() ?? "");
  const owner = match?.[1] === undefined ? undefined : ownerOf(match[1]);
  if (owner !== undefined) return owner;
  throw new ApiError(
    401,
    "unauthorized",
    header === undefined ? "missing Authorization header" : "invalid API key",
    { "WWW-Authenticate": "Bearer" },
  );
}
