/**
 * `npm run test:pg`: the tests that need a Postgres server (`test/pg`), kept out of `npm test`.
 * The global setup uses `PGCP_TEST_POSTGRES_URL`, or starts a throwaway server (see
 * `test/pg/global-setup.ts`). Files run one at a time by default; `npm run test:pg` runs the
 * others two at a time (each test has databases of its own), then the replica test alone: it
 * spawns several daemons and times their leases.
 */
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/pg/**/*.test.ts"],
    // The run's own temporary directory first: its teardown, the check that nothing is left
    // in it, runs last (see vitest.config.ts).
    globalSetup: ["test/support/global-setup.ts", "test/pg/global-setup.ts"],
    setupFiles: ["test/support/setup-file.ts"],
    testTimeout: 120_000,
    hookTimeout: 90_000,
    pool: "forks",
    fileParallelism: false,
  },
});
