/**
 * Global setup of `npm run test:pg`: a Postgres server for the suite.
 *
 * - `PGCP_TEST_POSTGRES_URL` set: that server (CI starts one with `.ci/postgres`).
 * - Otherwise a throwaway server (`test/support/postgres-server.ts`), stopped and removed at
 *   the end.
 * - Neither possible: the suite fails under `CI=true`, and is skipped elsewhere with a message
 *   naming the Debian package (`postgresql`).
 *
 * Each test file makes its own database on the server (`createTestDatabase`).
 */
import type { TestProject } from "vitest/node";
import { pingPostgres, startThrowawayPostgres } from "../support/postgres-server.js";

declare module "vitest" {
  export interface ProvidedContext {
    /** A superuser URL of the suite's server; undefined when the suite is skipped. */
    pgAdminUrl: string | undefined;
    /** Why the suite is skipped. */
    pgSkipReason: string | undefined;
  }
}

const INSTALL_HINT =
  "install the Debian package postgresql (apt-get install postgresql), or set PGCP_TEST_POSTGRES_URL";

let stopCluster: (() => Promise<void>) | undefined;

export async function setup(project: TestProject): Promise<void> {
  const ci = process.env.CI === "true";
  let url = process.env.PGCP_TEST_POSTGRES_URL;
  let reason: string | undefined;
  if (url === undefined || url === "") {
    try {
      const started = await startThrowawayPostgres();
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
}

export async function teardown(): Promise<void> {
  await stopCluster?.();
}
