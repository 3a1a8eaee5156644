import { configDefaults, defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // The tests that need a Postgres server run with `npm run test:pg` (vitest.pg.config.ts).
    exclude: [...configDefaults.exclude, "test/pg/**"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
  },
});
