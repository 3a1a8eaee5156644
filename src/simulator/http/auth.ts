import { timingSafeEqual } from "node:crypto";
import { ApiError } from "../errors.js";

/**
 * Checks `Authorization: Bearer <key>` (the scheme is case-insensitive) and throws a 401
 * otherwise. The comparison takes the same time wherever the keys differ.
 */
export function authenticate(header: string | undefined, apiKey: string): void {
  const match = /^Bearer\s+(.+)$/i.exec(header?.trim() ?? "");
  const presented = Buffer.from(match?.[1] ?? "", "utf8");
  const expected = Buffer.from(apiKey, "utf8");
  const ok = presented.length === expected.length && timingSafeEqual(presented, expected);
  if (ok) return;
  throw new ApiError(
    401,
    "unauthorized",
    header === undefined ? "missing Authorization header" : "invalid API key",
    { "WWW-Authenticate": "Bearer" },
  );
}
