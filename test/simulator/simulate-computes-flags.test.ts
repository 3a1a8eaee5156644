/**
 * `pgcp-exporter simulate --computes`: the flags that host the computes on a PostgreSQL
 * server, and the banner's lines about them (never the URL's password). Starting a simulator
 * with computes needs a server: `test/pg/computes.test.ts`.
 */
import { describe, expect, test } from "vitest";
import { computesBanner, parseSimulateArgs } from "../../src/commands/simulate.js";

const URL = "postgres://postgres:admin-secret@127.0.0.1:5433/postgres";

describe("--computes", () => {
  test("hosts the computes on the URL's server, with the port, database and role given", () => {
    expect(parseSimulateArgs(["--computes", URL], {})).toMatchObject({
      computes: { postgresUrl: URL },
    });
    const options = parseSimulateArgs(
      [
        "--computes",
        URL,
        "--compute-port",
        "6543",
        "--compute-database",
        "appdb",
        "--compute-role",
        "app",
      ],
      { PGCP_SIM_COMPUTE_PASSWORD: "app-secret" },
    );
    expect(options).toMatchObject({
      computes: {
        postgresUrl: URL,
        port: 6543,
        database: "appdb",
        role: { name: "app", password: "app-secret" },
      },
    });
  });

  test("refuses compute flags without --computes, a role without its password, another URL", () => {
    const problem = (argv: string[], env: NodeJS.ProcessEnv = {}): string => {
      try {
        parseSimulateArgs(argv, env);
      } catch (error) {
        return error instanceof Error ? error.message : String(error);
      }
      return "accepted";
    };
    expect(problem(["--compute-port", "5432"])).toMatch(/need --computes/);
    expect(problem(["--computes", URL, "--compute-role", "app"])).toMatch(
      /PGCP_SIM_COMPUTE_PASSWORD/,
    );
    expect(problem(["--computes", "http://127.0.0.1:5432"])).toMatch(/postgres:\/\/ URL/);
    expect(problem(["--computes", URL, "--compute-port", "70000"])).toMatch(/--compute-port/);
  });

  test("the banner says where sessions go and how to reach an endpoint, never the password", () => {
    const lines = computesBanner(41403, {
      postgresUrl: URL,
      role: { name: "app", password: "app-secret" },
    }).join("\n");
    expect(lines).toContain("port 41403");
    expect(lines).toContain("127.0.0.1:5433, database neondb");
    expect(lines).toContain("user=app");
    expect(lines).not.toContain("secret");
  });
});
