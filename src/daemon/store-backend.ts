/**
 * Where the committed states live, and with it how the watched projects are held: the file
 * store is one process's (its directory is locked for the life of the process); the Postgres
 * store is shared by replicas, each holding its share of the projects through leases.
 */
import type { FileStateStore } from "../store/index.js";
import type { PostgresStateStore } from "../store/postgres-store.js";

export type StoreBackend =
  | { readonly kind: "file"; readonly store: FileStateStore }
  | {
      readonly kind: "postgres";
      readonly store: PostgresStateStore;
      /** How long a lease lasts without renewal. */
      readonly leaseMs: number;
      /** This replica's id among those sharing the store. */
      readonly replicaId: string;
    };
