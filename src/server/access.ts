/**
 * Who may read the server's pages, by the web configuration: basic-auth users with bcrypt
 * hashes, and client certificates when TLS asks for them. Checking a bcrypt hash costs tens of
 * milliseconds by design, so results are remembered (by a digest of user, password and hash,
 * never the password itself) and a scrape every few seconds costs one check, not one each time.
 */
import { createHash } from "node:crypto";
import type { IncomingMessage } from "node:http";
import type { TLSSocket } from "node:tls";
import bcrypt from "bcryptjs";
import type { WebSecurity } from "../config/index.js";

export type AccessDecision =
  | { readonly allowed: true }
  | { readonly allowed: false; readonly status: 401 | 403; readonly reason: string };

export interface AccessGuard {
  /** Whether this request may be answered; it never throws. */
  check(req: IncomingMessage): Promise<AccessDecision>;
}

const ALLOWED: AccessDecision = { allowed: true };
/** How many checked credentials are remembered. */
const REMEMBERED = 256;
/** Compared against when the user is unknown, so that an unknown user takes as long. */
const UNKNOWN_USER_HASH = "$2b$10$DO/CKb42SfDH9f3m511IlerJdLzJR.BhiUUdO/p4jL/RCSct5xGS.";

export function createAccessGuard(security: WebSecurity): AccessGuard {
  const remembered = new Map<string, boolean>();
  const clientAuth = security.tls?.clientAuth ?? "NoClientCert";

  async function passwordMatches(user: string, password: string): Promise<boolean> {
    const hash = security.users.get(user);
    const key = createHash("sha256")
      .update(`${user}\0${password}\0${hash ?? ""}`)
      .digest("hex");
    const known = remembered.get(key);
    if (known !== undefined) return known;
    const matches = await bcrypt.compare(password, hash ?? UNKNOWN_USER_HASH);
    const result = hash !== undefined && matches;
    if (remembered.size >= REMEMBERED) {
      const oldest = remembered.keys().next().value;
      if (oldest !== undefined) remembered.delete(oldest);
    }
    remembered.set(key, result);
    return result;
  }

  return {
    async check(req) {
      const socket = req.socket as Partial<TLSSocket>;
      if (clientAuth === "RequireAnyClientCert" || clientAuth === "VerifyClientCertIfGiven") {
        const cert = socket.getPeerCertificate?.();
        const given = cert !== undefined && Object.keys(cert).length > 0;
        if (clientAuth === "RequireAnyClientCert" && !given) {
          return { allowed: false, status: 403, reason: "a client certificate is required" };
        }
        if (clientAuth === "VerifyClientCertIfGiven" && given && socket.authorized !== true) {
          return { allowed: false, status: 403, reason: "the client certificate is not trusted" };
        }
      }
      if (security.users.size === 0) return ALLOWED;
      const credentials = basicCredentials(req.headers.authorization);
      if (credentials === undefined) {
        return { allowed: false, status: 401, reason: "authentication required" };
      }
      const ok = await passwordMatches(credentials.user, credentials.password).catch(() => false);
      return ok ? ALLOWED : { allowed: false, status: 401, reason: "wrong user name or password" };
    },
  };
}

/** `Authorization: Basic base64(user:password)`, or undefined when absent or malformed. */
export function basicCredentials(
  header: string | undefined,
): { user: string; password: string } | undefined {
  const match = /^Basic +([A-Za-z0-9+/=]+)$/i.exec(header ?? "");
  if (match?.[1] === undefined) return undefined;
  const decoded = Buffer.from(match[1], "base64").toString("utf8");
  const colon = decoded.indexOf(":");
  if (colon < 0) return undefined;
  return { user: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}
