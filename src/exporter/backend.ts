/**
 * The exporter's connections to the outside, built from the configuration: each account's API
 * client (its deadlines, size cap and rate limit) and the state store (the file store, or the
 * Postgres store shared with other replicas through leases).
 */
import { createApiClient, type ApiClient, type ApiClientEvents } from "../api/index.js";
import type { Clock } from "../clock.js";
import type { Config, ResolvedAccount } from "../config/index.js";
import type { StoreBackend } from "../daemon/index.js";
import { defaultReplicaId } from "../leases/index.js";
import { errorFields, type Logger } from "../logger.js";
import { FileStateStore, type StateDirLockEvent } from "../store/index.js";

/** An account's client: its key, address and rate limit, with the `api` section's deadlines. */
export function apiClientFor(
  account: ResolvedAccount,
  api: Config["api"],
  events?: ApiClientEvents,
  clock?: Clock,
): ApiClient {
  // `api.timeout` bounds the whole exchange; the silences within it cannot be longer.
  const timeoutMs = api.timeout * 1000;
  return createApiClient({
    apiKey: account.key,
    baseUrl: account.url,
    retry: { maxAttempts: api.maxAttempts },
    timeouts: { headersMs: timeoutMs, bodyMs: timeoutMs, deadlineMs: timeoutMs },
    maxResponseBytes: api.maxResponseBytes,
    rateLimit: {
      requestsPerMinute: account.requestsPerMinute,
      burst: account.burstPerSecond,
      maxConcurrency: account.concurrency,
    },
    ...(events === undefined ? {} : { events }),
    ...(clock === undefined ? {} : { clock }),
  });
}

/**
 * The file store, or the Postgres store (with leases) when `state.url` is set. The Postgres
 * store and its driver (`pg`, 32 modules) are loaded only then.
 */
export async function storeBackendFrom(
  config: Config,
  logger: Logger,
  replicaId: string = defaultReplicaId(),
): Promise<StoreBackend> {
  const { url, schema, leaseDuration, dir } = config.state;
  if (url === undefined) {
    // A stale lock replaced (warn); the lock lost to another process (error: the daemon fails).
    const onLockEvent = (event: StateDirLockEvent) => {
      logger[event.level]({ file: event.file }, event.message);
    };
    return { kind: "file", store: new FileStateStore(dir, { onLockEvent }) };
  }
  const { PostgresStateStore } = await import("../store/postgres-store.js");
  const leaseMs = leaseDuration * 1000;
  const store = new PostgresStateStore({
    url,
    schema,
    archive: config.history === "postgres",
    maxConnections: 6,
    // A paused process cannot hold a lease row's lock for long: the server ends its
    // transaction well before the lease could be claimed by another replica.
    idleInTransactionTimeoutMs: Math.max(500, Math.floor(leaseMs / 3)),
    statementTimeoutMs: Math.max(5_000, leaseMs),
    onPoolError: (error) => {
      logger.warn(errorFields(error), "a Postgres connection failed; it will be replaced");
    },
  });
  return { kind: "postgres", store, leaseMs, replicaId };
}
