/**
 * Global setup of `npm run test:pg`: a Postgres server for the suite.
 *
 * - `PGCP_TEST_POSTGRES_URL` set: that server (CI starts one with `.ci/postgres`).
 * - Otherwise a throwaway cluster (`cluster.ts`): `initdb` into a temporary directory, started
 *   with `pg_ctl` on a random loopback port, stopped and removed at the end.
 * - Neither possible: the suite fails under `CI=true`, and is skipped elsewhere with a message
 *   naming the Debian package (`postgresql`).
 *
 * - A real PgBouncer in transaction pooling mode in front of that server (`pgbouncer.ts`), for
 *   the tests that run the store through a pooler. Without Debian's `pgbouncer` package those
 *   tests fail under `CI=true`, and are skipped elsewhere with a message naming it.
 *
 * Each test file makes its own database on the server (`createTestDatabase`).
 */
import type { TestProject } from "vitest/node";
import { pingPostgres } from "../support/postgres-server.js";
import { POSTGRESQL_HINT, startThrowawayCluster } from "../support/postgres-cluster.js";
import { PGBOUNCER_HINT, startPgBouncer, type PgBouncer } from "../support/pgbouncer.js";

declare module "vitest" {
  export interface ProvidedContext {
    /** A superuser URL of the suite's server; undefined when the suite is skipped. */
    pgAdminUrl: string | undefined;
    /** Why the suite is skipped. */
    pgSkipReason: string | undefined;
    /** The port of a PgBouncer (transaction pooling) in front of the server. */
    pgBouncerPort: number | undefined;
    /** Why the tests through PgBouncer are skipped. */
    pgBouncerSkipReason: string | undefined;
  }
}

const INSTALL_HINT = `${POSTGRESQL_HINT}, or set PGCP_TEST_POSTGRES_URL`;

let stopCluster: (() => Promise<void>) | undefined;
let bouncer: PgBouncer | undefined;

export async function setup(project: TestProject): Promise<void> {
  const ci = process.env.CI === "true";
  let url = process.env.PGCP_TEST_POSTGRES_URL;
  let reason: string | undefined;
  if (url === undefined || url === "") {
    try {
      const started = await startThrowawayCluster();
      url = started.url;
      stopCluster = started.stop;
    } catch (error) {
      url = undefined;
      reason = `no Postgres server for the tests: ${error instanceof Error ? error.message : String(error)}; ${INSTALL_HINT}`;
    }
  }
  if (url !== undefined) {
    try {
      await pingPostgres(url);
    } catch (error) {
      reason = `cannot reach the Postgres server of the tests: ${error instanceof Error ? error.message : String(error)}; ${INSTALL_HINT}`;
      url = undefined;
    }
  }
  if (reason !== undefined) {
    if (ci) throw new Error(reason);
    console.warn(`\n[test:pg] SKIPPED: ${reason}\n`);
  }
  project.provide("pgAdminUrl", url);
  project.provide("pgSkipReason", reason);
  let bouncerReason = reason;
  if (url !== undefined) {
    try {
      bouncer = await startPgBouncer({ serverUrl: url });
      await pingPostgres(bouncer.url);
    } catch (error) {
      await bouncer?.stop();
      bouncer = undefined;
      bouncerReason = `no PgBouncer for the tests: ${error instanceof Error ? error.message : String(error)}; ${PGBOUNCER_HINT}`;
      if (ci) throw new Error(bouncerReason);
      console.warn(`\n[test:pg] tests through PgBouncer SKIPPED: ${bouncerReason}\n`);
    }
  }
  project.provide("pgBouncerPort", bouncer?.port);
  project.provide("pgBouncerSkipReason", bouncerReason);
}

export async function teardown(): Promise<void> {
  await bouncer?.stop();
  await stopCluster?.();
}
