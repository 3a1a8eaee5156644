/** `pgcp-exporter simulate`: flags, start, and a clean stop on a signal. */
import { afterEach, describe, expect, test, vi } from "vitest";
import { DEMO_API_KEY, parseSimulateArgs, simulateCommand } from "../../src/commands/simulate.js";

afterEach(() => {
  vi.restoreAllMocks();
});

describe("flags", () => {
  test("defaults: real clock, demo key, no traffic, rate limit on", () => {
    expect(parseSimulateArgs([], {})).toEqual({ apiKey: DEMO_API_KEY, clock: "real" });
  });

  test("every flag", () => {
    const options = parseSimulateArgs(
      [
        "--port=8123",
        "--host",
        "0.0.0.0",
        "--seed",
        "7",
        "--api-key",
        "k1",
        "--clock",
        "manual",
        "--projects",
        "50",
        "--operations-per-minute",
        "600",
        "--availability-checks",
        "0",
        "--no-rate-limit",
      ],
      {},
    );
    expect(options).toEqual({
      apiKey: "k1",
      clock: "manual",
      port: 8123,
      host: "0.0.0.0",
      seed: 7,
      availabilityCheckSeconds: 0,
      rateLimit: false,
      traffic: { projects: 50, operationsPerMinute: 600 },
    });
    expect(parseSimulateArgs(["--traffic"], {})).toMatchObject({ traffic: {} });
  });

  test("organisations and availability checks", () => {
    expect(parseSimulateArgs(["--organizations", "2", "--org-projects", "3"], {})).toMatchObject({
      organizations: [
        { name: "Organization 1", members: ["sim-owner"], apiKeys: ["sim-org-key-1"], projects: 3 },
        { name: "Organization 2", members: ["sim-owner"], apiKeys: ["sim-org-key-2"], projects: 3 },
      ],
    });
    expect(parseSimulateArgs(["--organizations", "1"], {})).toMatchObject({
      organizations: [{ projects: 2 }],
    });
    expect(parseSimulateArgs(["--no-availability-checks"], {})).toMatchObject({
      availabilityCheckSeconds: 0,
    });
    expect(parseSimulateArgs([], {})).not.toHaveProperty("availabilityCheckSeconds");
  });

  test("a faster real clock, and skewed traffic", () => {
    expect(parseSimulateArgs(["--speed", "60", "--skew", "1.1"], {})).toEqual({
      apiKey: DEMO_API_KEY,
      clock: "real",
      speed: 60,
      traffic: { skew: 1.1 },
    });
    expect(() => parseSimulateArgs(["--clock", "manual", "--speed", "2"], {})).toThrow(
      "--speed applies to the real clock only",
    );
    expect(() => parseSimulateArgs(["--skew=9"], {})).toThrow(
      '--skew must be a number from 0 to 4, got "9"',
    );
  });

  test("a history of traffic before the start", () => {
    expect(parseSimulateArgs(["--history", "7200"], {})).toMatchObject({
      traffic: { historySeconds: 7200 },
    });
    expect(() => parseSimulateArgs(["--history", "-1"], {})).toThrow("--history");
  });

  test("the key comes from PGCP_SIM_API_KEY unless given as a flag", () => {
    expect(parseSimulateArgs([], { PGCP_SIM_API_KEY: "from-env" })).toMatchObject({
      apiKey: "from-env",
    });
    expect(parseSimulateArgs(["--api-key", "flag"], { PGCP_SIM_API_KEY: "env" })).toMatchObject({
      apiKey: "flag",
    });
  });

  test("bad flags exit 2 with a message and where to read the usage", async () => {
    const stderr = vi.spyOn(process.stderr, "write").mockReturnValue(true);
    for (const argv of [
      ["--port", "70000"],
      ["--port", "abc"],
      ["--clock", "fast"],
      ["--projects", "0"],
      ["--bogus"],
      ["positional"],
      ["--api-key", " "],
      ["--organizations", "0"],
      ["--org-projects", "2"],
      ["--no-availability-checks", "--availability-checks", "60"],
    ]) {
      expect(await simulateCommand.run(argv), argv.join(" ")).toBe(2);
    }
    const written = stderr.mock.calls.map((c) => String(c[0])).join("");
    expect(written).toContain('--port must be an integer from 0 to 65535, got "70000"');
    expect(written).toContain('--clock must be real or manual, got "fast"');
    expect(written).toContain("pgcp-exporter simulate: unknown option --bogus\n");
    expect(written).toContain("run `pgcp-exporter simulate --help` for usage\n");
    expect(written).not.toContain("usage: pgcp-exporter simulate");
    expect(written).toContain("--org-projects needs --organizations");
    expect(written).toContain("--no-availability-checks contradicts --availability-checks");
  });

  test("--help prints the usage and exits 0", async () => {
    const stdout = vi.spyOn(process.stdout, "write").mockReturnValue(true);
    expect(await simulateCommand.run(["--help"])).toBe(0);
    expect(String(stdout.mock.calls[0]?.[0])).toContain("--no-rate-limit");
  });
});

