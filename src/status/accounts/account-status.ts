/**
 * The accounts as the page shows them: what it reads of each (the daemon's `DaemonAccount`),
 * its row (projects, request budget, the API's refusal of its key or of its base URL), and the
 * accounts whose project discovery failed.
 */
import { displayUrl } from "../../config/display-url.js";
import { messageOf, type Clean } from "../shared/text.js";

/** An account as the page reads it: the daemon's `DaemonAccount` satisfies it. */
export interface AccountSource {
  readonly name: string;
  readonly url: string;
  readonly scheduler: {
    readonly budget: { readonly stretch: number };
    tierIntervalSeconds(tier: "fast" | "active" | "idle"): number;
  };
  readonly client: { limiterStats(): { readonly tokensRemaining: number } };
  projects(): readonly string[];
  /** While the API refuses the account's key: since when (epoch ms), and what it said. */
  keyRefusal(): { readonly sinceMs: number; readonly message: string } | undefined;
  /** While the API answers 404 at the account's root (its base URL is wrong): since when. */
  wrongBaseUrl?(): { readonly sinceMs: number } | undefined;
  /** The projects polled with backoff now, by id: why, and when the next try is (epoch ms). */
  projectBackoffs?(): ReadonlyMap<string, ProjectBackoffView>;
}

/** A project polled with backoff instead of at its interval: why, and when it is tried next. */
export interface ProjectBackoffView {
  /** `refused` (404, 403), or how its polls fail: `server_error`, `timeout`, `invalid_response`. */
  readonly reason: string;
  /** Epoch ms. */
  readonly nextTryMs: number;
}

/** One account's row: its projects and its own request budget. */
export interface AccountStatus {
  readonly name: string;
  /** The API address without credentials, query or fragment. */
  readonly url: string;
  readonly projects: number;
  /** Factor its intervals are stretched by to fit its rate limit (1: they fit). */
  readonly stretch: number;
  /** Seconds between polls of its projects with open, recent and no operations. */
  readonly intervals: { readonly fast: number; readonly active: number; readonly idle: number };
  /** Requests its limiter would let through at once now. */
  readonly tokens: number;
  /** While the API refuses its key: since when (epoch ms), and what it said. */
  readonly keyRefusal: { readonly sinceMs: number; readonly message: string } | undefined;
  /** While the API answers 404 at its root (its base URL is wrong): since when (epoch ms). */
  readonly wrongBaseUrlSinceMs: number | undefined;
}

/** An account whose project discovery failed since the projects last changed (its list stays). */
export interface DiscoveryError {
  readonly account: string;
  readonly atMs: number;
  readonly message: string;
}

export function accountStatus(a: AccountSource, projects: number, clean: Clean): AccountStatus {
  return {
    name: a.name,
    url: displayUrl(a.url),
    projects,
    stretch: a.scheduler.budget.stretch,
    intervals: {
      fast: a.scheduler.tierIntervalSeconds("fast"),
      active: a.scheduler.tierIntervalSeconds("active"),
      idle: a.scheduler.tierIntervalSeconds("idle"),
    },
    tokens: a.client.limiterStats().tokensRemaining,
    keyRefusal: keyRefusalOf(a, clean),
    wrongBaseUrlSinceMs: a.wrongBaseUrl?.()?.sinceMs,
  };
}

/** An account's key refusal, with the API's message cleaned as every error text is. */
function keyRefusalOf(account: AccountSource, clean: Clean): AccountStatus["keyRefusal"] {
  const refusal = account.keyRefusal();
  return refusal === undefined ? undefined : { ...refusal, message: clean(refusal.message) };
}

/** Each account's failed discovery (as the tracker heard it), its message cleaned. */
export function discoveryErrorsOf(
  failures: ReadonlyMap<string, { readonly atMs: number; readonly error: unknown }>,
  clean: Clean,
): DiscoveryError[] {
  return [...failures].map(([account, failure]) => ({
    account,
    atMs: failure.atMs,
    message: clean(messageOf(failure.error)),
  }));
}
