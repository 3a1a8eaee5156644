/**
 * Readiness as kube-state-metrics means it: ready once the state is loaded and at least one
 * poll has been committed; and, at any time, not while a cause known to stop the exporter's work
 * holds: an account's key refused (401), an account's base URL answering 404 at the API's root,
 * the Postgres state store out of reach (its lease heartbeats fail). The reason names the cause,
 * never a secret; readiness comes back when the cause goes.
 */
import { createRedactor } from "../alerts/sinks/redact.js";
import type { DaemonAccount, DaemonObserver } from "../daemon/index.js";

export interface Readiness {
  /** Subscribe it to the daemon. */
  readonly observer: DaemonObserver;
  /** Why the exporter is not ready, or undefined when it is. */
  reason(): string | undefined;
}

export interface ReadinessSources {
  /** The daemon's accounts (none before it is built). */
  readonly accounts: () => readonly Pick<DaemonAccount, "name" | "keyRefusal" | "wrongBaseUrl">[];
  /** While the state store's lease heartbeats fail: the latest error (Postgres store only). */
  readonly storeFailure: () => { readonly error: unknown } | undefined;
  /** Values never shown in a reason (the state store's user name and password). */
  readonly secrets?: readonly string[];
}

export function readiness(sources: ReadinessSources): Readiness {
  const redact = createRedactor(sources.secrets ?? []);
  let projects = 0;
  let committed = false;
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
    observer: {
      projectsChanged: (ids) => {
        projects = ids.length;
      },
      committed: () => {
        committed = true;
      },
    },
    reason: () => {
      const found = causes();
      if (found.length > 0) return found.join("; ");
      if (projects === 0) return "no project is watched yet";
      if (!committed) return "no poll has completed yet";
      return undefined;
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