test("runs until SIGTERM, then stops its server", async () => {
  const stdout = vi.spyOn(process.stdout, "write").mockReturnValue(true);
  const stderr = vi.spyOn(process.stderr, "write").mockReturnValue(true);
  expect(await simulateCommand.run(["--port", "0", "--clock", "manual", "--seed", "3"])).toBe(
    undefined,
  );
  const printed = stdout.mock.calls.map((c) => String(c[0])).join("");
  const apiUrl = /simulator listening: (\S+)/.exec(printed)?.[1] ?? "";
  expect(apiUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/api\/v2$/);
  expect(printed).toContain(`api key: ${DEMO_API_KEY}`);
  const auth = { headers: { Authorization: `Bearer ${DEMO_API_KEY}` } };
  expect((await fetch(`${apiUrl}/projects`, auth)).status).toBe(200);
  process.emit("SIGTERM");
  await vi.waitFor(async () => {
    await expect(fetch(`${apiUrl}/projects`, auth)).rejects.toThrow();
  });
  expect(stderr.mock.calls.map((c) => String(c[0])).join("")).toContain("SIGTERM received");
  expect(process.listenerCount("SIGTERM")).toBe(0);
});

test("prints each account's project ids and a first command to try", async () => {
  const stdout = vi.spyOn(process.stdout, "write").mockReturnValue(true);
  vi.spyOn(process.stderr, "write").mockReturnValue(true);
  const argv = ["--port", "0", "--clock", "manual", "--seed", "3", "--projects", "12"];
  argv.push("--organizations", "1", "--org-projects", "2");
  expect(await simulateCommand.run(argv)).toBe(undefined);
  const printed = stdout.mock.calls.map((c) => String(c[0])).join("");
  try {
    const apiUrl = /simulator listening: (\S+)/.exec(printed)?.[1] ?? "";
    const auth = { headers: { Authorization: `Bearer ${DEMO_API_KEY}` } };
    const listed = (await (await fetch(`${apiUrl}/projects?limit=100`, auth)).json()) as {
      projects: { id: string }[];
    };
    const ids = listed.projects.map((p) => p.id);
    expect(ids).toHaveLength(12);
    expect(printed).toContain(`  personal account: api key ${DEMO_API_KEY} (12 projects)\n`);
    // Ten listed, the rest counted.
    expect(printed).toContain(
      `    ${ids.slice(0, 10).join(", ")}, and 2 more (projects: all watches every one)\n`,
    );
    expect(printed).toMatch(
      / {2}organization org-[a-z0-9-]+: api key sim-org-key-1 \(2 projects\)\n/,
    );
    expect(printed).toContain(`PGCP_API_URL=${apiUrl} PGCP_API_KEY=${DEMO_API_KEY}`);
    expect(printed).toContain(`pgcp-exporter check-config --connect --projects ${ids[0] ?? ""}`);
  } finally {
    process.emit("SIGTERM");
    await vi.waitFor(() => {
      expect(process.listenerCount("SIGTERM")).toBe(0);
    });
  }
});

test("says when an account has no project yet, and never echoes a key of the user's", async () => {
  const stdout = vi.spyOn(process.stdout, "write").mockReturnValue(true);
  vi.spyOn(process.stderr, "write").mockReturnValue(true);
  const argv = ["--port", "0", "--clock", "manual", "--api-key", "my-own-secret-key"];
  expect(await simulateCommand.run(argv)).toBe(undefined);
  const printed = stdout.mock.calls.map((c) => String(c[0])).join("");
  try {
    expect(printed).toContain("  personal account: api key (as configured) (no projects yet)\n");
    expect(printed).toContain("start with --traffic, or POST /api/v2/projects");
    expect(printed).not.toContain("my-own-secret-key");
  } finally {
    process.emit("SIGTERM");
    await vi.waitFor(() => {
      expect(process.listenerCount("SIGTERM")).toBe(0);
    });
  }
});

test("--organizations prints each organisation's id and key, which see its projects", async () => {
  const stdout = vi.spyOn(process.stdout, "write").mockReturnValue(true);
  vi.spyOn(process.stderr, "write").mockReturnValue(true);
  const argv = ["--port", "0", "--clock", "manual", "--seed", "3", "--organizations", "2"];
  expect(await simulateCommand.run(argv)).toBe(undefined);
  const printed = stdout.mock.calls.map((c) => String(c[0])).join("");
  const apiUrl = /simulator listening: (\S+)/.exec(printed)?.[1] ?? "";
  const orgs = [...printed.matchAll(/organization (org-[a-z0-9-]+): api key (\S+)/g)];
  expect(orgs.map((m) => m[2])).toEqual(["sim-org-key-1", "sim-org-key-2"]);
  try {
    for (const [, orgId, key] of orgs) {
      const listed = await fetch(`${apiUrl}/projects`, {
        headers: { Authorization: `Bearer ${key ?? ""}` },
      });
      const body = (await listed.json()) as { projects: { org_id: string }[] };
      expect(body.projects.map((p) => p.org_id)).toEqual([orgId, orgId]);
    }
  } finally {
    process.emit("SIGTERM");
    await vi.waitFor(() => {
      expect(process.listenerCount("SIGTERM")).toBe(0);
    });
  }
});
