/**
 * Readiness as kube-state-metrics means it: ready once the state is loaded, a project is watched
 * and at least one poll has been committed. A replica that holds no project (its share is zero,
 * or it lost its leases) is not ready. What stops the exporter's work is named, never a secret:
 * an account's key refused (401), an account's base URL answering 404 at the API's root, the
 * Postgres state store out of reach (its lease heartbeats fail). Before the exporter is ready it
 * is the reason it is not; once ready, an outage does not make it unready (that would take it out
 * of its Service's endpoints and stop the scrapes that show the outage), and `/readyz` answers
 * 200 naming the problem.
 */
import { createRedactor } from "../config/index.js";
import type { DaemonAccount, DaemonObserver } from "../daemon/index.js";

/** What readiness learns from the daemon's reports: a project watched, a poll committed. */
export class ReadinessWatch implements DaemonObserver {
  #projects = 0;
  #committed = false;

  projectsChanged(ids: readonly string[]): void {
    this.#projects = ids.length;
  }

  committed(): void {
    this.#committed = true;
  }

  /** Why the daemon's work has not shown yet, or undefined once it has. */
  pending(): string | undefined {
    if (this.#projects === 0) return "no project is watched yet";
    return this.#committed ? undefined : "no poll has completed yet";
  }
}

export interface Readiness {
  /** Why the exporter is not ready, or undefined when it is. */
  reason(): string | undefined;
  /** While it is ready: what stops part of its work now, or undefined. */
  problems(): string | undefined;
}

export interface ReadinessSources {
  /** The daemon's accounts. */
  readonly accounts: () => readonly Pick<DaemonAccount, "name" | "keyRefusal" | "wrongBaseUrl">[];
  /** While the state store's lease heartbeats fail: the latest error (Postgres store only). */
  readonly storeFailure: () => { readonly error: unknown } | undefined;
  /** Values never shown in a reason (the state store's user name and password). */
  readonly secrets?: readonly string[];
}

/** Readiness from what `watch` heard of the daemon and what its parts say now. */
export function readiness(watch: ReadinessWatch, sources: ReadinessSources): Readiness {
  const redact = createRedactor(sources.secrets ?? []);
  const causes = (): string[] => {
    const found: string[] = [];
    const store = sources.storeFailure();
    if (store !== undefined) {
      const why = store.error instanceof Error ? store.error.message : String(store.error);
      found.push(`the state store is unreachable: ${redact(why)}`);
    }
    for (const account of sources.accounts()) {
      if (account.keyRefusal() !== undefined) {
        found.push(`the API key is refused (401) for account ${account.name}`);
      }
      if (account.wrongBaseUrl() !== undefined) {
        found.push(
          `the base URL of account ${account.name} looks wrong (404 at the API root; ` +
            "it should end in /api/v2)",
        );
      }
    }
    return found;
  };
  return {
    reason: () => {
      const pending = watch.pending();
      if (pending === undefined) return undefined;
      const found = causes();
      return found.length > 0 ? found.join("; ") : pending;
    },
    problems: () => {
      if (watch.pending() !== undefined) return undefined;
      const found = causes();
      return found.length > 0 ? found.join("; ") : undefined;
    },
  };
}

/**
 * What a reason must never show of the state store's URL: its user name, its password and its
 * query's values (`sslpassword`), and `PGPASSWORD`.
 */
export function stateStoreSecrets(url: string | undefined, env: NodeJS.ProcessEnv): string[] {
  const secrets = env.PGPASSWORD === undefined ? [] : [env.PGPASSWORD];
  if (url === undefined) return secrets;
  try {
    const parsed = new URL(url);
    for (const piece of [parsed.username, parsed.password]) {
      secrets.push(piece, decodeURIComponent(piece));
    }
    for (const value of parsed.searchParams.values()) secrets.push(value);
  } catch {
    secrets.push(url);
  }
  return secrets.filter((s) => s !== "");
}
