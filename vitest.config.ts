import { availableParallelism } from "node:os";
import { configDefaults, defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // The tests that need a Postgres server run with `npm run test:pg` (vitest.pg.config.ts).
    exclude: [...configDefaults.exclude, "test/pg/**"],
    // A temporary directory of the run's own, which must be empty at its end; each file's
    // temporary directories are removed after its own hooks (test/support/temp-dir.ts).
    globalSetup: ["test/support/global-setup.ts"],
    setupFiles: ["test/support/setup-file.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
    // Most files wait on loopback HTTP and simulated time, not on the CPU: two files a core
    // (vitest's default is one fewer than the cores, a single file on a 2-core machine).
    maxWorkers: Math.max(2, availableParallelism() * 2),
  },
});
