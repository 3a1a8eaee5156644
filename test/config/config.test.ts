import { describe, expect, it } from "vitest";
import { fileWith, problemsOf } from "./support/files.js";
import { ConfigError, loadConfig, parseDuration } from "../../src/config/index.js";

describe("configuration", () => {
  it("parses durations in seconds or with units", () => {
    expect(parseDuration("30")).toBe(30);
    expect(parseDuration("90s")).toBe(90);
    expect(parseDuration("5m")).toBe(300);
    expect(parseDuration("1h30m")).toBe(5400);
    expect(parseDuration("7d")).toBe(604_800);
    expect(parseDuration("250ms")).toBe(0.25);
    expect(parseDuration("5 minutes")).toBeUndefined();
    expect(parseDuration("m5")).toBeUndefined();
  });

  it("fills defaults around the required settings", async () => {
    const config = await loadConfig({
      env: { PGCP_API_KEY: "k", PGCP_PROJECTS: "alpha-1, beta-2" },
    });
    expect(config.projects).toEqual(["alpha-1", "beta-2"]);
    expect(config.api.url).toBe("https://console.neon.tech/api/v2");
    expect(config.api.requestsPerMinute).toBe(700);
    expect(config.poll.interval).toBe(30);
    expect(config.poll.fastInterval).toBe(5);
    expect(config.listen).toBe(":9642");
    expect(config.stuck.actions).toEqual({ start_compute: 120 });
  });

  it("serves the standard metric detail unless told otherwise, and names the levels it takes", async () => {
    const env = { PGCP_API_KEY: "k", PGCP_PROJECTS: "alpha-1" };
    expect((await loadConfig({ env })).metrics.detail).toBe("standard");
    const minimal = await fileWith("metrics:\n  detail: minimal\n");
    expect((await loadConfig({ file: minimal, env })).metrics.detail).toBe("minimal");
    const wrong = await fileWith("metrics:\n  detail: verbose\n");
    const problems = await problemsOf(loadConfig({ file: wrong, env }));
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^metrics\.detail: must be one of minimal, standard, full/);
  });

  it("applies file, then environment, then flags", async () => {
    const file = await fileWith(
      "api:\n  url: http://file.example/api/v2\nprojects: [a-1]\npoll:\n  interval: 1m\n",
    );
    const config = await loadConfig({
      file,
      env: { PGCP_POLL_INTERVAL: "45", PGCP_API_KEY: "from-env" },
      overrides: { poll: { interval: "10s" } },
    });
    expect(config.api.url).toBe("http://file.example/api/v2");
    expect(config.api.key).toBe("from-env");
    expect(config.poll.interval).toBe(10);
    expect(config.projects).toEqual(["a-1"]);
  });

  it("refuses an API key written in the file, whatever the environment holds", async () => {
    const file = await fileWith("api:\n  key: from-file\nprojects: [a-1]\n");
    const problems = await problemsOf(loadConfig({ file, env: { PGCP_API_KEY: "from-env" } }));
    expect(problems).toEqual([
      "api.key: a secret is not read from the file: set PGCP_API_KEY (or PGCP_API_KEY_FILE)",
    ]);
  });

  it("lists every problem by its path", async () => {
    const file = await fileWith(
      "api:\n  url: not a url\nprojects: [Bad_Id]\npoll:\n  interval: -5\n  jitter: 2\nextra: 1\n",
    );
    const problems = await problemsOf(loadConfig({ file, env: {} }));
    expect(problems.some((p) => p.startsWith("api.url:"))).toBe(true);
    expect(problems.some((p) => p.startsWith("api.key:"))).toBe(true);
    expect(problems.some((p) => p.startsWith("projects[0]:"))).toBe(true);
    expect(problems.some((p) => p.startsWith("poll.interval:"))).toBe(true);
    expect(problems.some((p) => p.startsWith("poll.jitter:"))).toBe(true);
    expect(problems.some((p) => p.includes("extra"))).toBe(true);
  });

  it("reports unreadable files and broken YAML without a stack trace", async () => {
    expect(await problemsOf(loadConfig({ file: "/nonexistent/pgcp.yaml", env: {} }))).toEqual([
      "cannot read the configuration file (ENOENT)",
    ]);
    const broken = await fileWith("api: [unclosed\n");
    const problems = await problemsOf(loadConfig({ file: broken, env: {} }));
    expect(problems[0]).toMatch(/^not valid YAML/);
  });

  it("never repeats the API key in an error", async () => {
    const error = await loadConfig({
      env: { PGCP_API_KEY: "secret-key-123", PGCP_PROJECTS: "NOT VALID" },
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).not.toContain("secret-key-123");
  });
});
